"""A direct network's links from a probed model (rankwise.model.hops), in the model file and in the
predictor: a torus's neighbours found from the latencies, narrow links where the pairs say so,
flows spread over their shortest routes, and the time SMPI measures where links are shared."""

from __future__ import annotations

import numpy as np
import pytest

from rankwise.model.hops import direct_links
from rankwise.model.model import Hop, Model
from rankwise.predict.predictor import PredictNetwork
from rankwise.sim.platform import Degraded, PlatformSpec
from rankwise.sim.synthetic import synthetic_model


def torus_neighbours(dims: tuple[int, int, int]) -> set[tuple[int, int]]:
    """(u, v) for every node u and its neighbours v of a torus numbered x first."""
    x, y, z = dims
    out = set()
    for u in range(x * y * z):
        c = [u % x, (u // x) % y, u // (x * y)]
        for d, size in enumerate(dims):
            for step in (-1, 1):
                w = list(c)
                w[d] = (w[d] + step) % size
                v = w[0] + x * (w[1] + y * w[2])
                if v != u:
                    out.add((u, v))
    return out


def torus_model(degraded=(), oversubscription: float = 1.0, seed: int = 3) -> Model:
    spec = PlatformSpec(topology="torus:4,4,2", seed=seed, degraded=list(degraded),
                        oversubscription=oversubscription)
    model = synthetic_model(spec, seed=seed, noise=0.0)
    model.group_of = np.arange(model.n_nodes, dtype=np.int32)  # as a torus probe stores them
    return model


def test_a_torus_gets_its_links_between_neighbours():
    hops = direct_links(torus_model())
    assert {(h.src, h.dst) for h in hops} == torus_neighbours((4, 4, 2))
    rates = np.array([h.capacity for h in hops])
    assert rates.max() / rates.min() < 1.05  # a healthy torus: one rate


def test_a_slow_link_is_narrow_and_a_slow_nic_is_not():
    """y-6 (node 6 to its +y neighbour 10) at 0.4 of its bandwidth and 3x its latency: the hop
    the analysis names slow, kept at its pairs' rate. node-20's NIC at 0.25: its pairs are slow,
    but routes through node 20 do not cross its NIC, so its links keep the typical rate."""
    model = torus_model([Degraded("y", 6, 0.4, 3.0), Degraded("node", 20, 0.25, 1.0)])
    hops = {(h.src, h.dst): h.capacity for h in direct_links(model)}
    assert set(hops) == torus_neighbours((4, 4, 2))
    typical = float(np.median(list(hops.values())))
    assert hops[(6, 10)] == pytest.approx(0.4 * typical, rel=0.05)
    assert all(hops[e] == pytest.approx(typical, rel=0.05) for e in hops if 20 in e)


def test_a_slow_hop_not_found_is_completed_from_the_short_nodes():
    """A hop slow enough in latency falls out of the nearest class: its two nodes are a
    neighbour short, and are joined again (routes would go around it)."""
    model = torus_model([Degraded("x", 5, 0.5, 6.0)])
    assert {(h.src, h.dst) for h in direct_links(model)} == torus_neighbours((4, 4, 2))


def test_a_fat_tree_has_no_direct_links():
    spec = PlatformSpec(racks=4, nodes_per_rack=8, seed=1)
    assert direct_links(synthetic_model(spec, seed=1, noise=0.0)) == []


def test_hops_round_trip_through_the_model_file(tmp_path):
    model = torus_model()
    k = len(model.sizes)
    rtt = 2 * model.alpha[:, :, None] + model.beta[:, :, None] * model.sizes[None, None, :]
    model.rtt_min = model.rtt_median = model.rtt_max = rtt  # as a probe writes them
    model.jitter, model.samples = np.zeros_like(rtt), np.full(rtt.shape, 5, dtype=np.int32)
    for i in range(model.n_nodes):
        model.rtt_min[i, i] = model.rtt_median[i, i] = model.rtt_max[i, i] = np.nan
        model.jitter[i, i], model.samples[i, i] = np.nan, 0
    assert k and model.hops == []
    model.hops = direct_links(model)
    model.save(tmp_path / "t.rwm")
    back = Model.load(tmp_path / "t.rwm")
    assert back.hops == model.hops and len(back.hops) == 2 * 80
    assert (tmp_path / "t.rwm").read_text().startswith("rankwise-model 7\n")
    model.hops = [Hop(0, 0, 1e9)]
    with pytest.raises(Exception, match="a node with itself"):
        model.save(tmp_path / "bad.rwm")
    assert not (tmp_path / "bad.rwm").exists()


def test_the_predictor_spreads_a_flow_over_its_shortest_routes():
    """node 0 to node 5 on the 4x4x2 torus: one step in x and one in y, two shortest routes, half
    of the flow on each of their four links; node 0 to node 1, one link, all of it."""
    model = torus_model()
    model.hops = direct_links(model)
    net = PredictNetwork.from_model(model)
    parts = {}
    for link in net.links:
        share = np.ones(len(link.pairs)) if link.share is None else link.share
        for (i, j), s in zip(link.pairs.tolist(), share):
            parts.setdefault((i, j), {})[link.name] = s
    assert sorted(parts[(0, 5)].values()) == [0.5] * 4
    assert set(parts[(0, 5)]) == {"hop node-0 -> node-1", "hop node-1 -> node-5", "hop node-0 -> node-4",
                                  "hop node-4 -> node-5"}
    assert parts[(0, 1)] == {"hop node-0 -> node-1": 1.0}


def test_a_torus_all_to_all_speed_up_is_predicted_closer_with_its_links(tmp_path):
    """A 4x4x2 torus whose links carry half a NIC (2:1), two slow NICs in the default's nodes (the
    fidelity study's random platform seed 11): optimize moves a 16-rank all-to-all off them. From the pairs alone it
    predicts the new placement's routes as the pairs' own; with the links between neighbours it
    sees them share links, and its predicted speed-up comes closer to the one SMPI measures."""
    from rankwise.sim.platform import generate
    from rankwise.traffic.patterns import generate as pattern
    from rankwise.workflows.optimize import benchmark_runner, compare, plan, predicted_rows, with_bytes

    spec = PlatformSpec(topology="torus:4,4,2", seed=11, oversubscription=2.0,
                        degraded=[Degraded("node", 11, 0.27, 7.0), Degraded("node", 21, 0.31, 6.6)])
    gen = generate(spec, tmp_path / "plat")
    model = synthetic_model(spec, seed=11, noise=0.02)
    model.group_of = np.arange(model.n_nodes, dtype=np.int32)
    job = "alltoall:ranks=16,bytes=64K"
    size = 1 << 20
    errors = {}
    for with_links in (False, True):
        model.hops = direct_links(model) if with_links else []
        p = plan(model, pattern(job), [(h, 1) for h in model.names])
        run = compare("a2a", benchmark_runner("alltoall", ["--sizes", str(size), "--iterations", "2"],
                                              sim=gen.platform_xml), p.before_hosts, p.after_hosts, repeats=1)
        predicted = predicted_rows(p, [size], with_bytes(job))[0]
        errors[with_links] = predicted / run.speedup[0] - 1
        assert run.speedup[0] > 1.05  # the slow NICs avoided either way
    assert errors[False] > 0.3  # the pairs alone: the spread placement far too fast
    assert errors[True] < errors[False] - 0.1, errors
