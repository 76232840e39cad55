"""`rankwise optimize`: the pipeline on a simulated cluster and on real MPI,
and the before/after method (interleaved runs, outliers dropped)."""

from __future__ import annotations

import shutil
import subprocess
import time

import numpy as np
import pytest
from conftest import assert_one_line_error, run_cli

from rankwise.util.errors import RankwiseError
from rankwise.cluster.launch import mpi_environment
from rankwise.traffic.matrix import CommMatrix
from rankwise.model.model import MISSING, Model
from rankwise.workflows.optimize import app_runner, benchmark_name, compare, robust_median
from rankwise.cluster.placement import launch_host

real_mpi = pytest.mark.skipif(not shutil.which("mpirun"), reason="no mpirun on this machine")


def test_robust_median_drops_runs_an_order_of_magnitude_off():
    assert robust_median([1.0, 1.1, 0.9, 50.0]) == pytest.approx(1.0)
    assert robust_median([1.0, 1.2, 0.01]) == pytest.approx(1.1)
    assert np.isnan(robust_median([]))


def test_compare_interleaves_and_keeps_what_succeeded():
    calls = []

    def runner(hosts):
        calls.append(hosts[0])
        if hosts[0] == "bad":
            raise RankwiseError("rank 3 died")
        return {1024: 10.0 if hosts[0] == "slow" else 5.0, 2048: 20.0 if hosts[0] == "slow" else 8.0}

    c = compare("x", runner, ["slow"], ["fast"], repeats=3)
    assert calls == ["slow", "fast"] * 3  # interleaved
    assert c.rows() == [(1024, 10.0, 5.0, 2.0), (2048, 20.0, 8.0, 2.5)]
    half = compare("y", runner, ["bad"], ["fast"], repeats=2)
    assert np.all(np.isnan(half.before)) and half.after.tolist() == [5.0, 8.0]
    assert half.failures == ["before run 1: rank 3 died", "before run 2: rank 3 died"]
    with pytest.raises(RankwiseError, match="no run succeeded"):
        compare("z", runner, ["bad"], ["bad"], repeats=1)


def test_names():
    assert benchmark_name("alltoall") == benchmark_name("rankwise-bench-alltoall") == "alltoall"
    assert benchmark_name("./app") is None
    assert launch_host("vm:3") == "vm" and launch_host("node-7") == "node-7"


def test_sim_pipeline_probes_maps_and_is_faster(small_platform, tmp_path):
    """8 ranks on 4 of the 8 nodes: the default takes the first four of the
    hostfile (rack 1: node-5 at a quarter of the bandwidth); rankwise moves
    to rack 0, and the simulated all-to-all gets faster."""
    out = tmp_path / "opt"
    hosts = tmp_path / "hosts"  # rack 1 first: the default lands on node-5 and the congested uplink
    hosts.write_text("".join(f"node-{i} slots=2\n" for i in (4, 5, 6, 7, 0, 1, 2, 3)))
    r = run_cli("optimize", "--sim", small_platform.platform_xml, "--ranks-per-node", "2", "--out", out,
                "--hostfile", hosts, "--pattern", "alltoall:ranks=8,bytes=64K", "--repeats", "1", "--",
                "alltoall", "--sizes", "1K,256K", "--iterations", "2")
    assert r.returncode == 0, r.stderr
    for name in ("model.rwm", "placement.slurm", "model.png", "verify.csv", "speedup.png"):
        assert (out / name).exists(), name
    rows = [line.split(",") for line in (out / "verify.csv").read_text().splitlines()[1:]]
    speedup = {int(size): float(x) for size, _, _, x, _ in rows}
    predicted = {int(size): float(x) for size, _, _, _, x in rows}  # the pattern at each row's size
    assert all(abs(predicted[s] / speedup[s] - 1) <= 0.20 for s in speedup), (predicted, speedup)
    # mapped for 64 KiB messages: bandwidth-bound sizes gain; 1 KiB pays
    # rack 0's slow-latency node-2 (reported, not hidden)
    assert speedup[262144] > 1.5 and 1024 in speedup
    chosen = (out / "placement.slurm").read_text().split()
    assert len(chosen) == 8 and "node-5" not in chosen
    # the simulated cluster is launched with smpirun (not the Slurm file's srun), and the command runs
    launch = next(line for line in r.stdout.splitlines() if line.startswith("launch: "))[len("launch: "):]
    assert launch.startswith("smpirun -np 8 ") and "srun" not in launch
    assert (out / "placement.smpi-hosts").read_text().split() == chosen
    ran = subprocess.run(launch, shell=True, capture_output=True, text=True, timeout=300, cwd=tmp_path,
                         env=mpi_environment())
    assert ran.returncode == 0 and "262144" in ran.stdout, ran.stderr
    # a second run reuses the fresh model and profiles the app (no pattern)
    r = run_cli("optimize", "--sim", small_platform.platform_xml, "--out", out, "--ranks", "8", "--no-verify",
                "--", "stencil", "--grid", "2x2x2", "--mode", "3d", "--sizes", "4K", "--iterations", "1")
    assert r.returncode == 0, r.stderr
    assert "reusing" in r.stdout
    assert CommMatrix.load(out / "traffic.rwc").n_ranks == 8


