"""A simulated cluster as a SimGrid platform, together with the ground truth of every route.

The default cluster is a two-level fat tree: racks of nodes, each node with a private full-duplex
link to its rack's leaf switch, each leaf with one uplink to the spine. The spine layer is
modelled as a single router, so a leaf's uplink stands for the aggregate of all its spine
links (its bandwidth is their sum). One link table is built from a PlatformSpec; the XML
and the ground truth are both derived from that table, never from the spec directly.
Other shapes (`topology`: a torus, a dragonfly) supply their own links and routes
(sim/topology.py); faults, profiles and the ground truth are the same for all.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import Any

import numpy as np

from rankwise.util.errors import RankwiseError, UsageError, file_error
from rankwise.sim.platform_file import MAX_CORES, hostfile_for
from rankwise.sim.topology import FAT_TREE, MAX_NODES, Shape, link_pairs, route_arrays, routes_xml, shape_of
from rankwise.util.files import write_atomic
from rankwise.cluster.hostfile import write_hostfile

__all__ = [
    "Degraded",
    "Congested",
    "Varying",
    "PlatformSpec",
    "Link",
    "GeneratedPlatform",
    "default_spec",
    "build_links",
    "route",
    "generate",
    "load_generated",
    "platform_xml",
    "hostfile_for",
]

NODE, UPLINK = "node", "uplink"
GROUND_TRUTH_FORMAT = "rankwise-ground-truth/1"


# --- the spec -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Degraded:
    """A link made slower: bandwidth * bw_factor, latency * lat_factor."""

    kind: str  # "node" (a node's link, index = node) or "uplink" (index = rack)
    index: int
    bw_factor: float = 1.0
    lat_factor: float = 1.0


@dataclass(frozen=True)
class Congested:
    """A rack uplink whose available bandwidth is reduced (oversubscribed or shared)."""

    rack: int
    bw_factor: float


@dataclass(frozen=True)
class Varying:
    """A link whose bandwidth walks between low and 1.0 times its value, repeating every period."""

    kind: str
    index: int
    period: float = 0.01  # simulated seconds for one cycle of the profile
    steps: int = 10  # constant-bandwidth steps per cycle
    low: float = 0.3  # lowest fraction of the configured bandwidth


@dataclass(frozen=True)
class PlatformSpec:
    """Everything that decides a generated platform; same spec (and seed) => same bytes.

    Frozen: derive variants with dataclasses.replace(spec, field=value).
    """

    racks: int = 4
    nodes_per_rack: int = 16
    cores: int = 4
    host_speed: float = 1e9  # flop/s
    node_bw: float = 12.5e9  # B/s (100 Gb/s)
    node_lat: float = 1e-6  # s
    oversubscription: float = 1.0  # node_bw * nodes_per_rack / uplink bandwidth; 1 = non-blocking
    uplink_lat: float = 2e-6
    loopback_bw: float = 50e9  # between ranks on the same node
    loopback_lat: float = 0.2e-6
    degraded: Sequence[Degraded] = ()
    congested: Sequence[Congested] = ()
    varying: Sequence[Varying] = ()
    unreachable: Sequence[int] = ()  # nodes whose link gets unreachable_lat: they never answer in time
    unreachable_lat: float = 1000.0
    jitter_sigma: float = 0.0  # log-normal spread of every link's bandwidth and latency
    seed: int = 1
    shuffle_racks: bool = False  # deal racks to hosts in a seeded random order, not node // nodes_per_rack
    # An MPI protocol switch (eager -> rendezvous) at this message size in bytes, 0 = none: from
    # it on a message pays rendezvous_lat_factor x the route's latency (the handshake) at full
    # bandwidth; below it, eager_bw_factor x the bandwidth (the copy through buffers).
    protocol_switch: int = 0
    eager_bw_factor: float = 0.5
    rendezvous_lat_factor: float = 3.0
    send_overhead: float = 0.0  # s a blocking MPI_Send keeps its sender busy (SMPI's smpi/os)
    recv_overhead: float = 0.0  # s a received message keeps its receiver busy (SMPI's smpi/or)
    # The network's shape: "fat-tree" (racks, nodes_per_rack), "fat-tree3:P,R,N", "torus:X,Y,Z" or
    # "dragonfly:G,R,N" (these ignore racks and nodes_per_rack; uplink_lat is their router-to-router
    # latency).
    topology: str = FAT_TREE
    nics: int = 1  # NICs per node (torus only)
    # A node's link SHARED between its directions (SimGrid's default: a send and a receive share
    # the NIC), not SPLITDUPLEX; two-level fat tree only.
    shared_nics: bool = False

    def __post_init__(self) -> None:
        # Accept plain tuples/lists/dicts (as written in JSON or by hand) for the nested items.
        for name, cls in (("degraded", Degraded), ("congested", Congested), ("varying", Varying)):
            object.__setattr__(self, name, tuple(_coerce(cls, item, name) for item in getattr(self, name)))
        object.__setattr__(self, "unreachable", tuple(self.unreachable))
        self._validate()

    @property
    def shape(self) -> Shape | None:
        """The torus, dragonfly or three-level fat tree this spec describes; None for the fat tree."""
        return shape_of(self.topology, self.nics, self.seed if self.shuffle_racks else None)

    @property
    def n_nodes(self) -> int:
        shape = self.shape
        return self.racks * self.nodes_per_rack if shape is None else shape.n_nodes

    @property
    def rack_of_node(self) -> np.ndarray:
        """Rack of each node: in blocks of nodes_per_rack, or dealt in a seeded shuffled order
        (host names then say nothing of the topology, as on many real allocations).
        Other shapes: the router each node hangs off (fat-tree3: its leaf, dealt likewise)."""
        if self.shape is not None:
            return self.shape.rack_of_node()
        rack = np.arange(self.n_nodes) // self.nodes_per_rack
        if self.shuffle_racks:
            # Its own stream, so that shuffling leaves every link's random draws unchanged.
            rack = np.random.default_rng([self.seed, 1]).permutation(rack)
        return rack

    @property
    def uplink_bw(self) -> float:
        """Aggregate bandwidth of one leaf's spine links."""
        return self.node_bw * self.nodes_per_rack / self.oversubscription

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> PlatformSpec:
        unknown = sorted(set(d) - {f.name for f in dataclasses.fields(cls)})
        if unknown:
            raise RankwiseError(f"unknown platform spec field(s): {', '.join(unknown)}")
        return cls(**d)

    def _validate(self) -> None:
        for name in ("racks", "nodes_per_rack", "cores", "seed", "nics"):
            _require(_is_int(getattr(self, name)), f"{name} must be an integer")
        _require(isinstance(self.topology, str), "topology must be a string")
        _require(1 <= self.nics <= 16, "nics must be between 1 and 16")
        if self.shape is not None:
            _require(not self.shuffle_racks or self.topology.startswith("fat-tree3:"),
                     f"shuffle_racks applies to the fat trees, not {self.topology}")
            _require(not self.congested, f"congested names fat-tree uplinks; on {self.topology} "
                                         "degrade a link's bandwidth instead")
            _require(self.n_nodes >= 2, f"{self.topology} has fewer than 2 nodes")
        _require(isinstance(self.shuffle_racks, bool), "shuffle_racks must be true or false")
        _require(isinstance(self.shared_nics, bool), "shared_nics must be true or false")
        _require(not self.shared_nics or self.shape is None, f"shared_nics applies to the two-level fat tree, "
                                                             f"not {self.topology}")
        for name in ("racks", "nodes_per_rack", "cores"):
            _require(getattr(self, name) >= 1, f"{name} must be at least 1")
        _require(self.cores <= MAX_CORES, f"cores must be at most {MAX_CORES} per host, got {self.cores}")
        _require(self.n_nodes <= MAX_NODES, f"{self.n_nodes} nodes: at most {MAX_NODES} "
                                            "(every pair gets a route of its own)")
        _require(0 <= self.seed < 2**32, f"seed must be in 0..{2**32 - 1}, got {self.seed}")
        # SimGrid reads a factor's size as a C int; the switch is the first size above it.
        _require(_is_int(self.protocol_switch) and (self.protocol_switch == 0 or 2 <= self.protocol_switch <= 2**30),
                 "protocol_switch must be 0 (none) or a size in bytes between 2 and 1 GiB")
        for f in dataclasses.fields(self):
            if f.type == "float":
                _require(_is_number(getattr(self, f.name)), f"{f.name} must be a number")
        for name in ("host_speed", "node_bw", "loopback_bw", "unreachable_lat"):
            _require(getattr(self, name) > 0, f"{name} must be positive")
        for name in ("oversubscription", "eager_bw_factor", "rendezvous_lat_factor"):
            _require(_factor(getattr(self, name)), f"{name} must be a positive number in "
                                                       f"{FACTOR_RANGE[0]:g}..{FACTOR_RANGE[1]:g}")
        for name in ("send_overhead", "recv_overhead"):
            _require(getattr(self, name) < 1, f"{name} must be below 1 s")
        for name in ("node_lat", "uplink_lat", "loopback_lat", "jitter_sigma", "send_overhead",
                     "recv_overhead"):
            _require(getattr(self, name) >= 0, f"{name} must not be negative")
        for d in self.degraded:
            self._check_link(d.kind, d.index)
            _require(_factor(d.bw_factor) and _factor(d.lat_factor),
                     f"degraded {d.kind} {d.index}: factors must be positive numbers in "
                     f"{FACTOR_RANGE[0]:g}..{FACTOR_RANGE[1]:g}")
        for c in self.congested:
            self._check_link(UPLINK, c.rack)
            _require(_factor(c.bw_factor), f"congested rack {c.rack}: bw_factor must be a positive number in "
                                           f"{FACTOR_RANGE[0]:g}..{FACTOR_RANGE[1]:g}")
        seen = set()
        for v in self.varying:
            self._check_link(v.kind, v.index)
            _require((v.kind, v.index) not in seen, f"varying {v.kind} {v.index} listed twice")
            seen.add((v.kind, v.index))
            _require(_positive(v.period) and _is_int(v.steps) and v.steps >= 2,
                     f"varying {v.kind} {v.index}: need period > 0 and steps >= 2")
            _require(_positive(v.low) and v.low <= 1, f"varying {v.kind} {v.index}: low must be in (0, 1]")
        for u in self.unreachable:
            self._check_link(NODE, u)

    def _check_link(self, kind: str, index: int) -> None:
        shape = self.shape
        if shape is not None:
            kinds = shape.kinds()
            _require(kind in kinds, f"link kind on {self.topology} must be one of {', '.join(kinds)}, got {kind!r}")
            _require(_is_int(index) and shape.valid(kind, index),
                     f"{kind} index {index!r} is not a link of {self.topology}"
                     + (" (along a ring of 2 only coordinate 0 has a link)" if kind in "xyz" else ""))
            return
        _require(kind in (NODE, UPLINK), f"link kind must be '{NODE}' or '{UPLINK}', got {kind!r}")
        count = self.n_nodes if kind == NODE else self.racks
        _require(_is_int(index) and 0 <= index < count, f"{kind} index {index!r} out of range 0..{count - 1}")


