"""Random platforms drawn from a seed, for the model-fidelity study (issue 21).

The tests' platforms are fixed and few, so a probe or an analysis can end up tuned to them. Here
a seed draws a whole PlatformSpec: the shape (a two- or three-level fat tree, a dragonfly or a
3-D torus of about the number of nodes asked for), how the racks are dealt to hosts, how
oversubscribed the uplinks are, and the faults: degraded NICs (bandwidth, latency or both, by varied factors), slow
shared links (an uplink or a router-to-router link at a fraction of its bandwidth and a multiple
of its latency), a congested uplink (bandwidth alone, seen only by concurrent flows), and a link
whose bandwidth walks up and down over time (SimGrid profiles, `--vary`). Same seed and nodes =>
same spec => same files.

`write_random_platform` generates the platform (sim/platform.py) and writes `faults.json` beside
its ground truth: every fault with the element it is on (sim/faults.py).

Not drawn yet: faults that change during the probe (sim/profiles.py's --degrade-at), several NICs
per node, MPI protocol switches and overheads.
"""

from __future__ import annotations

from dataclasses import replace
from os import PathLike

import numpy as np

from rankwise.util.errors import UsageError
from rankwise.sim.faults import Fault, faults_of, write_faults
from rankwise.sim.platform import NODE, UPLINK, Congested, Degraded, GeneratedPlatform, PlatformSpec, Varying, generate
from rankwise.sim.topology import shape_of

__all__ = ["KINDS", "CYCLE", "random_platform", "write_random_platform"]

# fat-tree-shared: a two-level fat tree whose node links carry both directions at one rate (SimGrid
# SHARED); asked for by name only, so that the seeds of the cycle keep their platforms.
KINDS = ("fat-tree", "fat-tree3", "dragonfly", "torus", "fat-tree-shared")
# The kind seed s takes: CYCLE[s % 6], fat trees (two- and three-level) twice as often as the others.
CYCLE = ("fat-tree", "fat-tree3", "dragonfly", "fat-tree", "fat-tree3", "torus")
MIN_NODES, MAX_NODES = 8, 256
CORES = 2  # enough for 1 or 2 ranks per node

# Factor ranges: weak enough to be faults a user cares about, strong enough that a lone pair or a
# concurrent round sees them (a NIC at x1.5 latency hides in a 6 us cross-rack pair's noise).
NIC_BW = (1 / 8, 1 / 2)
NIC_LAT = (3.0, 8.0)
SHARED_BW = (0.2, 0.5)
SHARED_LAT = (2.0, 4.0)
CONGESTED_NODES = (1.0, 2.0)  # a congested uplink carries this many node links' worth


def random_platform(seed: int, nodes: int, kind: str | None = None) -> PlatformSpec:
    """The spec seed draws for about `nodes` nodes (the nearest size the shape allows, at least
    8). kind: one of KINDS; default CYCLE[seed % 6]."""
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0:
        raise UsageError(f"random platform: seed must be a non-negative integer, got {seed!r}")
    if not isinstance(nodes, (int, np.integer)) or not MIN_NODES <= nodes <= MAX_NODES:
        raise UsageError(f"random platform: nodes must be an integer in {MIN_NODES}..{MAX_NODES}, got {nodes!r}")
    kind = CYCLE[seed % len(CYCLE)] if kind is None else kind
    draw = {"fat-tree": _fat_tree, "fat-tree3": _fat_tree3, "dragonfly": _dragonfly, "torus": _torus,
            "fat-tree-shared": _fat_tree_shared}.get(kind)
    if draw is None:
        raise UsageError(f"random platform: kind must be one of {', '.join(KINDS)}, got {kind!r}")
    # Its own stream per (seed, nodes, kind); the spec's seed drives the link jitter and walks. A
    # fat-tree-shared seed draws its fat-tree twin: the same tree, node links shared.
    rng = np.random.default_rng([seed, nodes, KINDS.index("fat-tree" if kind == "fat-tree-shared" else kind)])
    return draw(rng, int(seed), int(nodes))


def write_random_platform(seed: int, nodes: int, out_dir: str | PathLike,
                          kind: str | None = None) -> tuple[GeneratedPlatform, list[Fault]]:
    """Generate random_platform(seed, nodes, kind) into out_dir, then faults.json beside it."""
    gp = generate(random_platform(seed, nodes, kind), out_dir)
    faults = faults_of(gp)
    write_faults(gp.out_dir, faults)
    return gp, faults