def test_stale_model_warns(small_platform, tmp_path):
    out = tmp_path / "opt"
    out.mkdir()
    m = Model.load(small_platform_model(small_platform, out / "model.rwm"))
    m.created = time.time() - 7200
    m.save(out / "model.rwm")
    r = run_cli("optimize", "--sim", small_platform.platform_xml, "--out", out, "--max-age", "3600",
                "--pattern", "ring:ranks=4,bytes=1K", "--no-verify")
    assert r.returncode == 0, r.stderr
    assert "2.0 h old" in r.stdout and "--reprobe" in r.stdout


def test_allow_missing_costs_the_pairs_a_model_lacks(small_platform, tmp_path):
    out = tmp_path / "opt"
    out.mkdir()
    m = Model.load(small_platform_model(small_platform, out / "model.rwm"))
    m.state[0, 1] = MISSING
    m.save(out / "model.rwm")
    args = ("optimize", "--sim", small_platform.platform_xml, "--out", out, "--pattern",
            "alltoall:ranks=16,bytes=1K", "--no-verify")
    r = run_cli(*args)
    assert_one_line_error(r, "no measurement for node-0 -> node-1")
    assert "give --allow-missing" in r.stderr and r.returncode == 1
    r = run_cli(*args, "--allow-missing")
    assert r.returncode == 0, r.stderr
    assert "lacks 1 pair(s)" in r.stdout and (out / "placement.slurm").exists()


def test_verification_runs_without_the_profilers_output(monkeypatch, tmp_path):
    """An SMPI application is linked with the profiler to be profiled; when
    it is timed, the profiler must not write its matrix (that write would be
    timed too). A run that ends with an exit code the profiled run ended
    with (NAS DT's `return 1`) counts."""
    seen = []

    def fake_run(cmd, **kwargs):
        seen.append(kwargs["env"])
        code = 1 if len(seen) > 1 else 0
        return subprocess.CompletedProcess(cmd, code, "", "[0.5] Simulated time: 0.25 seconds\n")

    monkeypatch.setattr(subprocess, "run", fake_run)
    app = tmp_path / "app"
    app.write_text("")
    run = app_runner(str(app), [], sim=tmp_path / "p.xml", ok_codes=(0,))
    assert run(["a", "b"]) == {0: 0.25}
    assert seen[0]["RANKWISE_PROFILE_OUT"] == "none"
    with pytest.raises(RankwiseError):
        run(["a", "b"])  # exit code 1, not one the application is known to end with
    assert app_runner(str(app), [], sim=tmp_path / "p.xml", ok_codes=(0, 1))(["a", "b"]) == {0: 0.25}


