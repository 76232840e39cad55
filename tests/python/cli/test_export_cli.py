"""`rankwise export slurm-topology` on a probed simulated platform."""

from __future__ import annotations

from conftest import assert_one_line_error, run_cli
from slurm_conf import check_topology_conf, nodes_under


def test_slurm_topology_of_a_probed_platform(small_platform, tmp_path):
    """2 racks of 4: two leaf switches holding the racks' nodes under one
    root; node 5 (a quarter of the bandwidth) and node 2 (4x latency) to avoid."""
    model = tmp_path / "m.rwm"
    r = run_cli("probe", "--sim", small_platform.platform_xml, "-o", model, "--sizes", "8,64K,1M",
                "--repetitions", "2", "--rounds", "1", "--no-intra")
    assert r.returncode == 0, r.stderr
    conf = tmp_path / "slurm" / "topology.conf"
    r = run_cli("export", "slurm-topology", model, "-o", conf)
    assert r.returncode == 0, r.stderr
    switches = check_topology_conf(conf.read_text())
    leaves = sorted(sorted(s["nodes"]) for s in switches.values() if s["nodes"])
    racks = sorted(sorted(f"node-{i}" for i in range(8) if small_platform.rack_of_node[i] == r) for r in (0, 1))
    assert leaves == racks
    assert sorted(nodes_under(switches, "rw-root")) == sorted(f"node-{i}" for i in range(8))
    avoid = (tmp_path / "slurm" / "topology.avoid").read_text().splitlines()
    assert sorted(line.split("\t")[0] for line in avoid if not line.startswith("#")) == ["node-2", "node-5"]
    assert "# hostlist: node-[2,5]" in avoid


def test_export_errors(tmp_path):
    bad = tmp_path / "bad.rwm"
    bad.write_text("rankwise-model 9\n")
    out = tmp_path / "t.conf"
    assert_one_line_error(run_cli("export", "slurm-topology", bad, "-o", out), f"{bad}:1")
    assert not out.exists() and not out.with_suffix(".avoid").exists()
    assert_one_line_error(run_cli("export", "slurm-topology", tmp_path / "none.rwm", "-o", out), "none.rwm")
    r = run_cli("export", "slurm-topology", bad, "-o", out, "--avoid", out)
    assert r.returncode == 2 and "same file" in r.stderr
    assert run_cli("export", "nothing").returncode == 2
