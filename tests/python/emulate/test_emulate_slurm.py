"""Slurm on an emulated cluster (rankwise emulate slurm): a real slurmctld in the head namespace,
a slurmd per host in its namespace, munged; srun launching Open MPI ranks through PMIx.

One cluster of 8 hosts in 2 shuffled racks (NICs 200 Mbit/s, uplinks 50 Mbit/s) with Slurm is
brought up for the module and always brought down. Skipped, with the exact reason, where an
emulated cluster or Slurm cannot run (docs/concepts/emulation.md, "Slurm")."""

from __future__ import annotations

import glob
import subprocess
import time
from pathlib import Path

import pytest

from conftest import assert_one_line_error, run_cli
from rankwise.cluster.hostlist import expand
from rankwise.model.model import Model
from test_emulate import UNAVAILABLE, _name


def _slurm_unavailable() -> str | None:
    if UNAVAILABLE is not None:
        return UNAVAILABLE
    from rankwise.emulate.slurm import check_slurm
    from rankwise.emulate.system import Unsupported
    try:
        check_slurm()
    except Unsupported as e:
        return str(e)
    # srun --mpi=list needs a slurm.conf; the plugin's file says the same without one
    if not glob.glob("/usr/lib/*/slurm-wlm/mpi_pmix*.so") + glob.glob("/usr/lib*/slurm/mpi_pmix*.so"):
        return "this Slurm has no mpi/pmix plugin (mpi_pmix*.so): srun cannot start Open MPI's ranks"
    return None


SLURM_UNAVAILABLE = _slurm_unavailable()
pytestmark = [pytest.mark.emulated,
              pytest.mark.skipif(SLURM_UNAVAILABLE is not None, reason=str(SLURM_UNAVAILABLE))]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, request) -> Path:
    path = tmp_path_factory.mktemp("slurm") / "cluster"
    request.addfinalizer(lambda: run_cli("emulate", "down", path))
    start = time.monotonic()
    r = run_cli("emulate", "up", "-o", path, "--name", _name("s"), "--racks", "2", "--nodes-per-rack", "4",
                "--nic-rate", "200M", "--uplink-rate", "50M", "--shuffle", "--slurm")
    assert r.returncode == 0, r.stdout + r.stderr
    print(f"emulate up --slurm: {time.monotonic() - start:.1f} s")
    return path


