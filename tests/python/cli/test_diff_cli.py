"""`rankwise diff` as a user meets it: two simulated probes, before and after a degradation."""

from __future__ import annotations

import pytest
from conftest import assert_one_line_error, run_cli

from rankwise.sim.platform import Degraded, PlatformSpec, generate

PROBE = ("--sizes", "8,64K,1M", "--repetitions", "2", "--rounds", "2", "--no-intra")


@pytest.fixture(scope="module")
def before_after(tmp_path_factory):
    """Models of 3 racks x 2 nodes, plain then with rack 1's uplink at a
    tenth and node 4's link at half the bandwidth and 3x the latency."""
    tmp = tmp_path_factory.mktemp("diff")
    spec = PlatformSpec(racks=3, nodes_per_rack=2, cores=1)
    worse = PlatformSpec(racks=3, nodes_per_rack=2, cores=1,
                         degraded=[Degraded("uplink", 1, bw_factor=0.1), Degraded("node", 4, 0.5, 3.0)])
    models = []
    for name, s in (("a", spec), ("b", worse), ("again", spec)):
        gen = generate(s, tmp / name)
        out = tmp / f"{name}.rwm"
        r = run_cli("probe", "--sim", gen.platform_xml, "-o", out, *PROBE)
        assert r.returncode == 0, r.stderr
        models.append(out)
    return tmp, models


def test_diff_names_the_degraded_uplink_and_node(before_after):
    tmp, (a, b, _) = before_after
    png = tmp / "change.png"
    r = run_cli("diff", a, b, "--plot", png)
    assert r.returncode == 0, r.stderr
    head = next(line for line in r.stdout.splitlines() if "compared pairs changed" in line)
    assert "links uplink of g1" in head and "nodes node-4" in head
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_diff_of_two_probes_of_one_network_finds_nothing(before_after):
    _, (a, _, again) = before_after
    r = run_cli("diff", a, again)
    assert r.returncode == 0, r.stderr
    assert "0 of 30 compared pairs changed" in r.stdout and "no change beyond the measured noise" in r.stdout
    # a model against itself: every pair is the same measurement, none is compared
    assert "0 of 0 compared pairs changed" in run_cli("diff", a, a).stdout


def test_diff_bad_inputs_are_one_line_errors(before_after, tmp_path):
    _, (a, _, _) = before_after
    bad = tmp_path / "bad.rwm"
    bad.write_text("rankwise-model 2\nnodes x\n")
    assert_one_line_error(run_cli("diff", a, bad), f"{bad}:2")
    assert_one_line_error(run_cli("diff", a, tmp_path / "none.rwm"), "none.rwm")
    assert_one_line_error(run_cli("diff", a, tmp_path), "is a directory")
    r = run_cli("diff", a, a, "--threshold", "-1")
    assert r.returncode == 2 and "--threshold" in r.stderr
    assert_one_line_error(run_cli("diff", a, a, "--plot", "/dev/null"), "/dev/null: is a character device")
