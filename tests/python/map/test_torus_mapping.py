"""Mapping on a physical torus (`torus:4,4,Z` platforms): the virtual torus embedding and
annealing from a (src, dst, bytes) list, judged by the routers' hops between communicating
ranks (studies/map/torus_mapping.py replays the same under SMPI)."""

from __future__ import annotations

import numpy as np
import pytest

from rankwise.traffic import patterns
from rankwise.map.mapping import Network, map_ranks, placement_cost
from rankwise.traffic.matrix import CommMatrix
from rankwise.sim.platform import PlatformSpec, generate


@pytest.fixture(scope="module")
def tori(tmp_path_factory):
    out = {}
    for z in (1, 2, 4):
        gp = generate(PlatformSpec(topology=f"torus:4,4,{z}", cores=1), tmp_path_factory.mktemp(f"t{z}"))
        out[z] = gp
    return out


def network(gp) -> Network:
    """The torus as the ground truth states it, one slot per node."""
    return Network(gp.nodes, np.ones(len(gp.nodes), dtype=np.int32), gp.alpha, 1.0 / gp.bandwidth)


def hops(gp, node_of, m: CommMatrix) -> np.ndarray:
    t = gp.spec.shape
    return np.array([t.hop_count(int(node_of[s]), int(node_of[d])) for s, d in zip(m.src, m.dst)])


@pytest.mark.parametrize("z, logical", [
    (1, "ring"),
    (1, "4x4"),
    (2, "ring"),
    (2, "8x4"),
    (2, "4x4x2"),
    (4, "ring"),
    (4, "16x4"),
    (4, "8x8"),
    (4, "4x4x4"),
])
def test_virtual_torus_puts_neighbours_one_hop_apart_where_the_shapes_allow(tori, z, logical):
    gp = tori[z]
    n = len(gp.nodes)
    if logical == "ring":
        m = patterns.ring(n, 1 << 20, bidirectional=True)
    elif logical.count("x") == 1:
        rows, cols = map(int, logical.split("x"))
        m = patterns.stencil2d((rows, cols), periodic=True, nbytes=1 << 20)
    else:
        m = patterns.stencil3d(tuple(map(int, logical.split("x"))), periodic=True, nbytes=1 << 20)
    r = map_ranks(m, network(gp), algorithm="torus", min_gain=0.0)
    assert r.algorithm == "torus"
    assert sorted(r.node_of.tolist()) == list(range(n))
    assert hops(gp, r.node_of, m).max() == 1


def test_virtual_torus_ring_beats_block_placement_on_every_torus(tori):
    for z, gp in tori.items():
        n = len(gp.nodes)
        m = patterns.ring(n, 1 << 20, bidirectional=True)
        r = map_ranks(m, network(gp), algorithm="torus", min_gain=0.0)
        assert hops(gp, r.node_of, m).mean() < hops(gp, np.arange(n), m).mean(), z


def cg_like(rows: int, cols: int, nbytes: int) -> CommMatrix:
    """Row-wise recursive doubling plus the transposed partner (rows == cols), as NAS CG."""
    pairs = set()
    for r in range(rows):
        for c in range(cols):
            step = 1
            while step < cols:
                pairs.add((r * cols + c, r * cols + (c ^ step)))
                step *= 2
            if r != c:
                pairs.add((r * cols + c, c * cols + r))
    src, dst = np.array(sorted(pairs)).T
    ones = np.ones(src.size, dtype=np.int64)
    return CommMatrix(rows * cols, src.astype(np.int32), dst.astype(np.int32), ones, ones * nbytes)


def test_annealing_shortens_a_cg_like_pattern_on_a_torus(tori):
    gp = tori[4]
    net = network(gp)
    m = cg_like(8, 8, 1 << 20)
    block = np.arange(64)
    r = map_ranks(m, net, algorithm="anneal", min_gain=0.0, seed=1)
    assert r.algorithm == "anneal"
    assert placement_cost(m, net, r.node_of) < placement_cost(m, net, block)
    assert hops(gp, r.node_of, m).mean() < 0.9 * hops(gp, block, m).mean()


def test_virtual_torus_lays_node_boxes_one_hop_apart_with_several_cores(tmp_path):
    """4 cores per node: the grid's 2x2 boxes share a node, and neighbouring
    boxes sit on neighbouring routers."""
    gp = generate(PlatformSpec(topology="torus:4,4,2", cores=4), tmp_path)
    net = Network(gp.nodes, np.full(len(gp.nodes), 4, dtype=np.int32), gp.alpha, 1.0 / gp.bandwidth)
    m = patterns.stencil2d((16, 8), periodic=True, nbytes=1 << 20)
    r = map_ranks(m, net, algorithm="torus", min_gain=0.0)
    assert np.bincount(r.node_of, minlength=32).tolist() == [4] * 32
    assert hops(gp, r.node_of, m).max() == 1


def test_an_impossible_embedding_falls_back_quickly_to_a_valid_placement(tori):
    """A ring of 15 cannot close one hop at a time on the 4x4 torus (its
    graph is bipartite, the ring odd): the search gives up within its
    budget and the folded placement stands."""
    gp = tori[1]
    net = Network(gp.nodes, np.ones(16, dtype=np.int32), gp.alpha, 1.0 / gp.bandwidth)
    m = patterns.ring(15, 1 << 20, bidirectional=True)
    r = map_ranks(m, net, algorithm="torus", min_gain=0.0, time_limit=5.0)
    assert len(set(r.node_of.tolist())) == 15
    assert r.seconds < 2.0
    assert hops(gp, r.node_of, m).max() == 2  # the one wrap-around pair
