"""The mapping engine through its Python binding: valid placements, costs that
go down, the optimum on tiny jobs, node choice on measured-looking networks."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankwise.traffic import patterns
from rankwise.util.errors import RankwiseError
from rankwise.map.mapping import Network, cut, grid_of, map_ranks, placement_cost
from rankwise.traffic.matrix import CommMatrix


def random_network(rng, n_nodes, slots_lo=1, slots_hi=4, names=None):
    alpha = rng.uniform(1e-6, 5e-5, (n_nodes, n_nodes))
    beta = rng.uniform(1e-10, 2e-9, (n_nodes, n_nodes))
    np.fill_diagonal(alpha, 1e-7)
    np.fill_diagonal(beta, 1e-11)
    slots = rng.integers(slots_lo, slots_hi + 1, n_nodes)
    return Network(names or [f"n{i}" for i in range(n_nodes)], slots, alpha, beta)


def random_traffic(rng, n_ranks, density=0.4):
    mask = rng.random((n_ranks, n_ranks)) < density
    np.fill_diagonal(mask, False)
    src, dst = np.nonzero(mask)
    msgs = rng.integers(1, 20, src.size)
    nbytes = rng.integers(0, 1 << 20, src.size)
    return CommMatrix(n_ranks, src, dst, msgs, nbytes)


def assert_valid(result, network, n_ranks):
    assert result.node_of.shape == (n_ranks,) and result.slot_of.shape == (n_ranks,)
    assert np.all((result.node_of >= 0) & (result.node_of < network.n_nodes))
    load = np.bincount(result.node_of, minlength=network.n_nodes)
    assert np.all(load <= network.slots)
    assert np.all((result.slot_of >= 0) & (result.slot_of < network.slots[result.node_of]))
    pairs = set(zip(result.node_of.tolist(), result.slot_of.tolist()))
    assert len(pairs) == n_ranks  # no two ranks on one core


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31), n_ranks=st.integers(1, 40), n_nodes=st.integers(1, 9),
       algorithm=st.sampled_from(["auto", "block", "greedy", "refine", "anneal"]),
       objective=st.sampled_from(["time", "bottleneck"]),
       selection=st.sampled_from(["weighted", "greedy", "first", "all"]))
def test_any_instance_gets_a_valid_placement_no_worse_than_block(seed, n_ranks, n_nodes, algorithm, objective,
                                                                  selection):
    rng = np.random.default_rng(seed)
    net = random_network(rng, n_nodes, 1, 6)
    if net.total_slots < n_ranks:
        net.slots[0] += n_ranks - net.total_slots
    traffic = random_traffic(rng, n_ranks, rng.uniform(0.05, 0.8))
    res = map_ranks(traffic, net, algorithm=algorithm, objective=objective, selection=selection, seed=seed)
    assert_valid(res, net, n_ranks)
    assert res.cost <= res.block_cost * (1 + 1e-12)
    assert res.cost == pytest.approx(placement_cost(traffic, net, res.node_of, objective), rel=1e-9)
    again = map_ranks(traffic, net, algorithm=algorithm, objective=objective, selection=selection, seed=seed)
    assert np.array_equal(again.node_of, res.node_of) and np.array_equal(again.slot_of, res.slot_of)


def brute_force(traffic, net, objective):
    best = np.inf
    for assign in itertools.product(range(net.n_nodes), repeat=traffic.n_ranks):
        if np.any(np.bincount(assign, minlength=net.n_nodes) > net.slots):
            continue
        best = min(best, placement_cost(traffic, net, np.array(assign), objective))
    return best


@pytest.mark.parametrize("seed", range(12))
def test_exhaustive_is_the_optimum_and_heuristics_come_close(seed):
    rng = np.random.default_rng(100 + seed)
    net = random_network(rng, 3, 1, 3)
    n = int(min(net.total_slots, rng.integers(3, 7)))
    traffic = random_traffic(rng, n, 0.6)
    objective = "time" if seed % 2 else "bottleneck"
    best = brute_force(traffic, net, objective)
    exact = map_ranks(traffic, net, algorithm="exhaustive", selection="all", objective=objective, min_gain=0)
    assert exact.cost == pytest.approx(best, rel=1e-9)
    for alg in ("greedy", "anneal"):
        res = map_ranks(traffic, net, algorithm=alg, selection="all", objective=objective, min_gain=0)
        assert best * (1 - 1e-9) <= res.cost <= res.block_cost * (1 + 1e-12)


def two_rack_network(slots=4, slow_node=None):
    """2 racks of 4 nodes; inside a rack 2 us, across 10 us; optional slow node."""
    n = 8
    rack = np.arange(n) // 4
    alpha = np.where(rack[:, None] == rack[None, :], 2e-6, 1e-5)
    beta = np.where(rack[:, None] == rack[None, :], 1e-10, 4e-10)
    if slow_node is not None:
        alpha[slow_node, :] *= 20
        alpha[:, slow_node] *= 20
        beta[slow_node, :] *= 20
        beta[:, slow_node] *= 20
    np.fill_diagonal(alpha, 2e-7)
    np.fill_diagonal(beta, 2e-11)
    return Network([f"node-{i}" for i in range(n)], [slots] * n, alpha, beta)


def test_alltoall_gain_comes_from_choosing_the_nodes():
    """All-to-all on half the allocation: block takes nodes 0-3 (one of them
    slow); rankwise takes a rack without the slow node."""
    net = two_rack_network(slow_node=1)
    traffic = patterns.generate("alltoall:ranks=16,bytes=64K")
    res = map_ranks(traffic, net)
    assert set(res.used_nodes) == {"node-4", "node-5", "node-6", "node-7"}
    assert res.cost < 0.5 * res.block_cost


def test_groups_stay_inside_racks():
    """Two groups of 16 ranks, shuffled rank numbers: each group lands in one rack."""
    net = two_rack_network()
    traffic = patterns.generate("groups:groups=2,per_group=16,bytes=1M,link_bytes=1K")
    res = map_ranks(traffic, net, algorithm="greedy")
    rack = res.node_of // 4
    heavy = traffic.bytes >= (1 << 20)
    assert np.all(rack[traffic.src[heavy]] == rack[traffic.dst[heavy]])
    assert res.cost < res.block_cost


def test_grid_comes_from_the_pattern_in_engine_order():
    m = patterns.generate("stencil3d:grid=2x3x4,bytes=1K")
    # the pattern numbers ranks with the last coordinate fastest
    assert grid_of(m) == ((4, 3, 2), False)
    assert grid_of(patterns.generate("ring:ranks=8,bytes=1")) == ((8, 1, 1), True)
    assert grid_of(patterns.generate("alltoall:ranks=8,bytes=1")) is None


def test_cut_counts_traffic_between_nodes():
    m = CommMatrix(3, [0, 1, 2], [1, 2, 2], [1, 2, 5], [10, 20, 50])
    assert cut(m, [0, 0, 1]) == (20, 30)  # self traffic of rank 2 is never network traffic
    assert cut(m, [0, 0, 1], by="msgs") == (2, 3)
    with pytest.raises(RankwiseError, match="placement of 2 ranks"):
        cut(m, [0, 1])


def test_bad_requests_are_one_line_errors():
    rng = np.random.default_rng(0)
    net = random_network(rng, 2, 2, 2)
    traffic = random_traffic(rng, 5)
    with pytest.raises(RankwiseError, match="4 slots for 5 ranks"):
        map_ranks(traffic, net)
    net.slots[:] = 8
    with pytest.raises(RankwiseError, match="unknown algorithm 'fast'"):
        map_ranks(traffic, net, algorithm="fast")
    with pytest.raises(RankwiseError, match="unknown objective"):
        map_ranks(traffic, net, objective="speed")
    with pytest.raises(RankwiseError, match="process grid"):
        map_ranks(traffic, net, algorithm="stencil")
    with pytest.raises(RankwiseError, match="at most 10 ranks"):
        map_ranks(random_traffic(rng, 11), net, algorithm="exhaustive")
    with pytest.raises(RankwiseError, match="listed twice"):
        Network(["a", "a"], [1, 1], np.zeros((2, 2)), np.zeros((2, 2)))
