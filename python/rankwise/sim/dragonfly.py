"""A dragonfly (Kim et al. 2008; Cray Aries, Slingshot): `dragonfly:G,R,N`.

G groups of R routers, N nodes on each router, one NIC per node (`node-<i>`). Node i hangs
off router (i // N) % R of group i // (R*N). Inside a group every pair of routers a < b has a
local link `local-<g>-<a>-<b>`; every pair of groups a < b has one global link
`global-<a>-<b>`. Group a holds its link to group b on router (o - 1) % R, o = (b - a) mod G,
so global links spread evenly over a group's routers.

Routing is minimal: NIC, local link to the router holding the global link (if another),
the global link, local link to the destination's router (if another), NIC.

Fault indices: `local` links are numbered group by group, pairs (a, b) in lexicographic
order; `global` links likewise over pairs of groups. The ground truth lists every link
by name with its kind and index.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np

from rankwise.sim.topology import DOWN, UP, Slot


class Dragonfly:
    def __init__(self, groups: int, routers: int, nodes: int):
        self.groups, self.routers, self.nodes = groups, routers, nodes
        self.label = f"dragonfly:{groups},{routers},{nodes}"
        self._n = groups * routers * nodes
        self._local_pairs = list(combinations(range(routers), 2))
        self._global_pairs = list(combinations(range(groups), 2))
        self._local_index = {p: k for k, p in enumerate(self._local_pairs)}
        self._global_index = {p: k for k, p in enumerate(self._global_pairs)}
        self._n_local = groups * len(self._local_pairs)

    @property
    def n_nodes(self) -> int:
        return self._n

    def kinds(self) -> dict[str, int]:
        return {"node": self._n, "local": self._n_local, "global": len(self._global_pairs)}

    def valid(self, kind: str, index: int) -> bool:
        count = self.kinds().get(kind)
        return count is not None and 0 <= index < count

    def slots(self, node_bw: float, node_lat: float, router_lat: float, oversubscription: float) -> list[Slot]:
        router_bw = node_bw * self.nodes / oversubscription  # a router's links carry what its nodes inject
        out = [Slot("node", i, f"node-{i}", node_bw, node_lat) for i in range(self._n)]
        k = 0
        for g in range(self.groups):
            for a, b in self._local_pairs:
                out.append(Slot("local", k, f"local-{g}-{a}-{b}", router_bw, router_lat))
                k += 1
        for k, (a, b) in enumerate(self._global_pairs):
            out.append(Slot("global", k, f"global-{a}-{b}", router_bw, router_lat))
        return out

    def place(self, i: int) -> tuple[int, int]:
        """(group, router) of node i."""
        return i // (self.routers * self.nodes), (i // self.nodes) % self.routers

    def gateway(self, a: int, b: int) -> int:
        """Router of group a holding its global link to group b."""
        return ((b - a) % self.groups - 1) % self.routers

    def _local(self, g: int, a: int, b: int) -> tuple[int, bool]:
        lo, hi = min(a, b), max(a, b)
        return self._n + g * len(self._local_pairs) + self._local_index[lo, hi], a < b

    def _global(self, a: int, b: int) -> tuple[int, bool]:
        lo, hi = min(a, b), max(a, b)
        return self._n + self._n_local + self._global_index[lo, hi], a < b

    def hops(self, src: int, dst: int) -> list[tuple[int, bool]]:
        if src == dst:
            return []
        (gs, rs), (gd, rd) = self.place(src), self.place(dst)
        out = [(src, UP)]
        if gs == gd:
            if rs != rd:
                out.append(self._local(gs, rs, rd))
        else:
            ra, rb = self.gateway(gs, gd), self.gateway(gd, gs)
            if rs != ra:
                out.append(self._local(gs, rs, ra))
            out.append(self._global(gs, gd))
            if rb != rd:
                out.append(self._local(gd, rb, rd))
        out.append((dst, DOWN))
        return out

    def rack_of_node(self) -> np.ndarray:
        # A router's nodes are the rack (one switch); groups are the level above.
        return np.arange(self._n) // self.nodes

    def coords(self) -> list[list[int]]:
        return [[*self.place(i), i % self.nodes] for i in range(self._n)]
