"""Models drawn from a generated platform's ground truth, without running
the simulator: the route figures of every pair (the same link table as the
SimGrid platform), with noise. Used to test and measure how well the model's
structure (groups, slow and variable links) is recovered, on many platforms
and seeds in little time; one simulated probe checks the same on real
measurements (tests/python/model/test_anomalies.py)."""

from __future__ import annotations

import numpy as np

from rankwise.model.model import MEASURED, Model
from rankwise.sim.platform import PlatformSpec, build_links, pair_arrays

SIZES = (8, 1024, 65536, 1 << 20)


def synthetic_model(
    spec: PlatformSpec,
    ranks_per_node: int = 1,
    nodes: int | None = None,
    noise: float = 0.02,
    slow_noise: float = 0.05,
    seed: int = 0,
) -> Model:
    """What a probe of the first `nodes` nodes of `spec` would measure.

    alpha and bandwidth are the routes' (alpha averaged over both directions,
    as the fit sees them), times log-normal noise of `noise` per ranks per
    node; pairs through an altered node link get `slow_noise` more (their
    transfers are long and share the NIC with the node's other ranks). With
    two or more ranks per node the node's ranks share its NIC: bandwidth is
    divided by the ranks per node. Jitter ((max - min) / mean of the rounds)
    is about 1 % everywhere, and 20-60 % at the largest sizes for pairs
    whose route holds a link whose bandwidth varies over time and, at its
    lowest, limits the route."""
    rng = np.random.default_rng(seed)
    links = build_links(spec)
    alpha, bandwidth, lowest, _ = pair_arrays(spec, links)
    n = spec.n_nodes if nodes is None else nodes
    alpha, bandwidth, lowest = alpha[:n, :n], bandwidth[:n, :n], lowest[:n, :n]
    # A varying link shows only where, at its lowest, it is the route's bottleneck.
    varies = lowest < bandwidth
    np.fill_diagonal(varies, False)
    alpha = (alpha + alpha.T) / 2
    sigma = noise * ranks_per_node
    node_altered = np.zeros(n, dtype=bool)  # a node's NIC(s) altered (a torus node may have several)
    for link in links:
        if link.kind == "node" and link.reasons and link.index < n:
            node_altered[link.index] = True
    touched = node_altered[:, None] | node_altered[None, :]
    extra = np.where(touched, slow_noise * ranks_per_node, 0.0)
    alpha = alpha * np.exp((sigma + extra) * rng.standard_normal((n, n)))
    bandwidth = bandwidth / ranks_per_node * np.exp((sigma + extra) * rng.standard_normal((n, n)))

    model = Model.empty([f"node-{i}" for i in range(n)], SIZES, np.full(n, ranks_per_node))
    model.alpha, model.beta = alpha, 1.0 / bandwidth
    model.state[:] = MEASURED
    np.fill_diagonal(model.state, 0)
    np.fill_diagonal(model.alpha, np.nan)
    np.fill_diagonal(model.beta, np.nan)
    k = len(SIZES)
    jitter = 0.01 * np.exp(0.3 * rng.standard_normal((n, n, k)))
    big = k - max(k // 4, 1)
    jitter[..., big:] = np.where(varies[..., None], rng.uniform(0.2, 0.6, (n, n, k - big)), jitter[..., big:])
    model.jitter = jitter
    model.samples[:] = 1
    return model


def adjusted_rand_index(a, b) -> float:
    """Agreement of two partitions of the same items, 1 when identical up to
    the labels, about 0 for random labels (Hubert and Arabie 1985)."""
    a = np.unique(np.asarray(a), return_inverse=True)[1]
    b = np.unique(np.asarray(b), return_inverse=True)[1]
    table = np.zeros((a.max() + 1, b.max() + 1))
    np.add.at(table, (a, b), 1)

    def pairs(x):
        return float((x * (x - 1) / 2).sum())

    both, rows, cols, total = pairs(table), pairs(table.sum(1)), pairs(table.sum(0)), len(a) * (len(a) - 1) / 2
    expected = rows * cols / total if total else 0.0
    best = (rows + cols) / 2
    return 1.0 if best == expected else (both - expected) / (best - expected)
