"""The oracle: rankwise's binomial and flat broadcasts under SMPI take the
same simulated time, to the nanosecond, as SMPI 3.32's own pinned
`smpi/bcast:binomial_tree` and `flattree` (same tree, same send order, the
same blocking sends or posted-then-waited sends).

Send and receive overheads are set to 1 us (`smpi/os` and `smpi/or`,
0:1e-6:0): with SMPI's default of zero a send costs nothing on the sender,
and the order of sends would not show. Computation between MPI calls is
not simulated (`smpi/simulate-computation:no`): the library's own CPU time
would otherwise be measured on this machine and added. Each call starts on
every rank at one instant (tests/engine/mpi/coll_oracle.c)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from rankwise.util import paths
SOURCE = Path(__file__).resolve().parents[2] / "engine" / "mpi" / "coll_oracle.c"
LIB = paths.PACKAGE_DIR / "_lib" / "smpi"
CONFIG = ["--cfg=smpi/os:0:1e-6:0", "--cfg=smpi/or:0:1e-6:0", "--cfg=smpi/simulate-computation:no",
          "--log=root.thres:critical"]

pytestmark = pytest.mark.skipif(not (shutil.which("smpicc") and shutil.which("smpirun")), reason="no SimGrid")


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {**os.environ, **(extra or {})}
    env.pop("SMPI_PRETEND_CC", None)
    return env


@pytest.fixture(scope="module")
def programs(tmp_path_factory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("oracle")
    plain, linked = d / "plain", d / "rankwise"
    for out, flags in ((plain, []), (linked, [f"-L{LIB}", "-Wl,--whole-archive", "-lrankwise_coll",
                                              "-Wl,--no-whole-archive"])):
        r = subprocess.run(["smpicc", "-O1", str(SOURCE), *flags, "-o", str(out)], capture_output=True, text=True,
                           env=_env())
        assert r.returncode == 0, r.stderr
    return plain, linked


def times(program: Path, platform, extra_cfg: list[str], env: dict[str, str]) -> dict[tuple[int, int], int]:
    """(rank, call) -> nanoseconds from the call's start to its end on that rank."""
    r = subprocess.run(["smpirun", "-np", "13", "-platform", str(platform.platform_xml), "-hostfile",
                        str(platform.hostfile), *CONFIG, *extra_cfg, str(program)], capture_output=True, text=True,
                       env=_env(env), timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    out = {}
    for line in r.stdout.splitlines():
        rank, call, ns = line.split()
        out[(int(rank), int(call))] = int(ns)
    assert len(out) == 13 * 10
    return out


@pytest.mark.parametrize("ours,smpi", [("binomial", "binomial_tree"), ("flat", "flattree")])
def test_rankwise_broadcasts_take_smpis_own_times(programs, small_platform, ours, smpi):
    plain, linked = programs
    pinned = times(plain, small_platform, [f"--cfg=smpi/bcast:{smpi}"], {})
    rankwise = times(linked, small_platform, [], {"RANKWISE_COLL_BCAST": ours})
    assert rankwise == pinned
    # the comparison can fail: the other shape gives other times
    other = "flat" if ours == "binomial" else "binomial"
    assert times(linked, small_platform, [], {"RANKWISE_COLL_BCAST": other}) != pinned
