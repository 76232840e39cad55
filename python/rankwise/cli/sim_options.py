"""Turning `rankwise sim platform` options into a PlatformSpec."""

from __future__ import annotations

import dataclasses

from rankwise.util.errors import UsageError
from rankwise.traffic.patterns import parse_size
from rankwise.sim.platform import Degraded, PlatformSpec, Varying, default_spec

KINDS = ("node", "uplink")  # the fat tree's; fat-tree3 adds pod, a torus has node, x, y, z, a dragonfly node, local, global
ALL_KINDS = ("node", "uplink", "pod", "x", "y", "z", "local", "global")


def _fields(text: str, option: str, count: tuple[int, ...]) -> list[str]:
    parts = text.split(":")
    if len(parts) not in count or parts[0] not in ALL_KINDS:
        raise UsageError(f"{option} '{text}': expected KIND:INDEX{'' if count == (2,) else ':BW_FACTOR[:LAT_FACTOR]'}, "
                         f"KIND {'|'.join(KINDS)} (torus: node|x|y|z, dragonfly: node|local|global, fat-tree3: node|uplink|pod)")
    return parts


def _number(text: str, option: str, what: str, kind=float):
    from rankwise.util.numbers import bounded_int, finite_float, shown

    try:
        return finite_float(text) if kind is float else bounded_int(text, 2**31 - 1)
    except ValueError as exc:
        raise UsageError(f"{option}: {what} '{shown(text)}' is {exc}") from None


def parse_degrade(text: str) -> Degraded:
    """'node:5:0.25' or 'uplink:2:0.5:3' (bandwidth factor, latency factor)."""
    kind, index, *factors = _fields(text, "--degrade", (3, 4))
    bw = _number(factors[0], "--degrade", "bandwidth factor")
    lat = _number(factors[1], "--degrade", "latency factor") if len(factors) > 1 else 1.0
    return Degraded(kind, _number(index, "--degrade", "index", int), bw_factor=bw, lat_factor=lat)


def parse_vary(text: str) -> Varying:
    kind, index = _fields(text, "--vary", (2,))
    return Varying(kind, _number(index, "--vary", "index", int))


def _check_default_shape(base: PlatformSpec, racks: int, nodes_per_rack: int) -> None:
    """--default's faults name nodes and racks of its 4 x 16 shape: a smaller shape given
    with it is refused for what it is, not as an index out of range."""
    nodes = racks * nodes_per_rack
    lost = [f"node {d.index}" for d in (*base.degraded, *base.varying) if d.kind == "node" and d.index >= nodes]
    lost += [f"rack {c.rack}" for c in base.congested if c.rack >= racks]
    if lost:
        given = " ".join(f"{o} {v}" for o, v, d in (("--racks", racks, base.racks),
                                                    ("--nodes-per-rack", nodes_per_rack, base.nodes_per_rack))
                         if v != d)
        raise UsageError(f"--default has faults on {', '.join(lost)}, which {given} leaves out "
                         f"({nodes} nodes in {racks} racks): drop --default, or keep its {base.racks} racks "
                         f"of {base.nodes_per_rack} nodes")


def spec_from_options(
    default: bool = False,
    racks: int | None = None,
    nodes_per_rack: int | None = None,
    cores: int | None = None,
    degrade: list[str] = (),
    vary: list[str] = (),
    unreachable: list[int] = (),
    oversubscription: float | None = None,
    seed: int | None = None,
    protocol_switch: str | None = None,
    send_overhead: float | None = None,
    recv_overhead: float | None = None,
    topology: str = "fat-tree",
    nics: int | None = None,
) -> PlatformSpec:
    """The default platform (with --default) or a plain one, with the options applied."""
    if topology != "fat-tree":
        given = [name for name, v in (("--default", default or None), ("--racks", racks),
                                      ("--nodes-per-rack", nodes_per_rack)) if v is not None]
        if given:
            raise UsageError(f"{given[0]} describes the fat tree; --topology {topology} sets the shape itself")
    base = default_spec() if default else PlatformSpec()
    if default and (racks is not None or nodes_per_rack is not None):
        _check_default_shape(base, racks or base.racks, nodes_per_rack or base.nodes_per_rack)
    changes = {
        k: v
        for k, v in dict(
            racks=racks, nodes_per_rack=nodes_per_rack, cores=cores,
            oversubscription=oversubscription, seed=seed,
        ).items()
        if v is not None
    }
    if protocol_switch is not None:
        try:
            changes["protocol_switch"] = parse_size(protocol_switch)
        except ValueError:
            raise UsageError(f"--protocol-switch: '{protocol_switch}' is not a size like 64K") from None
    if send_overhead is not None:
        changes["send_overhead"] = send_overhead
    if recv_overhead is not None:
        changes["recv_overhead"] = recv_overhead
    changes["topology"] = topology
    if nics is not None:
        changes["nics"] = nics
    if degrade:
        changes["degraded"] = tuple(base.degraded) + tuple(parse_degrade(d) for d in degrade)
    if vary:
        changes["varying"] = tuple(base.varying) + tuple(parse_vary(v) for v in vary)
    if unreachable:
        changes["unreachable"] = tuple(base.unreachable) + tuple(unreachable)
    return dataclasses.replace(base, **changes)
