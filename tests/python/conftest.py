"""Shared fixtures: small generated platforms, a small valid model and a CLI runner."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rankwise.model.model import MEASURED, Model
from rankwise.sim.platform import Degraded, PlatformSpec, generate


def run_cli(*args: str, cwd: Path | None = None, timeout: float = 600,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run `rankwise ARGS` as a user would, capturing its output (env: variables added)."""
    return subprocess.run(
        [sys.executable, "-m", "rankwise", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        env={**os.environ, **env} if env else None,
    )


def assert_one_line_error(result: subprocess.CompletedProcess, text: str) -> None:
    """A failed command printed exactly one line, holding `text`, and no traceback."""
    assert result.returncode != 0
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert text in lines[0], lines[0]
    assert "Traceback" not in result.stderr


ROOT = Path(__file__).resolve().parents[2]

# The tests live in one folder per stage (as the package) and share helpers across folders
# (test_coll_lib's compilers, test_core_binding's fixture): every folder importable by name.
for _folder in sorted(Path(__file__).resolve().parent.iterdir()):
    if _folder.is_dir() and not _folder.name.startswith((".", "_")) and str(_folder) not in sys.path:
        sys.path.append(str(_folder))
MPICC_MPICH, HYDRA = shutil.which("mpicc.mpich"), shutil.which("mpiexec.hydra")
NO_MPICH = "MPICH is not installed (mpicc.mpich, mpiexec.hydra)"


def _built(cmd: list[str], timeout: float = 900) -> None:
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, " ".join(cmd) + "\n" + r.stdout[-2000:] + r.stderr[-3000:]


@pytest.fixture(scope="session")
def mpich_build(tmp_path_factory) -> Path:
    """The engine's collectives library, probe and all-to-all benchmark compiled with MPICH, once
    a session (tests/python/test_mpich.py, test_emulate_mpi.py); BUILD/bin holds the programs
    for RANKWISE_MPI_BIN."""
    if not (MPICC_MPICH and HYDRA):
        pytest.skip(NO_MPICH)
    build = tmp_path_factory.mktemp("mpich-build")
    _built(["cmake", "-S", str(ROOT / "engine"), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
            f"-DMPI_C_COMPILER={MPICC_MPICH}"])
    _built(["cmake", "--build", str(build), "--target", "rankwise_coll", "rankwise-probe", "rankwise-bench-alltoall",
            "-j", "2"])
    lib = build / "mpi" / "coll" / "librankwise_coll.so"
    assert "libmpich" in subprocess.run(["ldd", str(lib)], capture_output=True, text=True).stdout
    (build / "bin").mkdir()
    for program in (build / "mpi" / "rankwise-probe", build / "mpi" / "benchmarks" / "rankwise-bench-alltoall"):
        (build / "bin" / program.name).symlink_to(program)
    return build


@pytest.fixture(scope="session")
def mpich_coll_check(mpich_build, tmp_path_factory) -> Path:
    """tests/engine/mpi/coll_check.c compiled with MPICH and linked with the library built for it."""
    lib = mpich_build / "mpi" / "coll"
    out = tmp_path_factory.mktemp("mpich-coll") / "coll_check"
    _built([MPICC_MPICH, "-O1", f"-I{ROOT / 'engine' / 'include'}", str(ROOT / "tests" / "engine" / "mpi" / "coll_check.c"),
            f"-L{lib}", f"-Wl,-rpath,{lib}", "-lrankwise_coll", "-o", str(out)])
    return out


@pytest.fixture(scope="session")
def small_platform(tmp_path_factory):
    """2 racks x 4 nodes x 2 cores; node 5's link at a quarter of the
    bandwidth, node 2's latency x4, rack 1's uplink congested (bandwidth x0.3)."""
    spec = PlatformSpec(
        racks=2,
        nodes_per_rack=4,
        cores=2,
        degraded=[Degraded("node", 5, bw_factor=0.25), Degraded("node", 2, lat_factor=4.0),
                  Degraded("uplink", 1, bw_factor=0.3)],
        seed=3,
    )
    return generate(spec, tmp_path_factory.mktemp("small-platform"))


@pytest.fixture(scope="module")
def model_file(tmp_path_factory) -> Path:
    """A valid 4-node model, 2 ranks per node, every pair and intra figure measured (the inputs
    the hardening tests damage or pass beside bad ones)."""
    n, sizes = 4, (8, 1024)
    m = Model.empty([f"n{i}" for i in range(n)], sizes, ranks_per_node=np.full(n, 2))
    rtt = 2e-6 + np.asarray(sizes, float) / 5e9
    for arr in (m.rtt_min, m.rtt_median, m.rtt_max):
        arr[:] = rtt
    m.jitter[:], m.samples[:] = 0.1, 5
    m.state[:] = MEASURED
    np.fill_diagonal(m.state, 0)
    for arr in (m.rtt_min, m.rtt_median, m.rtt_max, m.jitter):
        arr[np.arange(n), np.arange(n)] = np.nan
    m.samples[np.arange(n), np.arange(n)] = 0
    m.measured_at[m.state != 0] = 1.79e9
    m.intra_state[:] = MEASURED
    for arr in (m.intra_min, m.intra_median, m.intra_max):
        arr[:] = rtt / 10
    m.intra_jitter[:], m.intra_samples[:] = 0.0, 5
    m.created = 1.79e9
    m.refit()
    path = tmp_path_factory.mktemp("model") / "net.rwm"
    m.save(path)
    return path
