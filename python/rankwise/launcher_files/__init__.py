"""The files launchers take a placement from, one module per format, each
with write(placement, path, app=None) (atomic) and read(path) -> Placement."""

from __future__ import annotations

import shlex
from os import PathLike

from rankwise.errors import UsageError
from rankwise.launcher_files import intel, mpich, openmpi, permutation, slurm
from rankwise.placement import Placement

FORMATS = {"openmpi": openmpi, "mpich": mpich, "intel": intel, "slurm": slurm, "permutation": permutation}


def _format(fmt: str):
    if fmt not in FORMATS:
        raise UsageError(f"unknown format '{fmt}' (choose from {', '.join(FORMATS)})")
    return FORMATS[fmt]


def write_placement(placement: Placement, fmt: str, path: str | PathLike, app: str | None = None) -> None:
    _format(fmt).write(placement, path, app=app)


def read_placement(fmt: str, path: str | PathLike) -> Placement:
    return _format(fmt).read(path)


def usage_hint(fmt: str, path: str | PathLike, n_ranks: int, app: str | None = None) -> str:
    """The command line that launches the job with the file."""
    _format(fmt)
    f, a = shlex.quote(str(path)), app or "./app"
    hints = {
        "openmpi": f"mpirun -np {n_ranks} --rankfile {f} {a}   (Open MPI 5: --map-by rankfile:file={f})",
        "mpich": f"mpiexec -f {f} -n {n_ranks} {a}",
        "intel": f"mpiexec.hydra -configfile {f}",
        "slurm": f"SLURM_HOSTFILE={f} srun --distribution=arbitrary -n {n_ranks} {a}",
        "permutation": f"rank node slot per line in {f} (rankwise's own format)",
    }
    return hints[fmt]
