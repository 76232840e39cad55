"""Shapes of a generated cluster besides the fat tree: what links it has and which of them a
message from one node to another crosses, in which direction.

A shape is named by `PlatformSpec.topology`: "fat-tree" (sim/platform.py's own), "fat-tree3:P,R,N"
(sim/fat_tree3.py), "torus:X,Y,Z" (sim/torus.py) or "dragonfly:G,R,N" (sim/dragonfly.py). The generator builds one link table
from the shape's slots and writes an explicit route for every ordered pair of nodes, so that
the ground truth follows the routes SimGrid uses exactly (docs/concepts/simulation.md, "Other shapes").
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

import numpy as np

from rankwise.util.errors import UsageError

FAT_TREE = "fat-tree"
# Every ordered pair gets an explicit route: beyond this the XML and the ground truth grow past
# what a simulated probe could use anyway (its time grows with the cube of the ranks).
MAX_NODES = 1024
UP, DOWN = True, False  # direction of a hop over a full-duplex link (SimGrid's UP / DOWN half)


@dataclass(frozen=True)
class Slot:
    """One full-duplex link before faults: faults name it by (kind, index). All the NICs of a
    node share ("node", node) so that a degraded or unreachable node is all its NICs."""

    kind: str
    index: int
    name: str
    bandwidth: float  # B/s, nominal before jitter
    latency: float  # s


class Shape(Protocol):
    label: str  # the topology string as written in the spec

    @property
    def n_nodes(self) -> int: ...

    def kinds(self) -> dict[str, int]:
        """Link kinds faults may name, with the number of valid indices of each."""

    def valid(self, kind: str, index: int) -> bool:
        """Whether (kind, index) names a link of this shape."""

    def slots(self, node_bw: float, node_lat: float, router_lat: float, oversubscription: float) -> list[Slot]:
        """Every link: NICs first (node order), then the routers' links at 1/oversubscription of
        the shape's balanced bandwidth."""

    def hops(self, src: int, dst: int) -> list[tuple[int, bool]]:
        """(slot index, UP/DOWN) of the links from node src to node dst, in order."""

    def rack_of_node(self) -> np.ndarray:
        """The switch each node hangs off (its own router on a torus)."""

    def coords(self) -> list[list[int]]:
        """Position of every node in the shape (torus: x, y, z; dragonfly: group, router, slot)."""


def parse_dims(text: str, what: str, count: int, names: str) -> tuple[int, ...]:
    parts = text.split(",")
    if len(parts) != count:
        raise UsageError(f"invalid topology '{what}:{text}': {what} needs {count} numbers {names}")
    try:
        dims = tuple(int(p) for p in parts)
    except ValueError:
        raise UsageError(f"invalid topology '{what}:{text}': {names} must be integers") from None
    if any(d < 1 for d in dims):
        raise UsageError(f"invalid topology '{what}:{text}': every number must be at least 1")
    if any(d > MAX_NODES for d in dims) or int(np.prod(dims, dtype=object)) > MAX_NODES:
        raise UsageError(f"invalid topology '{what}:{text}': more than {MAX_NODES} nodes "
                         "(every pair gets a route of its own)")
    return dims


@lru_cache(maxsize=32)
def shape_of(topology: str, nics: int = 1, deal_seed: int | None = None) -> Shape | None:
    """The shape a topology string names; None for the fat tree (sim/platform.py draws it).
    deal_seed: deal the racks of a shape that has racks (fat-tree3) to hosts in that seed's
    shuffled order (PlatformSpec.shuffle_racks); the other shapes have none and ignore it."""
    from rankwise.sim.dragonfly import Dragonfly
    from rankwise.sim.fat_tree3 import FatTree3
    from rankwise.sim.torus import Torus

    if topology == FAT_TREE:
        if nics != 1:
            raise UsageError("invalid platform spec: several NICs per node need a torus topology")
        return None
    kind, _, params = topology.partition(":")
    if kind == "torus":
        return Torus(parse_dims(params, "torus", 3, "X,Y,Z"), nics)
    if kind == "dragonfly":
        if nics != 1:
            raise UsageError("invalid platform spec: a dragonfly node has one NIC (nics must be 1)")
        return Dragonfly(*parse_dims(params, "dragonfly", 3, "G,R,N (groups, routers per group, nodes per router)"))
    if kind == "fat-tree3":
        if nics != 1:
            raise UsageError("invalid platform spec: a fat-tree3 node has one NIC (nics must be 1)")
        return FatTree3(*parse_dims(params, "fat-tree3", 3, "P,R,N (pods, racks per pod, nodes per rack)"),
                        deal_seed=deal_seed)
    raise UsageError(f"invalid topology '{topology}': expected fat-tree, torus:X,Y,Z or dragonfly:G,R,N "
                     "or fat-tree3:P,R,N")


def route_arrays(shape: Shape, lat: np.ndarray, bw: np.ndarray, bw_min: np.ndarray, altered: np.ndarray):
    """alpha, bandwidth, bandwidth_min and affected (n x n) of every route, from per-link arrays:
    latency the sum over the route, bandwidth its smallest link."""
    n = shape.n_nodes
    alpha = np.zeros((n, n))
    bandwidth = np.full((n, n), np.inf)
    bandwidth_min = np.full((n, n), np.inf)
    affected = np.zeros((n, n), dtype=bool)
    for i, j, idx in all_routes(shape):
        alpha[i, j] = lat[idx].sum()
        bandwidth[i, j] = bw[idx].min()
        bandwidth_min[i, j] = bw_min[idx].min()
        affected[i, j] = altered[idx].any()
    return alpha, bandwidth, bandwidth_min, affected


def all_routes(shape: Shape):
    """(src, dst, link indices as an array) for every ordered pair of distinct nodes."""
    n = shape.n_nodes
    for i in range(n):
        for j in range(n):
            if i != j:
                yield i, j, np.fromiter((k for k, _ in shape.hops(i, j)), dtype=np.intp)


def routes_xml(shape: Shape, link_names: list[str]) -> list[str]:
    """A <route> per ordered pair (symmetrical="NO": the way back is its own dimension-order or
    minimal route, not this one reversed)."""
    n = shape.n_nodes
    out = []
    for i in range(n):
        for j in range(n):
            if i == j:
                continue
            ctn = "".join(f'<link_ctn id="{link_names[k]}" direction="{"UP" if up else "DOWN"}"/>'
                          for k, up in shape.hops(i, j))
            out.append(f'    <route src="node-{i}" dst="node-{j}" symmetrical="NO">{ctn}</route>')
    return out


def link_pairs(shape: Shape, n_links: int) -> list[dict[str, list[list[int]]]]:
    """For every link, the ordered node pairs whose route crosses it, per direction: what a
    predictor needs to share a link among concurrent flows."""
    out: list[dict[str, list[list[int]]]] = [{"up": [], "down": []} for _ in range(n_links)]
    n = shape.n_nodes
    for i in range(n):
        for j in range(n):
            if i != j:
                for k, up in shape.hops(i, j):
                    out[k]["up" if up else "down"].append([i, j])
    return out
