"""A three-level fat tree: `fat-tree3:P,R,N`.

P pods of R racks, N nodes under each rack's leaf switch, one NIC per node (`node-<i>`). Each
leaf has one uplink to its pod's aggregation layer (`up-<r>`, r = pod * R + rack in the pod,
the aggregate of the leaf's links to it), each pod one uplink to the core (`pod-<p>`, the
aggregate of the pod's core links): the two-level tree of sim/platform.py with racks grouped
into pods. Rack uplinks run at `node_bw * N / oversubscription`, pod uplinks at
`node_bw * N * R / oversubscription`; both have the spec's `uplink_lat`.

Routing goes up as far as needed and down: NIC; within a pod the two racks' uplinks; across pods
also the two pods' uplinks; NIC.

Nodes fill the positions in order (position k: pod k // (R*N), rack k // N), or, when the spec
deals racks in shuffled order (`shuffle_racks`), node i takes position perm[i] of a seeded
permutation: host names then say nothing of racks or pods. Faults: `node:I`, `uplink:R` (rack R's
leaf uplink, R counted over all pods), `pod:P`.
"""

from __future__ import annotations

import numpy as np

from rankwise.sim.topology import DOWN, UP, Slot


class FatTree3:
    def __init__(self, pods: int, racks: int, nodes: int, deal_seed: int | None = None):
        self.pods, self.racks, self.nodes = pods, racks, nodes
        self.label = f"fat-tree3:{pods},{racks},{nodes}"
        self._n = pods * racks * nodes
        if deal_seed is None:
            self._position = np.arange(self._n)
        else:  # the stream the two-level tree shuffles its racks with
            self._position = np.random.default_rng([deal_seed, 1]).permutation(self._n)
        self._rack = self._position // nodes  # global rack index of each node
        self._pod = self._rack // racks

    @property
    def n_nodes(self) -> int:
        return self._n

    def kinds(self) -> dict[str, int]:
        return {"node": self._n, "uplink": self.pods * self.racks, "pod": self.pods}

    def valid(self, kind: str, index: int) -> bool:
        count = self.kinds().get(kind)
        return count is not None and 0 <= index < count

    def slots(self, node_bw: float, node_lat: float, router_lat: float, oversubscription: float) -> list[Slot]:
        out = [Slot("node", i, f"node-{i}", node_bw, node_lat) for i in range(self._n)]
        rack_bw = node_bw * self.nodes / oversubscription
        out += [Slot("uplink", r, f"up-{r}", rack_bw, router_lat) for r in range(self.pods * self.racks)]
        out += [Slot("pod", p, f"pod-{p}", rack_bw * self.racks, router_lat) for p in range(self.pods)]
        return out

    def hops(self, src: int, dst: int) -> list[tuple[int, bool]]:
        if src == dst:
            return []
        n, rs, rd = self._n, int(self._rack[src]), int(self._rack[dst])
        if rs == rd:
            return [(src, UP), (dst, DOWN)]
        ps, pd = int(self._pod[src]), int(self._pod[dst])
        up = [(src, UP), (n + rs, UP)]
        down = [(n + rd, DOWN), (dst, DOWN)]
        if ps == pd:
            return up + down
        core = n + self.pods * self.racks
        return up + [(core + ps, UP), (core + pd, DOWN)] + down

    def rack_of_node(self) -> np.ndarray:
        return self._rack.copy()

    def behind(self, kind: str, index: int) -> tuple[int, ...]:
        """The nodes whose traffic out of their rack (pod) the link carries."""
        where = {"node": np.arange(self._n), "uplink": self._rack, "pod": self._pod}[kind]
        return tuple(int(i) for i in np.flatnonzero(where == index))

    def coords(self) -> list[list[int]]:
        return [[int(self._pod[i]), int(self._rack[i] % self.racks), int(self._position[i] % self.nodes)]
                for i in range(self._n)]
