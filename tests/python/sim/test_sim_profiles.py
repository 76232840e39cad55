"""A simulated network that degrades at a given simulated time (sim/profiles.py)."""

from __future__ import annotations

import json

import pytest

from rankwise.util.errors import UsageError
from rankwise.model.diff import diff_models
from rankwise.measure.probe import ProbeOptions, probe_sim
from rankwise.sim.platform import Degraded, PlatformSpec, Varying, generate, load_generated
from rankwise.sim.profiles import cycle, platform_at, read_profile, schedule, shift

SPEC = PlatformSpec(racks=3, nodes_per_rack=2, cores=1)
LATER = [Degraded("uplink", 1, bw_factor=0.1), Degraded("node", 4, bw_factor=0.5, lat_factor=3.0)]
OPTIONS = ProbeOptions(sizes="8,64K,1M", repetitions=2, rounds=2, intra=False)


def test_shift_of_a_step_and_of_a_periodic_profile():
    assert shift([(0.0, 1.0), (0.5, 2.0)], None, 0.2) == ([(0.0, 1.0), (pytest.approx(0.3), 2.0)], None)
    assert shift([(0.0, 1.0), (0.5, 2.0)], None, 0.7) == ([(0.0, 2.0)], None)
    # a cycle of 1 s (last event at 0.6, LOOPAFTER 0.4) seen from 0.45 on: 2, then 3 at 0.6, 1 at 1.0...
    events, loop = shift([(0.0, 1.0), (0.3, 2.0), (0.6, 3.0)], 0.4, 1.45)
    assert [v for _, v in events] == [2.0, 3.0, 1.0, 2.0]
    assert [round(t, 9) for t, _ in events] == [0.0, 0.15, 0.55, 0.85]
    assert events[-1][0] + loop == pytest.approx(1.0)


def test_schedule_writes_profiles_and_the_change_in_the_ground_truth(tmp_path):
    gen = generate(SPEC, tmp_path)
    schedule(gen, LATER, 0.5)
    xml = gen.platform_xml.read_text()
    assert 'bandwidth_file="profiles/up-1.bandwidth-at.profile"' in xml
    assert 'latency_file="profiles/node-4.latency-at.profile"' in xml
    assert read_profile(tmp_path / "profiles/up-1.bandwidth-at.profile") == ([(0.0, 25e9), (0.5, 2.5e9)], None)
    changes = json.loads(gen.ground_truth.read_text())["changes"]
    assert [(c["link"], c["at"]) for c in changes] == [("up-1", 0.5), ("node-4", 0.5)]
    assert load_generated(tmp_path).nodes == gen.nodes  # the ground truth still reads


def test_cycle_is_the_longest_varying_links_period_and_none_for_a_step(tmp_path):
    gen = generate(PlatformSpec(racks=3, nodes_per_rack=2, cores=1, varying=[
        Varying("node", 4, period=0.01), Varying("uplink", 1, period=0.03, steps=7)]), tmp_path / "v")
    assert cycle(gen.platform_xml) == pytest.approx(0.03)
    step = generate(SPEC, tmp_path / "s")
    assert cycle(step.platform_xml) is None
    schedule(step, LATER, 0.5)  # a change at a time does not repeat
    assert cycle(step.platform_xml) is None


def test_a_varying_link_cannot_also_change_bandwidth_at_a_time(tmp_path):
    gen = generate(PlatformSpec(racks=3, nodes_per_rack=2, cores=1, varying=[Varying("node", 4)]), tmp_path)
    with pytest.raises(UsageError, match="already varies"):
        schedule(gen, [Degraded("node", 4, bw_factor=0.5)], 0.5)
    schedule(gen, [Degraded("node", 4, lat_factor=2.0)], 0.5)  # its latency can
    assert 'latency_file="profiles/node-4.latency-at.profile"' in gen.platform_xml.read_text()


def test_sim_platform_refuses_before_writing(tmp_path):
    from conftest import assert_one_line_error, run_cli

    base = ("sim", "platform", "--racks", "2", "--nodes-per-rack", "2", "-o", tmp_path / "p")
    for extra, text in ((("--degrade-at", "0", "--degrade", "node:1:0.5"), "> 0 seconds"),
                        (("--degrade-at", "1", "--degrade", "uplink:5:0.5"), "out of range"),
                        (("--degrade-at", "1", "--degrade", "node:1:-2"), "positive"),
                        (("--degrade-at", "1", "--vary", "node:1", "--degrade", "node:1:0.5"), "already varies"),
                        (("--degrade-at", "1"), "needs at least one --degrade")):
        r = run_cli(*base, *extra)
        assert r.returncode == 2, (extra, r.stderr)
        assert_one_line_error(r, text)
        assert not (tmp_path / "p").exists()


def test_probes_before_and_after_the_change_and_diff_names_it(tmp_path):
    """Probes started at simulated 0 and at 1 s on a platform whose rack 1
    uplink and node 4 degrade at 0.5 s: the first sees the plain network,
    the second the degradation, and the diff names rack 1's uplink and node 4."""
    plain = probe_sim(generate(SPEC, tmp_path / "plain").platform_xml, tmp_path / "plain.rwm", OPTIONS,
                      show_progress=False)
    gen = generate(SPEC, tmp_path / "changing")
    schedule(gen, LATER, 0.5)
    before = probe_sim(platform_at(gen.platform_xml, 0.0, tmp_path / "at0"), tmp_path / "before.rwm", OPTIONS,
                       show_progress=False)
    after = probe_sim(platform_at(gen.platform_xml, 1.0, tmp_path / "at1"), tmp_path / "after.rwm", OPTIONS,
                      show_progress=False)
    assert before.duration < 0.5  # the whole first probe ran before the change
    assert not diff_models(plain, before).any_change
    d = diff_models(before, after)
    assert [link.name for link in d.links] == ["uplink of g1"]
    assert [d.names[i] for i in range(6) if d.group_of[i] == 1] == ["node-2", "node-3"]
    assert [c.name for c in d.nodes] == ["node-4"] and d.unexplained == 0
