"""MPICH, not only Open MPI: the engine's MPI parts built with MPICH's compiler
(`make MPICC=/usr/bin/mpicc.mpich` does the same for the installed package), the
collectives library's results equal to MPICH's own under its Hydra launcher, and the probe
launched by Hydra (through RANKWISE_MPI_BIN, the folder of the MPI programs).

Skipped, with the reason, where MPICH is not installed (Debian: `mpich libmpich-dev`, whose
alternatives rank below Open MPI's, so `mpicc` stays Open MPI's)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from conftest import HYDRA, MPICC_MPICH, NO_MPICH
from rankwise.model.model import Model
from test_coll_lib import checks_passed, forced, ran

pytestmark = pytest.mark.skipif(not (MPICC_MPICH and HYDRA), reason=NO_MPICH)


def hydra(n: int, program: list[str], variables: dict[str, str], timeout: float = 180) -> subprocess.CompletedProcess:
    cmd = [HYDRA, "-n", str(n)]
    for k, v in variables.items():
        cmd += ["-env", k, v]
    return subprocess.run(cmd + program, capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("rooted,unrooted,n,extra", [
    ("binomial", "recursive_doubling", 5, {}),
    ("chain", "ring", 4, {"RANKWISE_COLL_SEGMENT": "1000"}),
    ("trinary", None, 5, {}),
    ("knomial", None, 4, {"RANKWISE_COLL_KNOMIAL_K": "3"}),
])
def test_collectives_under_mpich_equal_its_own(mpich_coll_check, rooted, unrooted, n, extra):
    """coll_check compares every collective the library runs with MPICH's own result."""
    variables = forced(rooted, unrooted) | extra
    if rooted == "trinary":  # trinary exists for bcast and reduce only
        variables = {"RANKWISE_COLL_BCAST": "trinary", "RANKWISE_COLL_REDUCE": "trinary", "RANKWISE_COLL_TRACE": "1"}
    # 201 elements: MPICH 4.0.2's own MPI_Gather of resized {int, double} structs fails with
    # "Message truncated" in MPIR_Gather_intra_binomial from about 24 KB gathered (401 at 5
    # ranks, 301 at 7), without rankwise (docs/concepts/collectives.md, "MPICH")
    r = hydra(n, [str(mpich_coll_check), "201"], variables)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    assert checks_passed(r.stdout) > 1000
    algs = ran(r.stderr)
    assert rooted in algs.get("bcast", set()) and rooted in algs.get("reduce", set()), algs
    if unrooted:
        assert unrooted in algs.get("allreduce", set()) | algs.get("allgather", set()), algs


def test_probe_launched_by_hydra(mpich_build, tmp_path):
    out = tmp_path / "mpich.rwm"
    env = dict(os.environ, RANKWISE_MPI_BIN=str(mpich_build / "mpi"))
    r = subprocess.run([str(Path(os.sys.executable).parent / "rankwise"), "probe", "--launcher", f"{HYDRA} -n 4",
                        "--group-by", "rank", "--sizes", "8,64K", "-o", str(out)],
                       capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    m = Model.load(out)
    assert m.n_nodes == 4 and "mpiexec.hydra" in m.source
    assert all(re.fullmatch(r".+:\d", name) for name in m.names), m.names
    off = ~np.eye(4, dtype=bool)
    assert np.all(m.alpha[off] > 0) and np.all(np.isfinite(m.beta[off]))