def _require(ok: bool, msg: str) -> None:
    if not ok:
        raise UsageError(f"invalid platform spec: {msg}")


def _is_int(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


def _is_number(x: Any) -> bool:
    """A finite number: NaN and infinities reach no platform (they would be written as
    'infBps' and 'Infinity')."""
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool) and math.isfinite(x)


def _positive(x: Any) -> bool:
    return _is_number(x) and x > 0


# A link's bandwidth or latency multiplied by more than a million (or less than a millionth)
# is no network SimGrid's solver handles in finite time, and no real link.
FACTOR_RANGE = (1e-6, 1e6)


def _factor(x: Any) -> bool:
    return _is_number(x) and FACTOR_RANGE[0] <= x <= FACTOR_RANGE[1]


def _coerce(cls, item, what: str):
    """A Degraded/Congested/Varying from itself, a dict or a tuple of its fields."""
    if isinstance(item, cls):
        return item
    try:
        return cls(**item) if isinstance(item, dict) else cls(*item)
    except TypeError:
        fields = ", ".join(f.name for f in dataclasses.fields(cls))
        raise RankwiseError(f"invalid platform spec: {what} item {item!r} is not ({fields})") from None


def default_spec() -> PlatformSpec:
    """64 nodes x 4 cores in 4 racks of 16, with a few known faults spread over the racks."""
    return PlatformSpec(
        racks=4,
        nodes_per_rack=16,
        cores=4,
        degraded=(
            Degraded(NODE, 5, bw_factor=0.25),  # rack 0: a quarter of the bandwidth
            Degraded(NODE, 22, lat_factor=5.0),  # rack 1: five times the latency
            Degraded(NODE, 41, bw_factor=0.5, lat_factor=2.0),  # rack 2: both
        ),
        congested=(Congested(3, 0.25),),  # rack 3 reaches the spine at a quarter of non-blocking
        varying=(Varying(NODE, 30),),  # rack 1: bandwidth varies over time
        seed=1,
    )


