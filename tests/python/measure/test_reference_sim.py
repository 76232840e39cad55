"""The reference pass (engine/mpi/probe/reference.c): after the concurrent tournament, pairs across
groups get the bandwidth of a lone pair, not what they got among round-mates sharing an uplink."""

from __future__ import annotations

import numpy as np

from rankwise.measure.probe import ProbeOptions, probe_sim
from rankwise.sim.platform import Degraded, PlatformSpec, generate

SIZES = "8,64K,1M,4M"


def ratios(spec, tmp_path, references, costs=None, **options):
    """Model bandwidth over the lone pair's, per ordered pair of the platform's nodes (NaN on the
    diagonal), and the platform. costs: a list the reference pass's cost is appended to."""
    gen = generate(spec, tmp_path / "plat")
    model = probe_sim(gen.platform_xml, tmp_path / f"m{int(references)}.rwm",
                      ProbeOptions(sizes=SIZES, references=references, **options), show_progress=False,
                      on_reference_cost=None if costs is None else costs.append)
    idx = [model.index(name) for name in gen.nodes]
    r = model.bandwidth[np.ix_(idx, idx)] / gen.bandwidth
    np.fill_diagonal(r, np.nan)
    return r, gen


def cross(gen):
    rack = gen.rack_of_node
    return rack[:, None] != rack[None, :]


def test_an_oversubscribed_two_rack_tree_gets_lone_pair_bandwidths(tmp_path):
    # Two racks of 4 behind 4:1 uplinks: one cross pair alone gets the full NIC, the concurrent
    # rounds put up to 4 of them on an uplink.
    spec = PlatformSpec(racks=2, nodes_per_rack=4, cores=1, oversubscription=4.0, shuffle_racks=True, seed=3)
    no_pass, with_pass = [], []
    before, gen = ratios(spec, tmp_path / "before", references=False, costs=no_pass)
    after, _ = ratios(spec, tmp_path / "after", references=True, costs=with_pass)
    x = cross(gen)
    assert no_pass == [] and len(with_pass) == 1
    # Two groups: one round of the group tournament per sample, 3 samples; pairs raised by more
    # than 25 % (median).
    assert with_pass[0].rounds == 3 and with_pass[0].seconds > 0 and with_pass[0].wall >= 0
    assert with_pass[0].raised > 0 and with_pass[0].gain > 0.25
    assert np.median(before[x]) < 0.8  # contention written as pair bandwidth
    np.testing.assert_allclose(after[x], 1.0, rtol=0.05)
    np.testing.assert_allclose(after[~x & ~np.eye(len(x), dtype=bool)], 1.0, rtol=0.05)


def test_a_slow_nic_stays_slow_and_nothing_gets_faster_than_alone(tmp_path):
    # Node 1 (rack 0) at a quarter of the bandwidth: its pairs keep its pace; no pair above its
    # lone bandwidth.
    spec = PlatformSpec(racks=3, nodes_per_rack=4, cores=1, oversubscription=4.0,
                        degraded=[Degraded("node", 1, bw_factor=0.25)])
    after, gen = ratios(spec, tmp_path, references=True)
    off = ~np.isnan(after)
    assert np.nanmax(after) < 1.05
    assert np.median(after[off]) > 0.97
    np.testing.assert_allclose(after[1][off[1]], 1.0, rtol=0.05)  # slow out of node 1 as alone
    np.testing.assert_allclose(after[:, 1][off[:, 1]], 1.0, rtol=0.05)


def test_isolated_mode_has_no_reference_pass_and_measures_lone_pairs(tmp_path):
    spec = PlatformSpec(racks=2, nodes_per_rack=3, cores=1, oversubscription=3.0)
    costs = []
    a, _ = ratios(spec, tmp_path / "a", references=True, costs=costs, mode="isolated")
    b, _ = ratios(spec, tmp_path / "b", references=False, mode="isolated")
    assert costs == []
    np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(a[~np.isnan(a)], 1.0, rtol=0.05)


def test_no_reference_pass_once_the_time_budget_is_spent(tmp_path):
    # A budget the first rounds already spend: the tournament stops, and the pass does not start.
    spec = PlatformSpec(racks=2, nodes_per_rack=3, cores=1, oversubscription=3.0)
    gen = generate(spec, tmp_path / "plat")
    costs = []
    probe_sim(gen.platform_xml, tmp_path / "m.rwm", ProbeOptions(sizes=SIZES, time_budget=1e-6),
              show_progress=False, on_reference_cost=costs.append)
    assert costs == []