# --- the shapes ---------------------------------------------------------------------------


def _nearest(rng: np.random.Generator, nodes: int, dims: list[tuple[int, ...]]) -> tuple[int, ...]:
    """One of the dimension tuples whose product is nearest to nodes (ties drawn)."""
    gap = np.array([abs(int(np.prod(d)) - nodes) for d in dims])
    best = np.flatnonzero(gap == gap.min())
    return dims[int(rng.choice(best))]


def _common(rng: np.random.Generator) -> dict:
    """What every shape draws alike: a little spread between links of the same kind."""
    return dict(cores=CORES, jitter_sigma=float(rng.uniform(0.0, 0.03)))


def _fat_tree(rng: np.random.Generator, seed: int, nodes: int) -> PlatformSpec:
    dims = [(r, p) for r in range(2, 13) for p in range(4, 17)]
    racks, per_rack = _nearest(rng, nodes, dims)
    base = PlatformSpec(racks=racks, nodes_per_rack=per_rack, oversubscription=_oversubscription(rng),
                        shuffle_racks=bool(rng.random() < 0.8), seed=seed, **_common(rng))
    slow, congested, varying = _rack_faults(rng, racks, base.uplink_bw, base.node_bw)
    degraded = slow + _nics(rng, base.n_nodes)
    varying = varying or _varying_node(rng, base.n_nodes, degraded)
    return replace(base, degraded=tuple(degraded), congested=tuple(Congested(r, w) for r, w in congested),
                   varying=tuple(varying))


def _fat_tree_shared(rng: np.random.Generator, seed: int, nodes: int) -> PlatformSpec:
    return replace(_fat_tree(rng, seed, nodes), shared_nics=True)


def _fat_tree3(rng: np.random.Generator, seed: int, nodes: int) -> PlatformSpec:
    dims = [(p, r, k) for p in range(2, 5) for r in range(2, 5) for k in range(4, 13)]
    pods, racks, per_rack = _nearest(rng, nodes, dims)
    base = PlatformSpec(topology=f"fat-tree3:{pods},{racks},{per_rack}", oversubscription=_oversubscription(rng),
                        shuffle_racks=bool(rng.random() < 0.8), seed=seed, **_common(rng))
    uplink_bw = base.node_bw * per_rack / base.oversubscription
    slow, congested, varying = _rack_faults(rng, pods * racks, uplink_bw, base.node_bw)
    # A congested leaf uplink: SimGrid's shapes have no Congested, a degraded bandwidth is the same.
    slow += [Degraded(UPLINK, r, w, 1.0) for r, w in congested]
    if pods >= 3 and rng.random() < 0.4:  # with two pods a slow pod uplink cannot be told from the other
        slow.append(Degraded("pod", int(rng.integers(pods)), *_shared_factors(rng)))
    degraded = slow + _nics(rng, base.n_nodes)
    varying = varying or _varying_node(rng, base.n_nodes, degraded)
    return replace(base, degraded=tuple(degraded), varying=tuple(varying))


def _oversubscription(rng: np.random.Generator) -> float:
    return float(rng.choice([1.0, 1.0, 2.0, 3.0, 4.0]))