# --- the link table -----------------------------------------------------------------------


@dataclass(frozen=True)
class Link:
    """One full-duplex link as written to the XML (same values in both directions)."""

    name: str  # link id in the XML: node-<i> or up-<r>
    kind: str  # "node" or "uplink"
    index: int  # node number or rack number
    nominal_bandwidth: float  # B/s without any alteration (jitter included)
    nominal_latency: float  # s
    bandwidth: float  # B/s configured, in force at time 0
    latency: float  # s configured
    bandwidth_min: float  # lowest bandwidth over time (== bandwidth unless varying)
    reasons: tuple[str, ...] = ()  # why altered: degraded, congested, varying, unreachable
    profile: tuple[tuple[float, float], ...] = ()  # (time s, B/s) steps of one cycle
    period: float = 0.0  # cycle length of the profile

    @property
    def profile_file(self) -> str | None:
        """Path of the bandwidth profile relative to the platform XML."""
        return f"profiles/{self.name}.profile" if self.profile else None


def _slots(spec: PlatformSpec) -> list[tuple[str, int, str, float, float]]:
    """(kind, index, name, bandwidth, latency) of every link before faults and jitter."""
    if spec.shape is not None:
        return [(s.kind, s.index, s.name, s.bandwidth, s.latency)
                for s in spec.shape.slots(spec.node_bw, spec.node_lat, spec.uplink_lat, spec.oversubscription)]
    return ([(NODE, i, f"node-{i}", spec.node_bw, spec.node_lat) for i in range(spec.n_nodes)]
            + [(UPLINK, r, f"up-{r}", spec.uplink_bw, spec.uplink_lat) for r in range(spec.racks)])


