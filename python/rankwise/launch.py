"""Running an MPI program under a real launcher or smpirun, with progress.

The engine's programs report progress as 'RW-PROGRESS done total' lines on
stderr; everything else they print is kept for the error message."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from collections import deque
from dataclasses import dataclass

from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                           TimeRemainingColumn)

from rankwise.errors import RankwiseError, UsageError

LAUNCHER_HINTS = {
    "mpirun": "install Open MPI (apt-get install openmpi-bin) or MPICH (apt-get install mpich)",
    "mpiexec": "install Open MPI (apt-get install openmpi-bin) or MPICH (apt-get install mpich)",
    "srun": "srun comes with Slurm: run inside an allocation (salloc/sbatch)",
    "smpirun": "install SimGrid (apt-get install libsimgrid-dev)",
}


@dataclass
class RunResult:
    returncode: int
    log: list[str]


def parse_launcher(launcher: str) -> list[str]:
    """Split a launcher command ('mpirun -np 8 --hostfile h') and check it exists."""
    try:
        words = shlex.split(launcher)
    except ValueError as exc:
        raise UsageError(f"--launcher: cannot parse '{launcher}': {exc}") from None
    if not words:
        raise UsageError("--launcher is empty")
    if not shutil.which(words[0]):
        hint = LAUNCHER_HINTS.get(os.path.basename(words[0]), "check the launcher's name and PATH")
        raise RankwiseError(f"launcher '{words[0]}' not found: {hint}")
    return words


def mpi_environment() -> dict[str, str]:
    """Open MPI refuses to run as root unless told; containers and CI run as root."""
    env = dict(os.environ)
    if os.geteuid() == 0:
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    return env


def run_with_progress(cmd: list[str], label: str, show: bool = True, cwd=None) -> RunResult:
    """Run cmd; draw a progress bar from its RW-PROGRESS lines."""
    tail: deque[str] = deque(maxlen=40)
    try:
        proc = subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
            errors="replace",
            env=mpi_environment(),
            cwd=cwd,
        )
    except OSError as exc:
        raise RankwiseError(f"cannot start {cmd[0]}: {exc.strerror}") from None
    # A simulated probe of 100 nodes runs for minutes: say how long is left
    # (rich estimates it from the rate of the RW-PROGRESS steps).
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TimeRemainingColumn(), TextColumn("left"))
    with Progress(*columns, transient=True, disable=not show) as bar:
        task = bar.add_task(label, total=None)
        assert proc.stdout is not None
        for line in proc.stdout:
            line = line.rstrip("\n")
            if line.startswith("RW-PROGRESS "):
                parts = line.split()
                if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
                    bar.update(task, completed=int(parts[1]), total=int(parts[2]))
                continue
            if line.strip():
                tail.append(line)
        proc.wait()
    return RunResult(proc.returncode, list(tail))


def failure_message(what: str, result: RunResult) -> str:
    """One line: the program's own error line if it printed one, else its last line."""
    for line in reversed(result.log):
        if "error:" in line:
            return line.split("error:", 1)[1].strip() if line.startswith("rankwise") else line.strip()
    last = result.log[-1].strip() if result.log else "no output"
    return f"{what} failed (exit code {result.returncode}): {last}"
