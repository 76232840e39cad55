"""Running MPI programs on a simulated cluster with SimGrid's smpirun."""

from __future__ import annotations

import shutil
from os import PathLike
from pathlib import Path

from rankwise.errors import RankwiseError

# Simulated time must depend on the platform only: computation between MPI
# calls is not timed (smpi/simulate-computation:no), nor is reading the
# clock (smpi/wtime:0; SMPI charges 10 ns per MPI_Wtime by default, a bias
# on every timing and an extra simulator event). CM02 without cross traffic
# makes a route's latency the sum of its links' latencies and its bandwidth
# the smallest link's, which is what the ground truth states.
SMPI_SETTINGS = (
    "smpi/simulate-computation:no",
    "smpi/wtime:0",
    "network/model:CM02",
    "network/crosstraffic:0",
)


def smpirun() -> str:
    path = shutil.which("smpirun")
    if not path:
        raise RankwiseError(
            "smpirun not found: the simulated cluster needs SimGrid "
            "(Debian: apt-get install libsimgrid-dev)"
        )
    return path


def smpirun_command(
    program: str | PathLike,
    args: list[str],
    platform: str | PathLike,
    hostfile: str | PathLike,
    nprocs: int,
    extra_cfg: tuple[str, ...] = (),
) -> list[str]:
    """The smpirun command line for `program args` with one rank per hostfile line."""
    cmd = [smpirun(), "-np", str(nprocs), "-platform", str(Path(platform).resolve())]
    cmd += ["-hostfile", str(Path(hostfile).resolve())]
    for cfg in SMPI_SETTINGS + tuple(extra_cfg):
        cmd.append(f"--cfg={cfg}")
    cmd.append("--log=root.thres:warning")
    cmd += [str(program), *args]
    return cmd