def build_links(spec: PlatformSpec) -> list[Link]:
    """The link table: node links 0..n-1 (link i is node i's), then uplinks 0..racks-1 (other
    shapes: their NICs, then their routers' links, sim/topology.py)."""
    rng = np.random.default_rng(spec.seed)
    table = _slots(spec)
    # Faults name a link by (kind, index); a node's NICs share one, so there may be repeats.
    slots = list(dict.fromkeys((kind, index) for kind, index, *_ in table))
    # Always drawn, so that the profile levels drawn next do not depend on jitter_sigma.
    jitter = np.exp(spec.jitter_sigma * rng.standard_normal((len(table), 2)))

    bw_factor = {s: 1.0 for s in slots}
    lat_factor = {s: 1.0 for s in slots}
    reasons: dict[tuple[str, int], list[str]] = {s: [] for s in slots}
    for d in spec.degraded:
        bw_factor[d.kind, d.index] *= d.bw_factor
        lat_factor[d.kind, d.index] *= d.lat_factor
        reasons[d.kind, d.index].append("degraded")
    for c in spec.congested:
        bw_factor[UPLINK, c.rack] *= c.bw_factor
        reasons[UPLINK, c.rack].append("congested")
    for u in spec.unreachable:
        reasons[NODE, u].append("unreachable")
    varying = {(v.kind, v.index): v for v in spec.varying}
    for s in varying:
        reasons[s].append("varying")

    links = []
    for k, (kind, index, name, base_bw, base_lat) in enumerate(table):
        nominal_bw = float(base_bw * jitter[k, 0])
        nominal_lat = float(base_lat * jitter[k, 1])
        bw = nominal_bw * bw_factor[kind, index]
        lat = nominal_lat * lat_factor[kind, index]
        if "unreachable" in reasons[kind, index]:
            lat = spec.unreachable_lat
        profile: tuple[tuple[float, float], ...] = ()
        period = 0.0
        if (kind, index) in varying:
            v = varying[kind, index]
            profile, period = _walk(rng, v, bw), v.period
        links.append(
            Link(
                name=name,
                kind=kind,
                index=index,
                nominal_bandwidth=nominal_bw,
                nominal_latency=nominal_lat,
                bandwidth=bw,
                latency=lat,
                bandwidth_min=min([bw] + [value for _, value in profile]),
                reasons=tuple(reasons[kind, index]),
                profile=profile,
                period=period,
            )
        )
    return links


def _walk(rng: np.random.Generator, v: Varying, bw: float) -> tuple[tuple[float, float], ...]:
    """Random walk of the bandwidth between v.low*bw and bw, starting at bw at time 0."""
    level, levels = 1.0, [1.0]
    for _ in range(v.steps - 1):
        level = float(np.clip(level + rng.normal(0.0, (1.0 - v.low) / 2), v.low, 1.0))
        levels.append(level)
    # Times rounded to 12 digits so that the file shows 0.007, not 0.007000000000000001.
    return tuple((float(f"{v.period * k / v.steps:.12g}"), bw * x) for k, x in enumerate(levels))


def route(spec: PlatformSpec, src: int, dst: int) -> list[int]:
    """Indices into the link table of the links from node src to node dst ([] = loopback)."""
    if src == dst:
        return []
    if spec.shape is not None:
        return [k for k, _ in spec.shape.hops(src, dst)]
    rack = spec.rack_of_node
    rs, rd = rack[src], rack[dst]
    if rs == rd:
        return [src, dst]
    return [src, spec.n_nodes + rs, spec.n_nodes + rd, dst]


