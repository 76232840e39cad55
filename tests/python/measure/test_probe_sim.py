"""The probe on small simulated clusters: exact-enough numbers, faults found,
odd counts, intra-node figures, unanswered nodes, partial re-probes."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from rankwise.model.anomalies import find_slow_links
from rankwise.model.model import MEASURED, MISSING, UNPROBED, Model
from rankwise.measure.probe import ProbeOptions, probe_sim
from rankwise.sim.platform import Degraded, PlatformSpec, generate

FAST = dict(sizes="8,1K,64K,1M", repetitions=2, rounds=2)


def off_diagonal(n):
    return ~np.eye(n, dtype=bool)


def test_isolated_probe_matches_ground_truth_and_finds_degraded_links(small_platform, tmp_path):
    gen = small_platform
    model = probe_sim(gen.platform_xml, tmp_path / "m.rwm", ProbeOptions(mode="isolated", **FAST),
                      show_progress=False)
    n = len(gen.nodes)
    assert model.names == gen.nodes
    assert (model.state[off_diagonal(n)] == MEASURED).all()
    mask = off_diagonal(n)
    expected_alpha = (gen.alpha + gen.alpha.T) / 2  # the fit sees both directions' latency
    np.testing.assert_allclose(model.alpha[mask], expected_alpha[mask], rtol=0.02)
    np.testing.assert_allclose(model.bandwidth[mask], gen.bandwidth[mask], rtol=0.02)
    assert model.duration > 0

    findings = find_slow_links(model)
    assert sorted(findings.slow_nodes) == [2, 5]  # latency x4 and bandwidth x0.25
    assert findings.flagged() == set(gen.changed_pairs)


def test_concurrent_probe_measures_intra_node_and_sees_the_congested_uplink(tmp_path):
    spec = PlatformSpec(racks=3, nodes_per_rack=4, cores=2, degraded=[Degraded("uplink", 2, bw_factor=0.1)])
    gen = generate(spec, tmp_path / "plat")
    model = probe_sim(gen.platform_xml, tmp_path / "m.rwm", ProbeOptions(**FAST), ranks_per_node=2,
                      show_progress=False)
    assert (model.ranks_per_node == 2).all()
    assert (model.intra_state == MEASURED).all()
    np.testing.assert_allclose(model.intra_alpha, spec.loopback_lat, rtol=0.1)
    np.testing.assert_allclose(1 / model.intra_beta, spec.loopback_bw, rtol=0.02)
    findings = find_slow_links(model)
    rack2 = findings.groups[8]
    assert findings.slow_nodes == []
    assert findings.slow_blocks and all(rack2 in block for block in findings.slow_blocks)


@pytest.mark.parametrize("nodes", [2, 3, 5])
def test_small_and_odd_node_counts_measure_every_pair(small_platform, tmp_path, nodes):
    model = probe_sim(small_platform.platform_xml, tmp_path / "m.rwm", ProbeOptions(**FAST), nodes=nodes,
                      show_progress=False)
    assert model.n_nodes == nodes
    assert (model.state[off_diagonal(nodes)] == MEASURED).all()
    assert (np.diag(model.state) == UNPROBED).all()


def test_node_that_does_not_answer_is_recorded_missing(tmp_path):
    spec = PlatformSpec(racks=1, nodes_per_rack=4, cores=1, unreachable=[3])
    gen = generate(spec, tmp_path / "plat")
    model = probe_sim(gen.platform_xml, tmp_path / "m.rwm", ProbeOptions(timeout=0.5, **FAST),
                      show_progress=False)
    for i in range(4):
        for j in range(4):
            if i != j:
                assert model.state[i, j] == (MISSING if 3 in (i, j) else MEASURED), (i, j)
    assert model.missing_pairs()


def test_partial_reprobe_merges_into_the_existing_model(tmp_path):
    spec = PlatformSpec(racks=1, nodes_per_rack=4, cores=1)
    healthy = generate(spec, tmp_path / "healthy")
    base_path = tmp_path / "base.rwm"
    base = probe_sim(healthy.platform_xml, base_path, ProbeOptions(**FAST), show_progress=False)

    # Later node-1's cable degrades; only its pairs are measured again.
    worse = generate(dataclasses.replace(spec, degraded=[Degraded("node", 1, bw_factor=0.25)]), tmp_path / "worse")
    touching = [(a, b) for a in base.names for b in base.names if a != b and "node-1" in (a, b)]
    merged = probe_sim(worse.platform_xml, tmp_path / "merged.rwm",
                       ProbeOptions(update=base_path, pairs=touching, **FAST), show_progress=False)
    for i in range(4):
        for j in range(4):
            if i == j:
                continue
            if 1 in (i, j):
                assert merged.bandwidth[i, j] == pytest.approx(spec.node_bw / 4, rel=0.02)
                # stamped by the re-probe (wall time under SMPI too), after the base's
                assert merged.measured_at[i, j] > np.nanmax(base.measured_at)
            else:  # untouched: exactly the old numbers
                assert merged.bandwidth[i, j] == base.bandwidth[i, j]
                assert merged.measured_at[i, j] == base.measured_at[i, j]
    assert Model.load(base_path).equals(base)  # the base file itself is unchanged


def test_time_budget_stops_early_and_still_writes_a_model(small_platform, tmp_path):
    model = probe_sim(small_platform.platform_xml, tmp_path / "m.rwm",
                      ProbeOptions(time_budget=1e-9, **FAST), show_progress=False)
    measured = (model.state == MEASURED).sum()
    unprobed = (model.state[off_diagonal(model.n_nodes)] == UNPROBED).sum()
    assert measured > 0 and unprobed > 0  # one tournament round done, then stopped
    done = model.state == MEASURED
    # Statistics only over the rounds that ran: 2 repetitions of round 0.
    assert (model.samples[done] == 2).all()
    assert (model.rtt_min[done] > 0).all()