def _rack_faults(rng: np.random.Generator, racks: int, uplink_bw: float, node_bw: float):
    """Leaf uplinks: slow ones (Degraded), a congested one ((rack, bw_factor)) and maybe a varying
    one (Varying, or [] when a node's link is to vary instead). At most half the racks get a
    fault, so that healthy racks remain to compare with."""
    faulty = rng.permutation(racks)[: int(rng.integers(0, max(racks // 2, 1) + 1))]
    slow_up = faulty[: int(rng.integers(0, min(2, len(faulty)) + 1))]
    slow = [Degraded(UPLINK, int(r), *_shared_factors(rng)) for r in slow_up]
    congested = []
    if len(faulty) > len(slow_up):
        worth = rng.uniform(*CONGESTED_NODES) * node_bw / uplink_bw
        if worth < 0.8:  # an uplink that still carries (almost) all its nodes' traffic is no fault
            congested.append((int(faulty[len(slow_up)]), float(worth)))
    varying = []
    quiet = [r for r in range(racks) if r not in set(faulty.tolist())]
    if rng.random() < 0.7 and quiet and rng.random() < 0.6:
        # Low enough that, at its lowest, the uplink limits one pair (it carries a rack of NICs).
        low = float(np.clip(rng.uniform(0.3, 0.8) * node_bw / uplink_bw, 0.02, 1.0))
        varying.append(_varying(rng, UPLINK, int(rng.choice(quiet)), low))
    return slow, congested, varying


def _varying_node(rng: np.random.Generator, n: int, degraded: list[Degraded]) -> list[Varying]:
    """Half the time, a healthy node's link whose bandwidth walks down to 10-40 %."""
    if rng.random() < 0.5:
        return []
    return [_varying(rng, NODE, _healthy_node(rng, n, degraded), float(rng.uniform(0.1, 0.4)))]


def _dragonfly(rng: np.random.Generator, seed: int, nodes: int) -> PlatformSpec:
    dims = [(g, r, p) for g in range(2, 9) for r in range(2, 5) for p in range(4, 9)]  # racks of 4+
    groups, routers, per = _nearest(rng, nodes, dims)
    topology = f"dragonfly:{groups},{routers},{per}"
    return _routed(rng, seed, topology, ("local", "global"))


def _torus(rng: np.random.Generator, seed: int, nodes: int) -> PlatformSpec:
    dims = [(x, y, z) for x in range(2, 9) for y in range(2, x + 1) for z in range(2, y + 1)]
    x, y, z = _nearest(rng, nodes, dims)
    return _routed(rng, seed, f"torus:{x},{y},{z}", ("x", "y", "z"))


def _routed(rng: np.random.Generator, seed: int, topology: str, kinds: tuple[str, ...]) -> PlatformSpec:
    """A torus or dragonfly: degraded NICs, 0-2 slow router links, maybe one varying link."""
    shape = shape_of(topology)
    n = shape.n_nodes
    links = [(k, i) for k in kinds for i in range(shape.kinds().get(k, 0)) if shape.valid(k, i)]
    order = rng.permutation(len(links))
    slow = [links[int(k)] for k in order[: int(rng.integers(0, 3))]]
    degraded = [Degraded(k, i, *_shared_factors(rng)) for k, i in slow]
    degraded += _nics(rng, n)
    varying = []
    if rng.random() < 0.7:
        rest = [links[int(k)] for k in order[len(slow):]]
        if rest and rng.random() < 0.6:
            k, i = rest[0]
            # A router link carries several NICs' worth on a dragonfly: go low enough to limit a pair.
            varying.append(_varying(rng, k, i, float(rng.uniform(0.05, 0.3))))
        else:
            varying.append(_varying(rng, NODE, _healthy_node(rng, n, degraded), float(rng.uniform(0.1, 0.4))))
    return PlatformSpec(topology=topology, seed=seed, oversubscription=float(rng.choice([1.0, 1.0, 2.0])),
                        degraded=tuple(degraded), varying=tuple(varying), **_common(rng))


# --- the faults -----------------------------------------------------------------------------


def _shared_factors(rng: np.random.Generator) -> tuple[float, float]:
    """(bw_factor, lat_factor) of a slow shared link."""
    return float(rng.uniform(*SHARED_BW)), float(rng.uniform(*SHARED_LAT))


def _nics(rng: np.random.Generator, n: int) -> list[Degraded]:
    """1 to n/12 degraded NICs: bandwidth, latency or both, factors drawn."""
    count = int(rng.integers(1, max(n // 12, 1) + 1))
    out = []
    for i in rng.choice(n, count, replace=False):
        what = rng.choice(["bw", "lat", "both"])
        bw = float(rng.uniform(*NIC_BW)) if what != "lat" else 1.0
        lat = float(rng.uniform(*NIC_LAT)) if what != "bw" else 1.0
        out.append(Degraded(NODE, int(i), bw, lat))
    return out


def _healthy_node(rng: np.random.Generator, n: int, degraded: list[Degraded]) -> int:
    taken = {d.index for d in degraded if d.kind == NODE}
    return int(rng.choice([i for i in range(n) if i not in taken]))


def _varying(rng: np.random.Generator, kind: str, index: int, low: float) -> Varying:
    """A busy link: its bandwidth walks between `low` and 1 over a period of 5-50 ms."""
    return Varying(kind, index, period=float(rng.uniform(0.005, 0.05)), steps=int(rng.integers(4, 11)), low=low)