def pair_arrays(spec: PlatformSpec, links: Sequence[Link]):
    """alpha, bandwidth, bandwidth_min and affected (n x n) from the link table.

    Vectorised form of route(): a route is node link, [uplink, uplink,] node link.
    """
    n = spec.n_nodes
    lat = np.array([link.latency for link in links])
    bw = np.array([link.bandwidth for link in links])
    bw_min = np.array([link.bandwidth_min for link in links])
    altered = np.array([bool(link.reasons) for link in links])
    if spec.shape is not None:
        alpha, bandwidth, bandwidth_min, affected = route_arrays(spec.shape, lat, bw, bw_min, altered)
        return _with_loopback(spec, alpha, bandwidth, bandwidth_min, affected)
    rack = spec.rack_of_node
    up = n + rack  # link index of each node's rack uplink
    cross = rack[:, None] != rack[None, :]

    alpha = lat[:n, None] + lat[None, :n] + np.where(cross, lat[up][:, None] + lat[up][None, :], 0.0)

    def bottleneck(values: np.ndarray) -> np.ndarray:
        node = np.minimum(values[:n, None], values[None, :n])
        uplinks = np.minimum(values[up][:, None], values[up][None, :])
        return np.where(cross, np.minimum(node, uplinks), node)

    bandwidth, bandwidth_min = bottleneck(bw), bottleneck(bw_min)
    affected = altered[:n, None] | altered[None, :n] | (cross & (altered[up][:, None] | altered[up][None, :]))
    return _with_loopback(spec, alpha, bandwidth, bandwidth_min, affected)


def _with_loopback(spec: PlatformSpec, alpha, bandwidth, bandwidth_min, affected):
    diag = np.arange(spec.n_nodes)
    alpha[diag, diag] = spec.loopback_lat
    bandwidth[diag, diag] = bandwidth_min[diag, diag] = spec.loopback_bw
    affected[diag, diag] = False
    return alpha, bandwidth, bandwidth_min, affected


def _changed(spec: PlatformSpec, links: Sequence[Link], alpha, bandwidth, bandwidth_min) -> np.ndarray:
    """Pairs whose route values differ from the same platform without alterations.

    A subset of the affected pairs: e.g. a congested uplink that still carries more than a
    node link changes nothing for one isolated pair, only for concurrent traffic.
    """
    plain = [
        dataclasses.replace(
            link,
            bandwidth=link.nominal_bandwidth,
            latency=link.nominal_latency,
            bandwidth_min=link.nominal_bandwidth,
            reasons=(),
            profile=(),
        )
        for link in links
    ]
    a0, b0, m0, _ = pair_arrays(spec, plain)
    return (alpha != a0) | (bandwidth != b0) | (bandwidth_min != m0)


# --- the XML ------------------------------------------------------------------------------


def _num(x: float) -> str:
    """Exact decimal form of a float: SimGrid's strtod reads back the same double."""
    x = float(x)
    return str(int(x)) if x.is_integer() and abs(x) < 1e16 else repr(x)


def _factors(spec: PlatformSpec) -> list[tuple[str, str]]:
    """SMPI's per-size factors and send and receive overheads. A factor "T:v" applies to sizes above T (SimGrid
    3.32 FactorSet), so the switch's chunk starts at protocol_switch - 1; empty messages (the
    probe's acknowledgements) keep factor 1."""
    if spec.protocol_switch:
        last_eager = spec.protocol_switch - 1
        # CM02 ignores per-size factors: smpirun_command passes this model on (sim/smpi.py).
        factors = [("network/model", "SMPI"),
                   ("smpi/bw-factor", f"0:{_num(spec.eager_bw_factor)};{last_eager}:1"),
                   ("smpi/lat-factor", f"0:1;{last_eager}:{_num(spec.rendezvous_lat_factor)}")]
    else:
        factors = [("smpi/bw-factor", "0:1"), ("smpi/lat-factor", "0:1")]
    if spec.send_overhead:
        # "size:constant:per-byte": every non-empty blocking send costs send_overhead.
        factors.append(("smpi/os", f"0:{_num(spec.send_overhead)}:0"))
    if spec.recv_overhead:
        # every received message costs its receiver recv_overhead once it has arrived
        factors.append(("smpi/or", f"0:{_num(spec.recv_overhead)}:0"))
    return factors


def _config(spec: PlatformSpec) -> list[tuple[str, str]]:
    """Simulation options carried by the platform itself (all checked to be honoured by smpirun)."""
    return [
        # No reverse-direction share of each flow: a one-way transfer sees only its own links.
        ("network/crosstraffic", "0"),
        # smpirun forces network/model:SMPI on its command line (which wins over this file), so
        # neutralise SMPI's message-size factors to get plain CM02: time = alpha + size/bandwidth.
        *_factors(spec),
        # The TCP window bound gamma/(2*latency) would cap long-latency routes below link speed.
        ("network/TCP-gamma", _num(1e18)),
        # Ranks on the same host talk through SimGrid's implicit loopback link.
        ("network/loopback-lat", _num(spec.loopback_lat)),
        ("network/loopback-bw", _num(spec.loopback_bw)),
    ]


