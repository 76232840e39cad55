"""rankwise.model.diff: what changed between two models, beyond their noise."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from rankwise.model.model import Link
from rankwise.model.diff import diff_models
from rankwise.sim.platform import Degraded, PlatformSpec
from rankwise.sim.synthetic import synthetic_model

SPEC = PlatformSpec(racks=3, nodes_per_rack=4, cores=1, seed=2)


def with_rounds(model, spread: float, seed: int):
    """Round-trip statistics from the model's fit: the median of each
    (pair, size), and a range of +-spread around it (the rounds' samples)."""
    rng = np.random.default_rng(seed)
    sizes = model.sizes.astype(float)
    median = 2 * model.alpha[..., None] + model.beta[..., None] * sizes
    median = median * np.exp(0.01 * rng.standard_normal(median.shape))
    model.rtt_median = median
    model.rtt_min, model.rtt_max = median * (1 - spread), median * (1 + spread)
    return model


def model_of(spec: PlatformSpec, seed: int, spread: float = 0.03):
    return with_rounds(synthetic_model(spec, noise=0.01, slow_noise=0.0, seed=seed), spread, seed)


def degraded(*items: Degraded) -> PlatformSpec:
    return dataclasses.replace(SPEC, degraded=items)


def test_two_probes_of_an_unchanged_network_differ_by_noise_only():
    d = diff_models(model_of(SPEC, 1), model_of(SPEC, 2))
    assert not d.any_change
    assert d.compared.sum() == 12 * 11


def test_a_degraded_uplink_is_named_and_not_its_nodes():
    # 0.1: the uplink carries 4 node links; at 0.25 a single pair would not see it (docs/concepts/simulation.md)
    d = diff_models(model_of(SPEC, 1), model_of(degraded(Degraded("uplink", 1, bw_factor=0.1)), 2))
    assert [link.name for link in d.links] == ["uplink of g1"]
    assert d.links[0].ratio > 1.5
    assert d.nodes == [] and d.unexplained == 0


def test_a_degraded_node_link_is_named_and_not_its_rack():
    d = diff_models(model_of(SPEC, 1), model_of(degraded(Degraded("node", 6, bw_factor=0.3, lat_factor=3)), 2))
    assert [c.name for c in d.nodes] == ["node-6"]
    assert d.links == []
    assert d.nodes[0].changed == d.nodes[0].pairs == 22


def test_uplink_and_node_together_are_both_named():
    after = degraded(Degraded("uplink", 0, bw_factor=0.1), Degraded("node", 9, bw_factor=0.3))
    d = diff_models(model_of(SPEC, 1), model_of(after, 2))
    assert [link.name for link in d.links] == ["uplink of g0"]
    assert [c.name for c in d.nodes] == ["node-9"]


def test_a_node_alone_in_its_group_is_named_not_its_uplink():
    """Where the first model's grouping left a node alone (real probes' noise), its slow pairs
    are its own: the node is named, not an uplink of its one-node group."""
    before = model_of(SPEC, 1)
    before.group_of = np.array([0, 0, 0, 0, 1, 2, 2, 2, 3, 3, 3, 3])  # node-4 alone in g1
    d = diff_models(before, model_of(degraded(Degraded("node", 4, bw_factor=0.1)), 2))
    assert [c.name for c in d.nodes] == ["node-4"]
    assert d.links == [] and d.unexplained == 0


def test_a_change_inside_the_measured_noise_is_not_one():
    """A 20 % slower node is a change when the rounds agree within 3 %, not
    when they spread over +-30 %: the range of samples is the noise."""
    after = degraded(Degraded("node", 3, bw_factor=0.8, lat_factor=1.25))
    assert [c.name for c in diff_models(model_of(SPEC, 1), model_of(after, 2)).nodes] == ["node-3"]
    noisy = diff_models(model_of(SPEC, 1, spread=0.3), model_of(after, 2, spread=0.3))
    assert not noisy.changed.any()


def test_threshold_is_a_floor_for_noiseless_models():
    after = degraded(Degraded("node", 3, lat_factor=1.05, bw_factor=0.95))
    a, b = model_of(SPEC, 1, spread=0.0), model_of(after, 1, spread=0.0)
    assert not diff_models(a, b).nodes
    assert [c.name for c in diff_models(a, b, threshold=0.01).nodes] == ["node-3"]


def test_the_threshold_holds_either_way():
    """The drift rule (the engine's rw_drift_strength, which the live model in the job applies
    too) is symmetric in the ratio: a pair back to its speed after being 10.5 % slower (ratio
    1 / 1.105 = 0.905) is as much a change as the slowdown was; 9 % either way is not."""
    a = model_of(SPEC, 1, spread=0.0)
    for factor, changed in ((1.105, True), (1 / 1.105, True), (1.09, False), (1 / 1.09, False)):
        b = model_of(SPEC, 1, spread=0.0)
        for arr in (b.rtt_min, b.rtt_median, b.rtt_max):
            arr[0, 1] = a.rtt_median[0, 1] * factor
        d = diff_models(a, b)
        assert bool(d.changed[0, 1]) is changed, factor
        assert int(d.changed.sum()) == int(changed)


def test_nodes_added_removed_and_matched_by_name():
    a = model_of(SPEC, 1)
    b = model_of(degraded(Degraded("node", 2, bw_factor=0.25)), 2)
    b.names = list(reversed(b.names))  # the same nodes in another order: node-2 is now index 9
    for name in ("rtt_min", "rtt_median", "rtt_max", "alpha", "beta", "state"):
        setattr(b, name, getattr(b, name)[::-1, ::-1].copy())
    d = diff_models(a, b)
    assert [c.name for c in d.nodes] == ["node-2"]
    sub = synthetic_model(SPEC, nodes=8, seed=3)
    d = diff_models(a, with_rounds(sub, 0.03, 3))
    assert d.removed == [f"node-{i}" for i in range(8, 12)] and d.added == []
    assert len(d.names) == 8


def test_a_pair_that_stops_answering_is_listed():
    a, b = model_of(SPEC, 1), model_of(SPEC, 2)
    b.state[4, 5] = 2
    b.alpha[4, 5] = b.beta[4, 5] = np.nan
    assert diff_models(a, b).newly_missing == [("node-4", "node-5")]
    assert diff_models(b, a).recovered == [("node-4", "node-5")]


def test_model_links_and_capacities_are_used_when_present():
    a = model_of(SPEC, 1)
    b = model_of(degraded(Degraded("uplink", 2, bw_factor=0.1)), 2)
    for m, cap in ((a, 5e10), (b, 1.2e10)):
        m.group_of = (np.arange(12) // 4).astype(np.int32)
        m.links = [Link(f"up-{g}", 5e10 if g != 2 else cap, (g,), None) for g in range(3)]
        m.links += [Link(f"down-{g}", 5e10, None, (g,)) for g in range(3)]
    d = diff_models(a, b)
    names = {link.name: link for link in d.links}
    assert set(names) == {"up-2", "down-2"}
    assert names["up-2"].capacity_ratio == pytest.approx(0.24)


def test_a_nic_figure_that_moved_is_reported_duplex_included():
    a, b = model_of(SPEC, 1), model_of(SPEC, 1)
    for m in (a, b):
        m.inject[:] = m.eject[:] = 1.25e10
        m.duplex[:] = 1.3e10
    b.duplex[3] = 0.65e10  # node 3's two directions now share half as much
    b.inject[5] = 0.5e10
    changes = {(c.name, c.what): c.ratio for c in diff_models(a, b).nodes if c.what != "pairs"}
    assert changes == {(a.names[3], "both directions"): pytest.approx(2.0),
                       (a.names[5], "injection"): pytest.approx(2.5)}


def test_regrouped_nodes_are_reported():
    a, b = model_of(SPEC, 1), model_of(SPEC, 2)
    a.group_of = (np.arange(12) // 4).astype(np.int32)
    b.group_of = a.group_of.copy()
    b.group_of[3] = 1
    d = diff_models(a, b)
    assert [gc.before for gc in d.groups] == [("node-0", "node-1", "node-2", "node-3"),
                                              ("node-4", "node-5", "node-6", "node-7")]


def test_diff_json_names_what_the_tables_name(tmp_path):
    """`rankwise diff --json`: one JSON document with the same changed node and pairs as
    diff_models, ratios as numbers."""
    import json

    from conftest import run_cli

    before, after = model_of(SPEC, 1), model_of(degraded(Degraded("node", 6, bw_factor=0.3, lat_factor=3)), 2)
    before.save(tmp_path / "a.rwm")
    after.save(tmp_path / "b.rwm")
    r = run_cli("diff", tmp_path / "a.rwm", tmp_path / "b.rwm", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["format"] == "rankwise-model-diff/1"
    assert [n["name"] for n in doc["nodes"]] == ["node-6"] and doc["links"] == []
    d = diff_models(before, after)
    assert [(p["src"], p["dst"]) for p in doc["pairs"]] == [(p.src, p.dst) for p in d.pairs]
    assert all(p["ratio"] > 1 for p in doc["pairs"])
