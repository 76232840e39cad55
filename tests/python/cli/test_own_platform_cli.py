"""`coll bench`, `validate` and `optimize` on a user's own SimGrid platform (a hand-written XML,
no ground_truth.json beside it) with a model probed from it (issue 21, item 5); bad inputs give
one-line errors and write nothing."""

from __future__ import annotations

import csv
import shutil

import pytest
from conftest import assert_one_line_error, run_cli

pytestmark = pytest.mark.skipif(not (shutil.which("smpicc") and shutil.which("smpirun")), reason="no SimGrid")

# Two racks of two hosts behind their uplinks; b1's NIC at a quarter of the others' bandwidth.
XML = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="lab" routing="Full">
    <host id="{p}0" speed="1Gf" core="2"/>
    <host id="{p}1" speed="1Gf" core="2"/>
    <host id="{p}2" speed="1Gf" core="2"/>
    <host id="{p}3" speed="1Gf" core="2"/>
    <link id="nic0" bandwidth="10GBps" latency="1us"/>
    <link id="nic1" bandwidth="2.5GBps" latency="1us"/>
    <link id="nic2" bandwidth="10GBps" latency="1us"/>
    <link id="nic3" bandwidth="10GBps" latency="1us"/>
    <link id="upA" bandwidth="20GBps" latency="2us"/>
    <link id="upB" bandwidth="20GBps" latency="2us"/>
    <route src="{p}0" dst="{p}1"><link_ctn id="nic0"/><link_ctn id="nic1"/></route>
    <route src="{p}2" dst="{p}3"><link_ctn id="nic2"/><link_ctn id="nic3"/></route>
    <route src="{p}0" dst="{p}2"><link_ctn id="nic0"/><link_ctn id="upA"/><link_ctn id="upB"/><link_ctn id="nic2"/></route>
    <route src="{p}0" dst="{p}3"><link_ctn id="nic0"/><link_ctn id="upA"/><link_ctn id="upB"/><link_ctn id="nic3"/></route>
    <route src="{p}1" dst="{p}2"><link_ctn id="nic1"/><link_ctn id="upA"/><link_ctn id="upB"/><link_ctn id="nic2"/></route>
    <route src="{p}1" dst="{p}3"><link_ctn id="nic1"/><link_ctn id="upA"/><link_ctn id="upB"/><link_ctn id="nic3"/></route>
  </zone>