def platform_xml(spec: PlatformSpec, links: Sequence[Link]) -> str:
    """SimGrid 4.1 platform: one flat Dijkstra zone with hosts, leaf routers, the spine and links
    (other shapes: _routed_xml)."""
    if spec.shape is not None:
        return _routed_xml(spec, spec.shape, links)
    n, npr = spec.n_nodes, spec.nodes_per_rack
    rack = spec.rack_of_node
    out = [
        "<?xml version='1.0'?>",
        '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
        '<platform version="4.1">',
        f"  <!-- rankwise fat tree: {spec.racks} racks x {npr} nodes, seed {spec.seed}. The spine layer is one",
        "       router; each up-<r> link is the aggregate of leaf r's spine links. -->",
        '  <config id="rankwise">',
    ]
    out += [f'    <prop id="{key}" value="{value}"/>' for key, value in _config(spec)]
    out += ["  </config>", '  <zone id="rankwise" routing="DijkstraCache">']
    speed = _num(spec.host_speed)
    out += [f'    <host id="node-{i}" speed="{speed}f" core="{spec.cores}"/>' for i in range(n)]
    out += [f'    <router id="leaf-{r}"/>' for r in range(spec.racks)]
    out.append('    <router id="spine"/>')
    out += _link_lines(links, shared_nodes=spec.shared_nics)
    # Routes are given upward only; the symmetrical route uses the DOWN half of each link (a
    # SHARED link has one).
    way = "" if spec.shared_nics else ' direction="UP"'
    for i in range(n):
        out.append(
            f'    <route src="node-{i}" dst="leaf-{rack[i]}"><link_ctn id="node-{i}"{way}/></route>'
        )
    for r in range(spec.racks):
        out.append(f'    <route src="leaf-{r}" dst="spine"><link_ctn id="up-{r}" direction="UP"/></route>')
    out += ["  </zone>", "</platform>", ""]
    return "\n".join(out)


def _link_lines(links: Sequence[Link], shared_nodes: bool = False) -> list[str]:
    out = []
    for link in links:
        attrs = f'id="{link.name}" bandwidth="{_num(link.bandwidth)}Bps" latency="{_num(link.latency)}s"'
        if link.profile_file:
            attrs += f' bandwidth_file="{link.profile_file}"'
        policy = "SHARED" if shared_nodes and link.kind == "node" else "SPLITDUPLEX"
        out.append(f'    <link {attrs} sharing_policy="{policy}"/>')
    return out


def _routed_xml(spec: PlatformSpec, shape: Shape, links: Sequence[Link]) -> str:
    """One `Full` zone: hosts, links and an explicit route for every ordered pair of hosts (no
    router elements: a route lists the links it crosses, SimGrid needs nothing else)."""
    out = [
        "<?xml version='1.0'?>",
        '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
        '<platform version="4.1">',
        f"  <!-- rankwise {shape.label}, {spec.nics} NIC(s) per node, seed {spec.seed}; routes written out -->",
        '  <config id="rankwise">',
    ]
    out += [f'    <prop id="{key}" value="{value}"/>' for key, value in _config(spec)]
    out += ["  </config>", '  <zone id="rankwise" routing="Full">']
    speed = _num(spec.host_speed)
    out += [f'    <host id="node-{i}" speed="{speed}f" core="{spec.cores}"/>' for i in range(spec.n_nodes)]
    out += _link_lines(links)
    out += routes_xml(shape, [link.name for link in links])
    out += ["  </zone>", "</platform>", ""]
    return "\n".join(out)


def _profile_text(link: Link) -> str:
    """SimGrid bandwidth profile: 'time B/s' lines, repeated every link.period seconds."""
    lines = [f"# bandwidth of link {link.name} in B/s, one cycle of {_num(link.period)} s"]
    lines += [f"{_num(t)} {_num(value)}" for t, value in link.profile]
    # LOOPAFTER counts from the last event, so the next cycle starts exactly at `period`.
    lines.append(f"LOOPAFTER {float(f'{link.period - link.profile[-1][0]:.12g}')!r}")
    return "\n".join(lines) + "\n"


# --- generation and ground truth ----------------------------------------------------------


