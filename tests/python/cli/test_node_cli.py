"""`rankwise node show/export` and `rankwise map --node-synthetic/--node-xml`:
what they print and write, one-line errors for bad topologies and for
bindings a launcher cannot express, and a rankfile from `map` that real
Open MPI follows on this machine."""

from __future__ import annotations

import re
import socket
import sys
from pathlib import Path

import pytest
from conftest import assert_one_line_error, run_cli

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from test_core_binding import needs_mpi, run_where, where  # noqa: E402,F401  (the fixture)

NODE = "pack:2 numa:2 core:4 pu:1"


def test_show_a_synthetic_node():
    r = run_cli("node", "show", "--synthetic", NODE)
    assert r.returncode == 0, r.stderr
    assert re.search(r"packages\s+2", r.stdout) and re.search(r"NUMA domains\s+4", r.stdout)
    assert re.search(r"cores\s+16", r.stdout)
    assert "domain 3, 1 GiB memory: cores 12-15 (OS cpus 12-15)" in r.stdout


def test_show_json_gives_the_same_node():
    import json

    r = run_cli("node", "show", "--synthetic", NODE, "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["format"] == "rankwise-node-topology/1"
    assert (doc["n_packages"], doc["n_domains"], doc["n_cores"]) == (2, 4, 16)
    assert doc["domain_of"] == [c // 4 for c in range(16)] and doc["domain_bytes"] == [2**30] * 4


def test_show_this_machine_and_its_export(tmp_path):
    live = run_cli("node", "show")
    assert live.returncode == 0 and "this machine" in live.stdout
    r = run_cli("node", "export", "-o", tmp_path / "live.xml")
    assert r.returncode == 0, r.stderr
    back = run_cli("node", "show", "--xml", tmp_path / "live.xml")
    assert back.returncode == 0
    # the same node, read back from the file
    assert back.stdout.splitlines()[1:] == live.stdout.splitlines()[1:]


@pytest.mark.parametrize("args,code,text", [
    (("--synthetic", "pack:2 kiwi:2"), 2, "synthetic topology 'pack:2 kiwi:2' is not valid"),
    (("--synthetic", NODE, "--xml", "x.xml"), 2, "not both"),
    (("--xml", "missing.xml"), 1, "missing.xml: cannot open: No such file"),
    (("--xml", "bad.xml"), 1, "bad.xml: not a topology hwloc can read"),
])
def test_bad_topologies_are_one_line_errors(tmp_path, args, code, text):
    (tmp_path / "bad.xml").write_text("<?xml version='1.0'?><topology><object")
    r = run_cli("node", "show", *args, cwd=tmp_path)
    assert r.returncode == code
    assert_one_line_error(r, text)


def test_export_refuses_another_suffix(tmp_path):
    assert_one_line_error(run_cli("node", "export", "-o", tmp_path / "node.txt"), "must end in .xml")


MAP = ("map", "--pattern", "groups:groups=4,per_group=4,bytes=1M,link_bytes=1K", "--nodelist", "n[1-2]",
       "--slots", "8", "--objective", "hop-bytes", "--node-synthetic", NODE)


def test_map_binds_heavy_pairs_in_one_domain(tmp_path):
    r = run_cli(*MAP, "--format", "openmpi", "-o", tmp_path / "rf")
    assert r.returncode == 0, r.stderr
    slot = {}
    for line in (tmp_path / "rf").read_text().splitlines():
        m = re.fullmatch(r"rank (\d+)=(\S+) slot=(\d+):(\d+)", line)
        if m:
            slot[int(m.group(1))] = (m.group(2), int(m.group(3)), int(m.group(4)) // 4)  # host, package, domain
    assert len(slot) == 16
    from rankwise.traffic.patterns import generate

    m = generate(MAP[2])
    heavy = [(s, d) for s, d, b in zip(m.src.tolist(), m.dst.tolist(), m.bytes.tolist()) if b >= 1 << 20]
    assert heavy and all(slot[s] == slot[d] for s, d in heavy)


def test_map_names_the_launcher_that_cannot_bind(tmp_path):
    r = run_cli(*MAP, "--format", "slurm", "-o", tmp_path / "hosts")
    assert_one_line_error(r, "Slurm (srun --cpu-bind=map_cpu) applies one cpu list to every node")
    assert not (tmp_path / "hosts").exists()


def test_map_refuses_more_slots_than_cores(tmp_path):
    r = run_cli("map", "--pattern", "ring:ranks=8,bytes=1K", "--nodelist", "n1", "--slots", "8",
                "--objective", "hop-bytes", "--node-synthetic", "pack:1 core:4 pu:1", "-o", tmp_path / "p.txt")
    assert_one_line_error(r, "node 'n1' holds 8 ranks, but the node topology (synthetic: pack:1 core:4 pu:1) has 4 cores")


@needs_mpi
def test_a_rankfile_from_map_runs_where_it_says(where, tmp_path):
    """This machine's topology exported, a job mapped onto it, run under Open MPI."""
    assert run_cli("node", "export", "-o", tmp_path / "live.xml").returncode == 0
    host = socket.gethostname()
    r = run_cli("map", "--pattern", "ring:ranks=2,bytes=1K", "--nodelist", host, "--slots", "2",
                "--objective", "hop-bytes", "--node-xml", tmp_path / "live.xml", "--format", "openmpi",
                "-o", tmp_path / "rf")
    if r.returncode != 0 and "has 1 cores" in r.stderr:
        pytest.skip("one core")
    assert r.returncode == 0, r.stderr
    from rankwise.model.node import NodeTopology

    live = NodeTopology.load(xml=tmp_path / "live.xml")
    found = run_where(where, tmp_path / "rf", 2)
    for line in (tmp_path / "rf").read_text().splitlines():
        m = re.fullmatch(r"rank (\d+)=\S+ slot=(\d+):(\d+)", line)
        if m:
            core = [c for c in range(live.n_cores)
                    if live.package_of[c] == int(m.group(2)) and live.core_in_package[c] == int(m.group(3))][0]
            assert found[int(m.group(1))][0] == live.cpu_of[core]
