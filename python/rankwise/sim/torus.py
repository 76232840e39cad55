"""A 3-D torus of nodes, each with its own router (Tofu, Blue Gene): `torus:X,Y,Z`.

Node i sits at x = i % X, y = (i // X) % Y, z = i // (X*Y). Its router has a link to the next
router along every dimension of size >= 2: link `x-<i>` joins node i to its +x neighbour
(and so on for y, z); along a ring of 2 there is one link, not two. A node reaches its router
through `nics` NICs (`node-<i>`, or `node-<i>.<k>`): a message from i to j leaves through NIC
j % nics and arrives through NIC i % nics, so one pair gets one NIC's bandwidth and a node's
messages to several peers spread over its NICs, as Tofu's four TNIs do.

Routing is dimension-order (x, then y, then z), the shorter way round each ring, the positive
direction on a tie: deterministic, minimal, and the way real tori route by default.
"""

from __future__ import annotations

import numpy as np

from rankwise.sim.topology import DOWN, UP, Slot

AXES = "xyz"


class Torus:
    def __init__(self, dims: tuple[int, int, int], nics: int = 1):
        self.dims = dims
        self.nics = nics
        self.label = "torus:" + ",".join(map(str, dims))
        x, y, z = dims
        self._n = x * y * z
        # slot index of link (axis, node); -1 where that node has no link along that axis
        self._link = np.full((3, self._n), -1, dtype=np.int64)
        k = self._n * nics
        for a in range(3):
            for i in range(self._n):
                if self._has_link(a, i):
                    self._link[a, i] = k
                    k += 1
        self._n_slots = k

    @property
    def n_nodes(self) -> int:
        return self._n

    def coord(self, i: int) -> tuple[int, int, int]:
        x, y, _ = self.dims
        return i % x, (i // x) % y, i // (x * y)

    def node(self, c: tuple[int, int, int]) -> int:
        x, y, _ = self.dims
        return c[0] + x * (c[1] + y * c[2])

    def _has_link(self, axis: int, i: int) -> bool:
        size = self.dims[axis]
        return size >= 3 or (size == 2 and self.coord(i)[axis] == 0)

    def kinds(self) -> dict[str, int]:
        out = {"node": self._n}
        out.update({AXES[a]: self._n for a in range(3) if self.dims[a] >= 2})
        return out

    def valid(self, kind: str, index: int) -> bool:
        if kind == "node":
            return 0 <= index < self._n
        if kind in AXES and 0 <= index < self._n:
            return self._has_link(AXES.index(kind), index)
        return False

    def slots(self, node_bw: float, node_lat: float, router_lat: float, oversubscription: float) -> list[Slot]:
        router_bw = node_bw / oversubscription  # a torus link runs at a NIC's speed
        out = []
        for i in range(self._n):
            for k in range(self.nics):
                name = f"node-{i}" if self.nics == 1 else f"node-{i}.{k}"
                out.append(Slot("node", i, name, node_bw, node_lat))
        for a in range(3):
            for i in range(self._n):
                if self._link[a, i] >= 0:
                    out.append(Slot(AXES[a], i, f"{AXES[a]}-{i}", router_bw, router_lat))
        return out

    def hops(self, src: int, dst: int) -> list[tuple[int, bool]]:
        if src == dst:
            return []
        out = [(src * self.nics + dst % self.nics, UP)]
        c = list(self.coord(src))
        goal = self.coord(dst)
        for a in range(3):
            size = self.dims[a]
            ahead = (goal[a] - c[a]) % size
            if ahead == 0:
                continue
            forward = ahead <= size - ahead and not (size == 2 and c[a] == 1)
            for _ in range(ahead if forward else size - ahead):
                if forward:
                    out.append((int(self._link[a, self.node(tuple(c))]), UP))
                    c[a] = (c[a] + 1) % size
                else:
                    c[a] = (c[a] - 1) % size
                    out.append((int(self._link[a, self.node(tuple(c))]), DOWN))
        out.append((dst * self.nics + src % self.nics, DOWN))
        return out

    def rack_of_node(self) -> np.ndarray:
        # No racks: each node hangs off its own router.
        return np.arange(self._n)

    def coords(self) -> list[list[int]]:
        return [list(self.coord(i)) for i in range(self._n)]

    def hop_count(self, src: int, dst: int) -> int:
        """Router-to-router links between two nodes (0 for the same node)."""
        return max(len(self.hops(src, dst)) - 2, 0)
