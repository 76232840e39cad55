"""`rankwise watch` on tiny simulated platforms: the series, its index, its comparisons."""

from __future__ import annotations

from conftest import assert_one_line_error, run_cli

from rankwise.model.model import Model
from rankwise.sim.platform import PlatformSpec, generate
from rankwise.measure.watch import read_index

PROBE = ("--sizes", "8,64K,1M", "--repetitions", "2", "--rounds", "2")


def test_two_probes_into_a_series_and_continued(tmp_path):
    gen = generate(PlatformSpec(racks=2, nodes_per_rack=2, cores=1), tmp_path / "p")
    out = tmp_path / "series"
    r = run_cli("watch", "--sim", gen.platform_xml, "-o", out, "--every", "0", "--count", "2",
                "--pairs-fraction", "0.5", *PROBE)
    assert r.returncode == 0, r.stderr
    entries = read_index(out)
    assert [(e.seq, e.pairs, e.changed) for e in entries] == [(1, 12, None), (2, 6, 0)]
    assert "0 of 6 compared pairs changed" in r.stdout  # the slice re-measured, nothing else
    assert entries[0].model.startswith("model-0001-") and entries[1].model.startswith("model-0002-")
    assert entries[1].sim_start == entries[0].sim_end > 0  # the simulated clock runs on through the probes
    assert (out / "change-0002.png").read_bytes()[:4] == b"\x89PNG"
    # the first model's pairs not re-measured are carried into the second
    first, second = (Model.load(out / e.model) for e in entries)
    assert ((first.measured_at == second.measured_at) & (first.state == 1)).sum() == 6
    assert "#2" in r.stdout and "0 of 6 compared pairs changed" in r.stdout
    # a second watch into the folder continues the series with the next slice of pairs
    r = run_cli("watch", "--sim", gen.platform_xml, "-o", out, "--every", "0", "--count", "1",
                "--pairs-fraction", "0.5", "--no-plot")
    assert r.returncode == 0, r.stderr
    assert "continuing the series" in r.stdout
    assert [e.seq for e in read_index(out)] == [1, 2, 3]
    third = Model.load(out / read_index(out)[2].model)
    assert ((third.measured_at != second.measured_at) & (second.state == 1)).sum() == 6


def test_watch_sees_an_uplink_degrading_at_a_simulated_time(tmp_path):
    """The platform's rack 1 uplink falls to a tenth at simulated 0.5 s: the
    first probe (from 0) does not see it, the second (from 1 s on) does, and
    names it as the uplink of rack 1's group."""
    plat = tmp_path / "p"
    r = run_cli("sim", "platform", "-o", plat, "--racks", "3", "--nodes-per-rack", "2", "--cores", "1",
                "--degrade-at", "0.5", "--degrade", "uplink:1:0.1")
    assert r.returncode == 0, r.stderr
    r = run_cli("watch", "--sim", plat / "platform.xml", "-o", tmp_path / "w", "--every", "1s", "--count", "2",
                *PROBE)
    assert r.returncode == 0, r.stderr
    first, second = read_index(tmp_path / "w")
    assert first.sim_end < 0.5 < second.sim_start
    assert second.links == ["uplink of g1"] and second.nodes == []
    groups = Model.load(tmp_path / "w" / first.model).groups()
    assert groups[2] == groups[3] and groups[2] not in (groups[0], groups[4])  # g1 is rack 1: node-2, node-3


def test_watch_usage_and_file_errors(tmp_path):
    gen = generate(PlatformSpec(racks=1, nodes_per_rack=2, cores=1), tmp_path / "p")
    plat = gen.platform_xml
    for args, text in ((("--every", "soon"), "--every"), (("--pairs-fraction", "0"), "--pairs-fraction"),
                       (("--count", "0"), "--count"), (("--launcher", "mpirun"), "exactly one")):
        r = run_cli("watch", "--sim", plat, "-o", tmp_path / "w", *args)
        assert r.returncode == 2, (args, r.stderr)
        assert_one_line_error(r, text)
    (tmp_path / "file").write_text("x")
    assert_one_line_error(run_cli("watch", "--sim", plat, "-o", tmp_path / "file", "--count", "1"), "is not a folder")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "index.tsv").write_text("something else\n")
    r = run_cli("watch", "--sim", plat, "-o", tmp_path / "bad", "--count", "1")
    assert r.returncode == 1
    assert_one_line_error(r, "index.tsv:1: not a watch index")
    assert not list((tmp_path / "bad").glob("*.rwm"))  # nothing probed into a folder it cannot continue


def test_diff_takes_models_of_a_series_by_number(tmp_path):
    gen = generate(PlatformSpec(racks=2, nodes_per_rack=2, cores=1), tmp_path / "p")
    out = tmp_path / "series"
    assert run_cli("watch", "--sim", gen.platform_xml, "-o", out, "--every", "0", "--count", "2", "--no-plot",
                   *PROBE).returncode == 0
    assert [e.changed for e in read_index(out)] == [None, 0]
    latest = run_cli("diff", out / "1", out)  # the first and the latest
    assert latest.returncode == 0, latest.stderr
    assert "no change beyond the measured noise" in latest.stdout
    assert run_cli("diff", out / "1", out / "2").stdout == latest.stdout
    assert_one_line_error(run_cli("diff", out / "1", out / "7"), "has no model 7")
