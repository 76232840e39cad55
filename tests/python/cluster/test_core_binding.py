"""Core bindings in the launcher files (rankwise.cluster.core_binding): Open MPI's
slot=P:C, Intel MPI's I_MPI_PIN_PROCESSOR_LIST per host, one cpu list for
Slurm's map_cpu and Hydra's -bind-to user:, refused naming the launcher
when the nodes need different lists; and, under real Open MPI, ranks run
on the cores the rankfile names (each rank reports sched_getcpu)."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
from pathlib import Path

import numpy as np
import pytest

from rankwise.cluster.core_binding import CoreBinding
from rankwise.util.errors import RankwiseError
from rankwise.cluster.launcher_files import read_placement, usage_hint, write_placement
from rankwise.model.node import NodeTopology
from rankwise.cluster.placement import Placement

NODE = "pack:2 numa:2 core:4 pu:2"  # cpu of core c is 2c
WHERE = Path(__file__).resolve().parents[2] / "engine" / "mpi" / "where.c"


@pytest.fixture(scope="module")
def node():
    return NodeTopology.load(synthetic=NODE)


def two_nodes(cores_a, cores_b):
    """Ranks 0..k-1 on a, then b's (one run per host)."""
    hosts = ["a"] * len(cores_a) + ["b"] * len(cores_b)
    return Placement.from_hosts(hosts), np.array(list(cores_a) + list(cores_b))


def test_openmpi_rankfile_names_package_and_core(node, tmp_path):
    p, cores = two_nodes([9, 0], [15])
    p = Placement(p.nodes, p.node_of, cores)
    write_placement(p, "openmpi", tmp_path / "rf", binding=CoreBinding.from_cores(node, cores))
    lines = [x for x in (tmp_path / "rf").read_text().splitlines() if not x.startswith("#")]
    assert lines == ["rank 0=a slot=1:1", "rank 1=a slot=0:0", "rank 2=b slot=1:7"]
    assert read_placement("openmpi", tmp_path / "rf").hosts_in_rank_order() == ["a", "a", "b"]


def test_intel_configfile_pins_each_host(node, tmp_path):
    hosts = ["a", "b", "a", "b"]  # interleaved: each host on two lines
    cores = np.array([3, 4, 1, 5])
    p = Placement(Placement.from_hosts(hosts).nodes, Placement.from_hosts(hosts).node_of, cores)
    write_placement(p, "intel", tmp_path / "cf", app="./app", binding=CoreBinding.from_cores(node, cores))
    body = [x for x in (tmp_path / "cf").read_text().splitlines() if not x.startswith("#")]
    assert body == ["-n 1 -host a -env I_MPI_PIN_PROCESSOR_LIST 6,2 ./app",
                    "-n 1 -host b -env I_MPI_PIN_PROCESSOR_LIST 8,10 ./app",
                    "-n 1 -host a -env I_MPI_PIN_PROCESSOR_LIST 6,2 ./app",
                    "-n 1 -host b -env I_MPI_PIN_PROCESSOR_LIST 8,10 ./app"]
    assert read_placement("intel", tmp_path / "cf").hosts_in_rank_order() == hosts


@pytest.mark.parametrize("fmt,option", [("slurm", "--cpu-bind=map_cpu:6,2,0"), ("mpich", "-bind-to user:6,2,0")])
def test_one_list_for_every_node(node, tmp_path, fmt, option):
    p, cores = two_nodes([3, 1, 0], [3, 1])  # b's list is a start of a's
    p = Placement(p.nodes, p.node_of, cores)
    binding = CoreBinding.from_cores(node, cores)
    cpus = binding.common_cpu_list(p, fmt)
    assert cpus == [6, 2, 0]
    write_placement(p, fmt, tmp_path / "f", binding=binding)
    assert option in usage_hint(fmt, tmp_path / "f", 5, "./app", cpus)
    if fmt == "mpich":
        assert option in (tmp_path / "f").read_text()
        assert read_placement(fmt, tmp_path / "f").hosts_in_rank_order() == p.hosts_in_rank_order()


@pytest.mark.parametrize("fmt,name", [("slurm", "Slurm"), ("mpich", "MPICH/Hydra")])
def test_a_binding_the_launcher_cannot_express_is_refused(node, tmp_path, fmt, name):
    p, cores = two_nodes([3, 1], [1, 3])
    p = Placement(p.nodes, p.node_of, cores)
    with pytest.raises(RankwiseError, match=rf"{re.escape(name)}.*local rank 0 to cpu 2 on b and to cpu 6 on a"):
        write_placement(p, fmt, tmp_path / "f", binding=CoreBinding.from_cores(node, cores))
    assert not (tmp_path / "f").exists()


def test_a_binding_must_match_the_placement(node, tmp_path):
    p, cores = two_nodes([0, 1], [2])
    with pytest.raises(RankwiseError, match="2 ranks for a placement of 3"):
        write_placement(p, "openmpi", tmp_path / "rf", binding=CoreBinding.from_cores(node, cores[:2]))


needs_mpi = pytest.mark.skipif(not (shutil.which("mpicc") and shutil.which("mpirun")), reason="no Open MPI")


def run_where(exe: Path, rankfile: Path, n: int) -> dict[int, tuple[int, str]]:
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    r = subprocess.run(["mpirun", "-np", str(n), "--rankfile", str(rankfile), str(exe)], capture_output=True,
                       text=True, env=env, timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stdout + r.stderr
    found = {}
    for m in re.finditer(r"rank (\d+) host \S+ cpu (\d+) allowed (\S+)", r.stdout):
        found[int(m.group(1))] = (int(m.group(2)), m.group(3))
    assert sorted(found) == list(range(n)), r.stdout
    return found


@pytest.fixture(scope="module")
def where(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("where") / "where"
    env = dict(os.environ)
    env.pop("SMPI_PRETEND_CC", None)
    r = subprocess.run(["mpicc", "-O2", str(WHERE), "-o", str(out)], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    return out


@needs_mpi
def test_open_mpi_runs_each_rank_on_the_core_of_its_rankfile(where, tmp_path):
    """This machine, its two cores swapped: rank 0 on the last core, rank 1 on the first."""
    live = NodeTopology.load()
    if live.n_cores < 2:
        pytest.skip("one core")
    host = socket.gethostname()
    cores = np.array([live.n_cores - 1, 0])
    p = Placement((host,), [0, 0], cores)
    write_placement(p, "openmpi", tmp_path / "rf", binding=CoreBinding.from_cores(live, cores))
    found = run_where(where, tmp_path / "rf", 2)
    for rank, core in enumerate(cores.tolist()):
        cpu, allowed = found[rank]
        assert cpu == live.cpu_of[core]
        assert allowed.split(",")[0] == str(live.cpu_of[core])
