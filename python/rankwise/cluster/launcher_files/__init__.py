"""The files launchers take a placement from, one module per format, each
with write(placement, path, app=None) (atomic) and read(path) -> Placement."""

from __future__ import annotations

import shlex
from os import PathLike

from rankwise.cluster.core_binding import CoreBinding, cpu_list_text
from rankwise.util.errors import UsageError
from rankwise.cluster.launcher_files import intel, mpich, openmpi, permutation, slurm
from rankwise.cluster.placement import Placement

FORMATS = {"openmpi": openmpi, "mpich": mpich, "intel": intel, "slurm": slurm, "permutation": permutation}


def _format(fmt: str):
    if fmt not in FORMATS:
        raise UsageError(f"unknown format '{fmt}' (choose from {', '.join(FORMATS)})")
    return FORMATS[fmt]


def write_placement(placement: Placement, fmt: str, path: str | PathLike, app: str | None = None,
                    binding: CoreBinding | None = None) -> None:
    """binding: the core of every rank (rankwise.cluster.core_binding), written as the
    format binds: refused, naming the launcher, where it cannot be."""
    if binding is not None:
        binding.check(placement)
    _format(fmt).write(placement, path, app=app, binding=binding)


def read_placement(fmt: str, path: str | PathLike) -> Placement:
    return _format(fmt).read(path)


def usage_hint(fmt: str, path: str | PathLike, n_ranks: int, app: str | None = None,
               cpu_list: list[int] | None = None) -> str:
    """The command line that launches the job with the file; cpu_list: the
    cpus of local ranks 0, 1, ... on every node (CoreBinding.common_cpu_list),
    for the launchers that take the binding on their command line."""
    _format(fmt)
    f, a = shlex.quote(str(path)), app or "./app"
    bind = {"slurm": f" --cpu-bind=map_cpu:{cpu_list_text(cpu_list)}",
            "mpich": f" -bind-to user:{cpu_list_text(cpu_list)}"} if cpu_list else {}
    hints = {
        "openmpi": f"mpirun -np {n_ranks} --rankfile {f} {a}   (Open MPI 5: --map-by rankfile:file={f})",
        "mpich": f"mpiexec -f {f} -n {n_ranks}{bind.get('mpich', '')} {a}",
        "intel": f"mpiexec.hydra -configfile {f}",
        "slurm": f"SLURM_HOSTFILE={f} srun --distribution=arbitrary{bind.get('slurm', '')} -n {n_ranks} {a}",
        "permutation": f"rank node slot per line in {f} (rankwise's own format)",
    }
    return hints[fmt]