@dataclass
class GeneratedPlatform:
    """Files of a generated platform and its ground truth as arrays (n x n, node order)."""

    out_dir: Path
    platform_xml: Path
    hostfile: Path
    ground_truth: Path
    profiles: list[Path]
    spec: PlatformSpec
    links: list[Link] = field(repr=False)
    nodes: list[str] = field(repr=False)
    cores: np.ndarray = field(repr=False)  # per node
    rack_of_node: np.ndarray = field(repr=False)
    alpha: np.ndarray = field(repr=False)  # s, one-way route latency; diagonal = loopback
    bandwidth: np.ndarray = field(repr=False)  # B/s, route bottleneck at time 0
    bandwidth_min: np.ndarray = field(repr=False)  # B/s, bottleneck with varying links at their lowest
    affected: np.ndarray = field(repr=False)  # bool: the route holds an altered link
    changed: np.ndarray = field(repr=False)  # bool: an isolated ping-pong sees other values than unaltered

    @property
    def affected_pairs(self) -> list[tuple[int, int]]:
        return _pairs(self.affected)

    @property
    def changed_pairs(self) -> list[tuple[int, int]]:
        return _pairs(self.changed)

    @property
    def altered_links(self) -> list[Link]:
        return [link for link in self.links if link.reasons]


def generate(spec: PlatformSpec, out_dir: str | PathLike) -> GeneratedPlatform:
    """Write platform.xml, profiles/*.profile, hostfile and ground_truth.json into out_dir.

    Profiles are referenced relative to the XML. SimGrid looks a relative profile up in its
    'path' option (default: the current directory) first and then in the XML's directory, so a
    run from any directory finds them, unless the cwd has its own profiles/<same name>: run
    smpirun with out_dir as its working directory to rule that out.
    """
    out = Path(out_dir)
    links = build_links(spec)
    alpha, bandwidth, bandwidth_min, affected = pair_arrays(spec, links)
    changed = _changed(spec, links, alpha, bandwidth, bandwidth_min)
    nodes = [f"node-{i}" for i in range(spec.n_nodes)]

    profiles_dir = out / "profiles"
    profiles = []
    for link in links:
        if link.profile_file:
            path = out / link.profile_file
            write_atomic(path, _profile_text(link))
            profiles.append(path)
    if profiles_dir.is_dir():  # drop profiles of an earlier generation into the same directory
        for stale in profiles_dir.glob("*.profile"):
            if stale not in profiles:
                stale.unlink()
    write_atomic(out / "platform.xml", platform_xml(spec, links))
    write_hostfile(out / "hostfile", nodes)

    gp = GeneratedPlatform(
        out_dir=out,
        platform_xml=out / "platform.xml",
        hostfile=out / "hostfile",
        ground_truth=out / "ground_truth.json",
        profiles=profiles,
        spec=spec,
        links=links,
        nodes=nodes,
        cores=np.full(spec.n_nodes, spec.cores),
        rack_of_node=spec.rack_of_node,
        alpha=alpha,
        bandwidth=bandwidth,
        bandwidth_min=bandwidth_min,
        affected=affected,
        changed=changed,
    )
    # Written last: its presence means the directory is complete.
    write_atomic(gp.ground_truth, _ground_truth_json(gp))
    return gp


def _link_dict(link: Link) -> dict[str, Any]:
    d: dict[str, Any] = {
        "name": link.name,
        "kind": link.kind,
        "index": link.index,
        "reasons": list(link.reasons),
        "nominal": {"bandwidth": link.nominal_bandwidth, "latency": link.nominal_latency},
        "configured": {"bandwidth": link.bandwidth, "latency": link.latency, "bandwidth_min": link.bandwidth_min},
    }
    if link.profile:
        d["profile"] = {
            "file": link.profile_file,
            "period": link.period,
            "steps": [[t, value] for t, value in link.profile],
        }
    return d


def _ground_truth_json(gp: GeneratedPlatform) -> str:
    """JSON with one top-level key per line and one matrix row per line (diff-friendly)."""
    spec = gp.spec
    head = {
        "format": GROUND_TRUTH_FORMAT,
        "units": {"alpha": "s", "bandwidth": "B/s", "latency": "s"},
        "nodes": gp.nodes,
        "cores": gp.cores.tolist(),
        "rack_of_node": gp.rack_of_node.tolist(),
        "loopback": {"bandwidth": spec.loopback_bw, "latency": spec.loopback_lat},
    }
    if spec.shape is not None:
        head["topology"] = spec.topology
        head["coords"] = spec.shape.coords()
    parts = [f"{json.dumps(k)}: {json.dumps(v)}" for k, v in head.items()]
    for key in ("alpha", "bandwidth"):  # bandwidth_min follows from "links"; 1M-entry matrices cost time
        rows = ",\n".join(json.dumps(row) for row in getattr(gp, key).tolist())
        parts.append(f"{json.dumps(key)}: [\n{rows}\n]")
    dicts = [_link_dict(link) for link in gp.links]
    if spec.shape is not None:  # which pairs share each link, for a predictor (sim/topology.py)
        for d, pairs in zip(dicts, link_pairs(spec.shape, len(gp.links))):
            d["pairs"] = pairs
    parts.append('"links": [\n' + ",\n".join(json.dumps(d) for d in dicts) + "\n]")
    parts.append(
        '"altered_links": [\n' + ",\n".join(json.dumps(_link_dict(link)) for link in gp.altered_links) + "\n]"
    )
    parts.append('"affected_pairs": ' + json.dumps([list(p) for p in gp.affected_pairs]))
    parts.append('"changed_pairs": ' + json.dumps([list(p) for p in gp.changed_pairs]))
    parts.append('"spec": ' + json.dumps(spec.to_dict()))
    return "{\n" + ",\n".join(parts) + "\n}\n"


