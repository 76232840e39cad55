"""The faults of a generated platform, each named at the element it is on.

A platform's ground truth lists its altered links (sim/platform.py); a model names faults as a
slow or varying NIC, or a slow or varying shared link (an uplink, a router-to-router link). This
module turns the first into the second's terms, so that a probed model can be scored against it
(sim/fidelity.py):

- where: "nic" (a node's own link) or "shared" (any other link: pairs of several nodes cross it);
- what: "slow" (degraded or congested: a lower bandwidth, a higher latency, or both) or
  "varying" (its bandwidth walks over time); a link that is both is two faults;
- crossing: which ordered node pairs' routes hold the link (`crossing_pairs`);
- lone_pair: whether an isolated ping-pong can see it at all (a congested uplink that still
  carries more than one NIC changes nothing for one pair, only for concurrent flows; a varying
  link only when its walk goes below the route's other links).

`faults.json` (format rankwise-faults/1) is written beside ground_truth.json.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from os import PathLike
from pathlib import Path

import numpy as np

from rankwise.util.errors import file_error
from rankwise.util.files import write_atomic
from rankwise.sim.platform import GeneratedPlatform, route

__all__ = ["Fault", "FAULTS_FORMAT", "crossing_pairs", "faults_of", "write_faults", "read_faults"]

FAULTS_FORMAT = "rankwise-faults/1"
NIC, SHARED = "nic", "shared"
SLOW, VARYING = "slow", "varying"


@dataclass(frozen=True)
class Fault:
    what: str  # "slow" or "varying"
    where: str  # "nic" or "shared"
    link: str  # the link's name in platform.xml (node-5, up-2, global-0-3, x-7)
    kind: str  # its kind in the spec (node, uplink, local, global, x, y, z)
    index: int  # its index in the spec (node number, rack, ...)
    bw_factor: float  # configured / nominal bandwidth (lowest / nominal for a varying link)
    lat_factor: float  # configured / nominal latency
    lone_pair: bool  # an isolated ping-pong of some pair sees it
    nodes: tuple[int, ...] = ()  # the nodes behind it: a NIC's node, a fat-tree uplink's rack or pod

    @property
    def label(self) -> str:
        return f"{self.what} {self.where} {self.link}"


def crossing_pairs(gp: GeneratedPlatform) -> np.ndarray:
    """on[k, i, j]: the route from node i to node j holds link k of gp.links."""
    n = len(gp.nodes)
    on = np.zeros((len(gp.links), n, n), dtype=bool)
    for i in range(n):
        for j in range(n):
            if i != j:
                on[route(gp.spec, i, j), i, j] = True
    return on


def faults_of(gp: GeneratedPlatform, on: np.ndarray | None = None) -> list[Fault]:
    """Every fault of gp, in link-table order (a node's several NICs are one fault)."""
    on = crossing_pairs(gp) if on is None else on
    nominal_bw = np.array([link.nominal_bandwidth for link in gp.links])
    out: dict[tuple[str, str, int], Fault] = {}
    for k, link in enumerate(gp.links):
        where = NIC if link.kind == "node" else SHARED
        if where == NIC:
            nodes: tuple[int, ...] = (link.index,)
        elif gp.spec.shape is None:  # a fat-tree uplink: its rack
            nodes = tuple(int(i) for i in np.flatnonzero(gp.rack_of_node == link.index))
        elif hasattr(gp.spec.shape, "behind"):  # fat-tree3: a rack's or a pod's
            nodes = gp.spec.shape.behind(link.kind, link.index)
        else:  # a torus or dragonfly link has no nodes of its own behind it
            nodes = ()
        for what in (SLOW, VARYING):
            if what == SLOW and not {"degraded", "congested"} & set(link.reasons):
                continue
            if what == VARYING and "varying" not in link.reasons:
                continue
            key = (what, link.kind, link.index)
            if key in out:
                continue
            bw = link.bandwidth_min if what == VARYING else link.bandwidth
            out[key] = Fault(
                what=what, where=where, link=link.name, kind=link.kind, index=int(link.index),
                bw_factor=float(bw / link.nominal_bandwidth),
                lat_factor=float(link.latency / link.nominal_latency) if link.nominal_latency else 1.0,
                lone_pair=_lone_pair(gp, on, nominal_bw, k, what), nodes=nodes)
    return list(out.values())


def _lone_pair(gp: GeneratedPlatform, on: np.ndarray, nominal_bw: np.ndarray, k: int, what: str) -> bool:
    """Whether some pair crossing link k sees it alone: its latency, or its bandwidth (at time 0,
    or at its lowest for a varying link) below the rest of the route's bottleneck. A varying link
    whose profile never falls below its time-0 bandwidth (a walk drawn flat) varies for no one."""
    link = gp.links[k]
    if what == SLOW and link.latency != link.nominal_latency:
        return bool(on[k].any())
    if what == VARYING and link.bandwidth_min >= link.bandwidth:
        return False
    own = link.bandwidth_min if what == VARYING else link.bandwidth
    for i, j in zip(*np.nonzero(on[k])):
        others = [m for m in np.flatnonzero(on[:, i, j]) if m != k]
        if own < min(nominal_bw[others], default=np.inf):
            return True
    return False


def write_faults(out_dir: str | PathLike, faults: list[Fault]) -> Path:
    path = Path(out_dir) / "faults.json"
    items = ",\n".join(json.dumps(asdict(f)) for f in faults)
    write_atomic(path, f'{{"format": "{FAULTS_FORMAT}",\n"faults": [\n{items}\n]}}\n')
    return path


def read_faults(out_dir: str | PathLike) -> list[Fault]:
    path = Path(out_dir) / "faults.json"
    try:
        d = json.loads(path.read_text())
        if not isinstance(d, dict) or d.get("format") != FAULTS_FORMAT:
            raise file_error(path, None, f"not a {FAULTS_FORMAT} file")
        return [Fault(**{**f, "nodes": tuple(f.get("nodes", ()))}) for f in d["faults"]]
    except OSError as e:
        raise file_error(path, None, f"cannot read faults: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise file_error(path, e.lineno, f"invalid JSON: {e.msg}") from None
    except (KeyError, TypeError) as e:
        raise file_error(path, None, f"malformed faults: {e}") from None