def small_platform_model(platform, path):
    r = run_cli("probe", "--sim", platform.platform_xml, "--ranks-per-node", "2", "-o", path)
    assert r.returncode == 0, r.stderr
    return path


@pytest.mark.parametrize("args, text", [
    (["--pattern", "ring:ranks=4,bytes=1K", "--launcher", "mpirun -np 2"], "exactly one of --sim"),
    ([], "nothing to map"),
    (["--", "./no-such-app"], "application './no-such-app' not found"),
    (["--pattern", "ring:ranks=4,bytes=1K", "--matrix", "x.rwc"], "not both"),
    (["--pattern", "ring:ranks=4,bytes=1K", "--repeats", "0", "--", "alltoall"], "--repeats must be >= 1"),
    (["--pattern", "ring:ranks=4,bytes=1K", "--format", "lsf"], "unknown format 'lsf'"),
])
def test_bad_requests(small_platform, tmp_path, args, text):
    r = run_cli("optimize", "--sim", small_platform.platform_xml, "--out", tmp_path / "o", *args)
    assert_one_line_error(r, text)


def test_missing_launcher_names_what_to_install(tmp_path):
    r = run_cli("optimize", "--launcher", "srunx -n 4", "--out", tmp_path / "o", "--pattern", "ring:ranks=4,bytes=1K")
    assert_one_line_error(r, "launcher 'srunx' not found")


@real_mpi
def test_real_mpi_path_on_localhost(tmp_path):
    """The same pipeline through mpirun: probe (every rank a node on one
    host), profile the benchmark with the preloaded profiler, map, write an
    Open MPI rankfile, verify with Open MPI's sequential mapper."""
    out = tmp_path / "real"
    r = run_cli("optimize", "--launcher", "mpirun -np 4 --oversubscribe", "--group-by", "rank", "--out", out,
                "--repeats", "1", "--", "alltoall", "--sizes", "1K", "--iterations", "3")
    assert r.returncode == 0, r.stderr
    assert Model.load(out / "model.rwm").n_nodes == 4
    assert CommMatrix.load(out / "traffic.rwc").n_ranks == 4
    lines = [line for line in (out / "placement.openmpi").read_text().splitlines() if not line.startswith("#")]
    assert len(lines) == 4 and all(line.startswith(f"rank {k}=") for k, line in enumerate(lines))
    assert (out / "verify.csv").read_text().startswith("size,before_us,after_us,speedup")


def test_placed_launch_speaks_each_launcher(tmp_path, monkeypatch):
    """Rank k on hosts[k]: Slurm's arbitrary distribution, Hydra's
    machinefile, Open MPI's sequential mapper (fake launchers on PATH)."""
    from rankwise.workflows.optimize import placed_launch

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, version in (("srun", "slurm 23.02"), ("mpiexec.hydra", "HYDRA build details:"),
                          ("mpirun", "mpirun (Open MPI) 4.1.4")):
        exe = bin_dir / name
        exe.write_text(f"#!/bin/sh\necho '{version}'\n")
        exe.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{__import__('os').environ['PATH']}")
    hosts = ["b", "a", "b", "a"]
    words, env = placed_launch("srun -n 4", hosts, tmp_path)
    assert words[-1] == "--distribution=arbitrary"
    assert open(env["SLURM_HOSTFILE"]).read().split() == hosts
    words, env = placed_launch("mpiexec.hydra -n 4", hosts, tmp_path)
    assert words[-2] == "-f" and env == {}
    assert open(words[-1]).read().split("\n", 1)[1].split() == ["b:1", "a:1", "b:1", "a:1"]
    words, env = placed_launch("mpirun -np 4", hosts, tmp_path)
    assert words[-4:-1] == ["--map-by", "seq", "-hostfile"] and open(words[-1]).read().split() == hosts