def slurm(cluster: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([str(cluster / args[0]), *args[1:]], capture_output=True, text=True, timeout=timeout,
                          cwd=cluster)


@pytest.fixture(scope="module")
def series(cluster, tmp_path_factory) -> Path:
    """`rankwise watch --launcher 'DIR/srun -N 8 --ntasks-per-node=1'`: two probes (the second of
    half the pairs), the ranks started by the slurmds through PMIx, no mpirun. One run serves
    every test (a probe through srun here takes about 40 s)."""
    out = tmp_path_factory.mktemp("slurm-watch") / "series"
    start = time.monotonic()
    r = run_cli("watch", "--launcher", f"{cluster}/srun -N 8 --ntasks-per-node=1", "--every", "1s", "--count", "2",
                "--pairs-fraction", "0.5", "--sizes", "64K,1M", "--repetitions", "3", "--rounds", "2", "--no-plot",
                "-o", out)
    assert r.returncode == 0, r.stdout + r.stderr
    print(f"watch through srun, 2 probes: {time.monotonic() - start:.0f} s")
    return out


@pytest.fixture(scope="module")
def probed(series) -> Path:
    """The series' first model: a full probe through srun (`rankwise probe --launcher` runs the same)."""
    return sorted(series.glob("model-*.rwm"))[0]


def test_every_host_is_an_idle_node_and_status_says_so(cluster):
    r = slurm(cluster, "sinfo", "-h", "-N", "-o", "%N %T")
    assert r.returncode == 0, r.stderr
    assert sorted(r.stdout.split()[0::2]) == [f"node-{i}" for i in range(8)]
    assert set(r.stdout.split()[1::2]) <= {"idle", "allocated", "mixed"}
    status = run_cli("emulate", "status", cluster)
    assert "Slurm: 10/10 daemons running" in status.stdout, status.stdout
    again = run_cli("emulate", "slurm", "up", cluster)
    assert_one_line_error(again, "Slurm already runs on")


def test_srun_starts_mpi_ranks_on_the_hosts(cluster, probed):
    model = Model.load(probed)
    assert sorted(model.names) == [f"node-{i}" for i in range(8)]  # MPI_Get_processor_name: the slurmds' hosts
    bw = model.bandwidth * 8
    rack = {f"node-{i}": r for i, r in enumerate(_racks(cluster))}
    inside = [bw[i, j] for i, a in enumerate(model.names) for j, b in enumerate(model.names)
              if i != j and rack[a] == rack[b]]
    across = [bw[i, j] for i, a in enumerate(model.names) for j, b in enumerate(model.names) if rack[a] != rack[b]]
    import numpy as np
    print(f"through srun: inside a rack median {np.median(inside) / 1e6:.0f} Mbit/s, "
          f"across racks {np.median(across) / 1e6:.0f} Mbit/s (shaped 200 / 50)")
    assert np.median(across) < 0.6 * np.median(inside)  # the 50 Mbit/s uplinks, seen through Slurm's ranks
    # 64 KiB round trips are all bytes: their fitted latencies are noise, the bandwidths give the racks
    assert model.latency_noisy()
    groups = dict(zip(model.names, model.groups().tolist()))
    assert all((groups[a] == groups[b]) == (rack[a] == rack[b]) for a in model.names for b in model.names), groups


def _racks(cluster: Path) -> list[int]:
    import json
    return json.loads((cluster / "state.json").read_text())["plan"]["rack_of_host"]


def test_slurm_reads_the_measured_topology_and_keeps_a_job_under_one_switch(cluster, probed):
    conf = cluster / "slurm" / "topology.conf"
    r = run_cli("export", "slurm-topology", probed, "-o", conf)
    assert r.returncode == 0, r.stderr
    assert slurm(cluster, "scontrol", "reconfigure").returncode == 0
    shown = slurm(cluster, "scontrol", "show", "topology").stdout
    leaves = {}
    for line in shown.splitlines():
        words = dict(w.split("=", 1) for w in line.split() if "=" in w)
        if words.get("Level") == "0":
            leaves[words["SwitchName"]] = expand(words["Nodes"])
    written = [line.split()[0].split("=")[1] for line in conf.read_text().splitlines()
               if line.startswith("SwitchName=") and " Nodes=" in line]
    assert sorted(leaves) == sorted(written), shown  # Slurm has the switches rankwise measured
    print(f"scontrol show topology:\n{shown}")
    rack_of = _racks(cluster)
    racks = sorted(sorted(f"node-{i}" for i, r in enumerate(rack_of) if r == k) for k in set(rack_of))
    assert sorted(sorted(leaf) for leaf in leaves.values()) == racks, shown  # the measured groups: the racks
    n = len(max(leaves.values(), key=len))
    out = cluster / "switches.out"
    job = slurm(cluster, "sbatch", "--wait", "-N", str(n), "--switches=1", "-o", str(out),
                "--wrap", "echo $SLURM_JOB_NODELIST")
    assert job.returncode == 0, job.stderr
    nodes = set(expand(out.read_text().strip()))
    print(f"sbatch -N {n} --switches=1 ran on {sorted(nodes)}; leaves {leaves}")
    assert len(nodes) == n and any(nodes <= set(leaf) for leaf in leaves.values())


def test_watch_through_srun_writes_a_series(series):
    models = sorted(series.glob("model-*.rwm"))
    assert len(models) == 2 and (series / "index.tsv").exists(), sorted(p.name for p in series.iterdir())
    assert sorted(Model.load(models[-1]).names) == [f"node-{i}" for i in range(8)]


def test_probe_through_srun(cluster, tmp_path):
    """`rankwise probe --launcher 'DIR/srun ...'` itself, on 4 hosts (2 of each rack): quick."""
    hosts = _racks(cluster)
    pick = [i for i in range(8) if hosts[i] == 0][:2] + [i for i in range(8) if hosts[i] == 1][:2]
    nodelist = ",".join(f"node-{i}" for i in pick)
    r = run_cli("probe", "--launcher", f"{cluster}/srun -w {nodelist} -N 4 --ntasks-per-node=1",
                "--sizes", "1M", "--repetitions", "2", "--rounds", "1", "--timeout", "60", "-o", tmp_path / "m.rwm")
    assert r.returncode == 0, r.stdout + r.stderr
    assert sorted(Model.load(tmp_path / "m.rwm").names) == sorted(f"node-{i}" for i in pick)


def test_slurm_down_ends_the_daemons_and_keeps_the_cluster(cluster, tmp_path):
    """Last: `emulate slurm down`, then the cluster's hosts still answer; `up` again works."""
    r = run_cli("emulate", "slurm", "down", cluster)
    assert r.returncode == 0 and "Slurm's daemons ended" in r.stdout, r.stdout + r.stderr
    status = run_cli("emulate", "status", cluster).stdout
    assert ": up, 8/8 hosts" in status and "Slurm:" not in status
    assert run_cli("emulate", "slurm", "down", cluster).stdout.startswith("no Slurm on")