</platform>
"""


@pytest.fixture(scope="module")
def own(tmp_path_factory):
    """(lab.xml, its probed model, a model of another platform whose hosts are named otherwise,
    a model of two of lab's hosts, a truncated XML)."""
    d = tmp_path_factory.mktemp("own")
    xml, other = d / "lab.xml", d / "other.xml"
    xml.write_text(XML.format(p="b"))
    other.write_text(XML.format(p="x"))
    broken = d / "broken.xml"
    broken.write_text(XML.format(p="b")[:700])
    models = {}
    for name, plat, extra in (("lab", xml, ["--ranks-per-node", "2"]), ("other", other, []),
                              ("half", xml, ["--nodes", "2"])):
        r = run_cli("probe", "--sim", plat, *extra, "-o", d / f"{name}.rwm", cwd=d)
        assert r.returncode == 0, r.stderr
        models[name] = d / f"{name}.rwm"
    assert not (d / "ground_truth.json").exists()
    return xml, models["lab"], models["other"], models["half"], broken


def test_validate_from_the_probed_model(tmp_path, own):
    xml, model, *_ = own
    r = run_cli("validate", "--sim", xml, "--model", model, "--op", "bcast", "--algorithm", "binomial",
                "--ranks", "8", "--ranks-per-node", "2", "--sizes", "1K,64K", "-o", tmp_path / "v.csv", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader(open(tmp_path / "v.csv", newline="")))
    assert [int(x["size"]) for x in rows] == [1024, 65536]
    assert all(abs(float(x["error"])) < 0.25 for x in rows), rows


def test_coll_bench_tunes_from_the_probed_model(tmp_path, own):
    xml, model, *_ = own
    r = run_cli("coll", "bench", "--sim", xml, "--model", model, "--ranks", "8", "--ranks-per-node", "2",
                "--ops", "bcast", "--sizes", "8,1K", "--out", tmp_path / "out", cwd=tmp_path)
    assert r.returncode in (0, 1), r.stderr  # 1: a goal missed on this tiny platform; the run itself is fine
    assert "Traceback" not in r.stderr
    assert f"from {model}" in r.stdout.replace("\n", "")
    # SMPI runs under the overheads the model was probed under (its latencies hold them)
    from rankwise.model.model import Model
    from rankwise.sim.smpi import model_overheads

    os_, or_ = model_overheads(Model.load(model))
    assert os_ < 1e-7 and or_ < 1e-7  # probed under SMPI's defaults: none
    assert f"overheads {os_ * 1e6:g} / {or_ * 1e6:g} us per eager message" in " ".join(r.stdout.split())
    rows = list(csv.DictReader(open(tmp_path / "out" / "coll-lab.csv", newline="")))
    assert [(x["op"], int(x["size"]), x["ranks"]) for x in rows] == [("bcast", 8, "8"), ("bcast", 1024, "8")]
    assert (tmp_path / "out" / "rules" / "lab-8x2.rwr").is_file()


def test_optimize_prints_predicted_against_measured_per_size(tmp_path, own):
    xml, model, *_ = own
    r = run_cli("optimize", "--sim", xml, "--model", model, "--ranks", "8", "--ranks-per-node", "2",
                "--repeats", "1", "--out", tmp_path / "opt", "--", "alltoall", "--sizes", "1K,64K", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    out = " ".join(r.stdout.split())
    assert "pred / meas" in out
    assert f"predicted (from {model.name}) vs measured speed-up" in out
    rows = list(csv.DictReader(open(tmp_path / "opt" / "verify.csv", newline="")))
    assert [int(x["size"]) for x in rows] == [1024, 65536]
    assert all(float(x["predicted_speedup"]) > 0 for x in rows)


def test_no_model_and_no_ground_truth_say_what_to_do(tmp_path, own):
    xml, *_ = own
    r = run_cli("validate", "--sim", xml, "--op", "bcast", "--ranks", "4", cwd=tmp_path)
    assert_one_line_error(r, "no ground_truth.json beside lab.xml")
    assert "--model MODEL" in r.stderr
    r = run_cli("coll", "bench", "--sim", xml, "--quick", "--out", tmp_path / "out", cwd=tmp_path)
    assert_one_line_error(r, "no ground_truth.json beside lab.xml")
    assert r.returncode == 2 and not (tmp_path / "out").exists()


def test_model_lacking_a_host_is_one_line(tmp_path, own):
    xml, _, other, half, _ = own
    r = run_cli("validate", "--sim", xml, "--model", half, "--op", "bcast", "--ranks", "4", "--sizes", "1K",
                cwd=tmp_path)
    assert_one_line_error(r, "'b2'")
    r = run_cli("coll", "bench", "--sim", xml, "--model", half, "--ranks", "4", "--ranks-per-node", "1",
                "--ops", "bcast", "--sizes", "8", "--out", tmp_path / "cb", cwd=tmp_path)
    assert_one_line_error(r, "host 'b2' of")
    assert not (tmp_path / "cb").exists()
    r = run_cli("optimize", "--sim", xml, "--model", other, "--out", tmp_path / "opt", "--", "alltoall",
                "--sizes", "1K", cwd=tmp_path)
    assert_one_line_error(r, "node 'x0' of the model is not a host of")
    assert not any((tmp_path / "opt").iterdir())  # nothing written


def test_wrong_xml_is_one_line(tmp_path, own):
    _, model, _, _, broken = own
    for args in (["validate", "--sim", broken, "--model", model, "--op", "bcast", "--ranks", "4"],
                 ["coll", "bench", "--sim", broken, "--model", model, "--quick", "--out", tmp_path / "cb"],
                 ["optimize", "--sim", broken, "--model", model, "--out", tmp_path / "opt", "--", "alltoall"]):
        r = run_cli(*args, cwd=tmp_path)
        assert_one_line_error(r, "broken.xml:")
        assert "XML syntax error" in r.stderr
    assert not (tmp_path / "cb").exists() and not (tmp_path / "opt").exists()
