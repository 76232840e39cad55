"""The congestion objective: how long the busiest resource — a node's NIC
(injection or ejection) or a shared link — needs to carry a placement's
bytes, and a search over which nodes hold the ranks under it.

The mapper's own objectives add up alpha + bytes x beta per pair, each pair
alone: 28 flows through one slow NIC cost the same as 28 flows through 28
NICs. This objective loads each resource with every byte that crosses it
and divides by its capacity (the predictor's network: node caps, shared
links); the predictor then judges the candidates it finds (decision.py).

The search keeps the ranks grouped as a placement groups them and moves
whole groups: a used node's ranks to a free node that has the slots, or two
used nodes' ranks exchanged, first improvement, until nothing improves.
"""

from __future__ import annotations

import numpy as np

# Allocations beyond this many nodes skip the search (each step costs n^2).
MAX_NODES = 256


def _links(network) -> list[tuple[np.ndarray, float]]:
    n = network.n_nodes
    out = []
    for link in network.links:
        mask = np.zeros((n, n), dtype=bool)
        pairs = np.asarray(link.pairs, dtype=np.int64).reshape(-1, 2)
        mask[pairs[:, 0], pairs[:, 1]] = True
        out.append((mask, float(link.capacity)))
    return out


class Congestion:
    """The objective for one traffic (bytes and messages between ranks) on
    one predictor network (rankwise.predict.predictor.PredictNetwork)."""

    def __init__(self, network, sent, n_ranks: int):
        self.net = network
        self.n_ranks = n_ranks
        self.src, self.dst = sent.src.astype(np.int64), sent.dst.astype(np.int64)
        self.bytes, self.msgs = sent.bytes.astype(np.float64), sent.msgs.astype(np.float64)
        n = network.n_nodes
        with np.errstate(divide="ignore"):
            fallback = np.where(network.beta > 0, 1.0 / np.where(network.beta > 0, network.beta, 1), np.inf)
        np.fill_diagonal(fallback, 0)
        best = fallback.max(axis=1) if n > 1 else np.full(n, np.inf)
        # Without caps a NIC carries what its best pair showed (from_model's rule).
        self.inject = network.inject if network.inject is not None else best
        self.eject = network.eject if network.eject is not None else best
        self.links = _links(network)

    def node_bytes(self, node_of: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Bytes and messages between nodes (n x n, the diagonal stays in a node)."""
        n = self.net.n_nodes
        a, b = node_of[self.src], node_of[self.dst]
        B = np.zeros((n, n))
        M = np.zeros((n, n))
        np.add.at(B, (a, b), self.bytes)
        np.add.at(M, (a, b), self.msgs)
        return B, M

    def cost_of_nodes(self, B: np.ndarray, M: np.ndarray) -> tuple[float, float]:
        """(busiest resource's seconds, summed alpha + bytes x beta) of a
        node-level traffic."""
        off = B.copy()
        np.fill_diagonal(off, 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.where(self.inject > 0, off.sum(axis=1) / self.inject, 0.0)
            inn = np.where(self.eject > 0, off.sum(axis=0) / self.eject, 0.0)
        worst = max(float(np.nanmax(out)), float(np.nanmax(inn)), float((B * self.net.beta).max()))
        for mask, cap in self.links:
            if cap > 0:
                worst = max(worst, float(off[mask].sum()) / cap)
        total = float((M * self.net.alpha).sum() + (B * self.net.beta).sum())
        return worst, total

    def cost(self, node_of) -> tuple[float, float]:
        return self.cost_of_nodes(*self.node_bytes(np.asarray(node_of, dtype=np.int64)))


def relabel_search(objective: Congestion, node_of, slots, max_passes: int = 30) -> np.ndarray:
    """Move whole groups of ranks between nodes (module docstring) while the
    congestion cost (then the summed cost) goes down; returns node_of."""
    node_of = np.asarray(node_of, dtype=np.int64).copy()
    n = objective.net.n_nodes
    if n > MAX_NODES or n < 2:
        return node_of
    slots = np.asarray(slots, dtype=np.int64)
    B, M = objective.node_bytes(node_of)
    best = objective.cost_of_nodes(B, M)

    def swapped(X, u, v):
        Y = X.copy()
        Y[[u, v], :] = Y[[v, u], :]
        Y[:, [u, v]] = Y[:, [v, u]]
        return Y

    for _ in range(max_passes):
        count = np.bincount(node_of, minlength=n)
        used = np.flatnonzero(count > 0)
        improved = False
        for u in used:
            if count[u] == 0:  # its ranks moved on this pass
                continue
            for v in range(n):
                if v == u or (count[v] > 0 and v < u):
                    continue
                # u's ranks go to v and v's to u: both must fit.
                if count[u] > slots[v] or count[v] > slots[u]:
                    continue
                Bs, Ms = swapped(B, u, v), swapped(M, u, v)
                c = objective.cost_of_nodes(Bs, Ms)
                if c[0] < best[0] * (1 - 1e-9) or (c[0] <= best[0] and c[1] < best[1] * (1 - 1e-9)):
                    on_u, on_v = node_of == u, node_of == v
                    node_of[on_u], node_of[on_v] = v, u
                    B, M, best = Bs, Ms, c
                    count[u], count[v] = count[v], count[u]
                    improved = True
                    break
        if not improved:
            break
    return node_of
