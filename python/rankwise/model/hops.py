"""A direct network's links, from a probed model: on a torus, each node's link to a neighbour.

The analysis finds a torus's hop graph from the latencies alone (anomalies._hop_distances: the
nearest class's pairs are neighbours, a slow hop found between its two nodes joins them). Without
its links, the model holds each pair's route as if it were the pair's own: the mapper then spreads
a job over the torus and the routes of neighbouring ranks share links it cannot see
(docs/results/model.md, "A torus's placements need its links"). Each neighbour pair becomes two
hops, one per direction, at the bandwidth the pair was measured at, unless its NICs limited that
pair (near their caps, or narrower than the typical link): a link at least as wide as the NICs is
taken at the typical hop's rate, since routes through the node do not cross its NIC."""

from __future__ import annotations

import numpy as np

from rankwise.model.anomalies import Findings, _hop_distances, _network_part, find_slow_links, round_trip_latency
from rankwise.model.model import Hop, Model

NIC_BOUND = 0.9  # a pair within 10 % of its NICs' caps (or NICs 10 % below the typical link) was limited by them


def _pair_bandwidth(model: Model) -> np.ndarray:
    """Per pair, bytes/s of its large messages: the better of the two fits, as the predictor's
    node caps read it (rw_pnet_from_model)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        bw = np.fmax(1.0 / model.beta, 1.0 / model.beta_large if model.knee > 0 else np.nan)
    bw[~np.isfinite(bw)] = np.nan
    return bw


def _nic_caps(model: Model, bw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per node, out and in caps: the stress test's, else the best pair it showed."""
    known = np.where(np.isfinite(bw), bw, -np.inf)
    out = np.where(np.isfinite(model.inject) & (model.inject > 0), model.inject, known.max(axis=1))
    inn = np.where(np.isfinite(model.eject) & (model.eject > 0), model.eject, known.max(axis=0))
    return out, inn


def _missing_hops(near: np.ndarray, sym: np.ndarray) -> list[tuple[int, int]]:
    """Pairs of nodes each short of the typical number of neighbours, the nearest such pairs first:
    the hops between them the latencies did not place in the nearest class."""
    degree = near.sum(axis=1)
    typical = int(np.median(degree))
    short = degree < typical
    out = []
    pairs = np.argwhere(np.triu(short[:, None] & short[None, :], 1))
    candidates = sorted((float(sym[u, v]), int(u), int(v)) for u, v in pairs
                        if not near[u, v] and np.isfinite(sym[u, v]))
    for _, u, v in candidates:
        if degree[u] < typical and degree[v] < typical:
            out.append((u, v))
            degree[u] += 1
            degree[v] += 1
    return out


def direct_links(model: Model, findings: Findings | None = None) -> list[Hop]:
    """The hops of a direct network (a torus), or [] where the latencies show none (a fat tree's
    or a dragonfly's nearest pairs are cliques of a rack or router, not a hop graph)."""
    n = model.n_nodes
    if n < 8:
        return []
    f = findings if findings is not None else find_slow_links(model)
    if f.classes is None:
        return []
    sym = _network_part(round_trip_latency(model), np.zeros(n))
    # The slow hops found join their two nodes; one named between nodes that are no neighbours
    # breaks the graph, which then stands without them.
    net = _hop_distances(sym, f.classes, f.slow_links) if f.slow_links else None
    net = net if net is not None else _hop_distances(sym, f.classes)
    if net is None:
        return []
    # A torus's nodes have as many neighbours each; a slow hop not found leaves its two nodes a
    # neighbour short (its latency is beyond the nearest class), and routes would go around it.
    # (Their pairs are then farther than their hop counts: the graph is not checked against the
    # latencies again.)
    near = net[3].copy()
    for u, v in _missing_hops(near, sym):
        near[u, v] = near[v, u] = True
    bw = _pair_bandwidth(model)
    cap_out, cap_in = _nic_caps(model, bw)
    edges = [(int(u), int(v)) for u, v in np.argwhere(near) if np.isfinite(bw[u, v]) or np.isfinite(bw[v, u])]
    if not edges:
        return []
    rate = {(u, v): float(bw[u, v] if np.isfinite(bw[u, v]) else bw[v, u]) for u, v in edges}
    typical = float(np.median(list(rate.values())))
    # Limited by its NICs: near their caps, or NICs narrower than the typical link.
    by_nic = {(u, v): rate[(u, v)] >= NIC_BOUND * min(cap_out[u], cap_in[v])
              or min(cap_out[u], cap_in[v]) < NIC_BOUND * typical for u, v in edges}
    return [Hop(u, v, max(rate[(u, v)], typical) if by_nic[(u, v)] else rate[(u, v)]) for u, v in sorted(edges)]