def read_ground_truth(out_dir: str | PathLike, fmt: str, what: str = "") -> tuple[Path, dict]:
    """A generated platform's ground_truth.json, checked to be of format fmt (one-line errors
    naming the file; `what` says what the format is for)."""
    path = Path(out_dir) / "ground_truth.json"
    try:
        gt = json.loads(path.read_text())
    except OSError as e:
        raise file_error(path, None, f"cannot read ground truth: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise file_error(path, e.lineno, f"invalid JSON: {e.msg}") from None
    if not isinstance(gt, dict) or gt.get("format") != fmt:
        raise file_error(path, None, f"not a {fmt} file{what}")
    return path, gt


def load_generated(out_dir: str | PathLike) -> GeneratedPlatform:
    """Read back what generate() wrote (from ground_truth.json)."""
    out = Path(out_dir)
    path, gt = read_ground_truth(out, GROUND_TRUTH_FORMAT)
    try:
        return _generated_from_dict(out, path, gt)
    except KeyError as e:  # a hand-edited file: say what is wrong, not where Python tripped
        raise file_error(path, None, f"malformed ground truth: no {e.args[0]!r} entry") from None
    except (RankwiseError, TypeError, ValueError, AttributeError, IndexError) as e:
        raise file_error(path, None, f"malformed ground truth: {e}") from None


def _array(gt: dict[str, Any], key: str, shape: tuple[int, ...], dtype: type) -> np.ndarray:
    a = np.array(gt[key], dtype=dtype)
    if a.shape != shape:
        raise ValueError(f"{key!r} is not {' x '.join(map(str, shape))} numbers")
    return a


def _generated_from_dict(out: Path, path: Path, gt: dict[str, Any]) -> GeneratedPlatform:
    n = len(gt["nodes"])
    links = [_link_from_dict(d) for d in gt["links"]]
    spec = PlatformSpec.from_dict(gt["spec"])
    bandwidth_min = pair_arrays(spec, links)[2]
    return GeneratedPlatform(
        out_dir=out,
        platform_xml=out / "platform.xml",
        hostfile=out / "hostfile",
        ground_truth=path,
        profiles=[out / link.profile_file for link in links if link.profile_file],
        spec=spec,
        links=links,
        nodes=list(gt["nodes"]),
        cores=_array(gt, "cores", (n,), int),
        rack_of_node=_array(gt, "rack_of_node", (n,), int),
        alpha=_array(gt, "alpha", (n, n), float),
        bandwidth=_array(gt, "bandwidth", (n, n), float),
        bandwidth_min=bandwidth_min,
        affected=_pairs_matrix(len(gt["nodes"]), gt["affected_pairs"]),
        changed=_pairs_matrix(len(gt["nodes"]), gt["changed_pairs"]),
    )


def _link_from_dict(d: dict[str, Any]) -> Link:
    profile = d.get("profile", {})
    return Link(
        name=d["name"],
        kind=d["kind"],
        index=d["index"],
        nominal_bandwidth=d["nominal"]["bandwidth"],
        nominal_latency=d["nominal"]["latency"],
        bandwidth=d["configured"]["bandwidth"],
        latency=d["configured"]["latency"],
        bandwidth_min=d["configured"]["bandwidth_min"],
        reasons=tuple(d["reasons"]),
        profile=tuple((t, v) for t, v in profile.get("steps", [])),
        period=profile.get("period", 0.0),
    )


def _pairs(m: np.ndarray) -> list[tuple[int, int]]:
    return [(int(i), int(j)) for i, j in zip(*np.nonzero(m))]


def _pairs_matrix(n: int, pairs: Iterable[Sequence[int]]) -> np.ndarray:
    m = np.zeros((n, n), dtype=bool)
    for i, j in pairs:
        m[i, j] = True
    return m
