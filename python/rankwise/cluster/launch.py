"""Running an MPI program under a real launcher or smpirun, with progress.

The engine's programs report progress as 'RW-PROGRESS done total' lines on
stderr, and the probe 'RW-WRITTEN path' once its model is on disk (then
'RW-UNFINALIZED' when it ends without MPI_Finalize because a rank stopped
answering); everything else they print is kept for the error message."""

from __future__ import annotations

import contextlib
import os
import queue
import re
import shlex
import shutil
import signal
import subprocess
import threading
import time
from collections import deque
from dataclasses import dataclass

from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                           TimeRemainingColumn)

from rankwise.util.errors import RankwiseError, UsageError

LAUNCHER_HINTS = {
    "mpirun": "install Open MPI (apt-get install openmpi-bin) or MPICH (apt-get install mpich)",
    "mpiexec": "install Open MPI (apt-get install openmpi-bin) or MPICH (apt-get install mpich)",
    "srun": "srun comes with Slurm: run inside an allocation (salloc/sbatch)",
    "smpirun": "install SimGrid (apt-get install libsimgrid-dev)",
}


# After 'RW-WRITTEN', seconds the job gets to end by itself: a healthy
# MPI_Finalize takes far less; after 'RW-UNFINALIZED' the launcher only
# has to notice that rank 0 is gone.
FINALIZE_GRACE = 30.0
UNFINALIZED_GRACE = 5.0
# Seconds between SIGTERM and SIGKILL to the launcher's process group.
TERM_GRACE = 5.0
# Seconds to read output after the launcher exited.
DRAIN_GRACE = 2.0


@dataclass
class RunResult:
    returncode: int
    log: list[str]
    written: str | None = None  # path of 'RW-WRITTEN': the output is on disk
    unfinalized: bool = False  # rank 0 ended without MPI_Finalize (a rank stopped answering)
    ended_after: float | None = None  # seconds after RW-WRITTEN rankwise ended the job, if it had to


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


def end_process_group(proc: subprocess.Popen) -> None:
    """SIGTERM the launcher's process group (mpirun then ends its ranks),
    SIGKILL what is left: a stopped rank ignores everything but SIGKILL."""
    for sig, wait in ((signal.SIGTERM, TERM_GRACE), (signal.SIGKILL, None)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        if wait is None:
            break
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(wait)
            # The leader is gone; members of its group may not be.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            break
    proc.wait()


def _read_lines(stream, sink: queue.Queue) -> None:
    for line in stream:
        sink.put(line)
    sink.put(None)


def run_with_progress(cmd: list[str], label: str, show: bool = True, cwd=None,
                      end_after_written: bool = False) -> RunResult:
    """Run cmd in a process group of its own; draw a progress bar from its
    RW-PROGRESS lines. With `end_after_written`, once it reports its output
    written (RW-WRITTEN), a job that does not end by itself within a grace
    period is ended (a real MPI job whose rank stopped answering)."""
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
            start_new_session=True,
        )
    except OSError as exc:
        raise RankwiseError(f"cannot start {cmd[0]}: {exc.strerror}") from None
    result = RunResult(0, [])
    lines: queue.Queue = queue.Queue()
    assert proc.stdout is not None
    threading.Thread(target=_read_lines, args=(proc.stdout, lines), daemon=True).start()
    # A simulated probe of 100 nodes runs for minutes: say how long is left
    # (rich estimates it from the rate of the RW-PROGRESS steps).
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TimeRemainingColumn(), TextColumn("left"))
    written_at = exited_at = None
    try:
        with Progress(*columns, transient=True, disable=not show) as bar:
            task = bar.add_task(label, total=None)
            while True:
                try:
                    line = lines.get(timeout=0.2)
                except queue.Empty:
                    line = ""
                if line is None:
                    break
                line = line.rstrip("\n")
                if line.startswith("RW-PROGRESS "):
                    parts = line.split()
                    if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
                        bar.update(task, completed=int(parts[1]), total=int(parts[2]))
                elif line.startswith("RW-WRITTEN "):
                    result.written, written_at = line[len("RW-WRITTEN "):], time.monotonic()
                elif line == "RW-UNFINALIZED":
                    result.unfinalized = True
                elif line.strip():
                    tail.append(line)
                if end_after_written and written_at is not None and proc.poll() is None:
                    grace = UNFINALIZED_GRACE if result.unfinalized else FINALIZE_GRACE
                    if time.monotonic() - written_at > grace:
                        result.ended_after = time.monotonic() - written_at
                        end_process_group(proc)
                # Processes the launcher left behind may hold the pipe open:
                # read what is already there, then stop waiting for them.
                if proc.poll() is not None:
                    exited_at = exited_at or time.monotonic()
                    if lines.empty() and time.monotonic() - exited_at > DRAIN_GRACE:
                        break
    except BaseException:  # Ctrl-C no longer reaches a job in its own session
        end_process_group(proc)
        raise
    proc.wait()
    result.returncode, result.log = proc.returncode, list(tail)
    return result


_SEPARATOR = re.compile(r"^\s*(-{10,}|={10,})\s*$")
_OMPI_BOILERPLATE = ("Primary job", "mpirun has exited due to process")
_REMOTE_DAEMON = re.compile(r"^\s*Remote daemon\s*:.*\bon node (\S+)")
_TOOL_LINE = re.compile(r"^(ssh|srun|rsh|qrsh|blaunch): ")
_HYDRA_LINE = re.compile(r"^\[(mpiexec|proxy)[^\]]*\]\s+(?:\S+ \([^)]*\):\s+)?(.*)$")


def _blocks(log: list[str]) -> list[list[str]]:
    """The text between Open MPI's dashed separator lines, block by block."""
    blocks, current, inside = [], [], False
    for line in log:
        if _SEPARATOR.match(line):
            if inside and current:
                blocks.append(current)
            current, inside = [], not inside
        elif inside:
            current.append(line)
    return blocks


def _first_sentences(block: list[str], limit: int = 300) -> str:
    """A block's opening up to its first full stop: Open MPI states the
    problem there, and explains it at length after. (Callers may have
    dropped blank lines, so paragraphs cannot be relied on.)"""
    text = " ".join(" ".join(line.split()) for line in block if line.strip())
    end = re.search(r"\.(?=\s+[A-Z*]|$)", text)
    text = text[: end.end()] if end else text
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


def _open_mpi_cause(log: list[str]) -> str | None:
    """Open MPI explains itself in dashed blocks; the last that is not
    boilerplate names the cause ('mpirun noticed that process rank 2 ...')."""
    blocks = _blocks(log)
    if not blocks:
        return None
    useful = [b for b in blocks if not b[0].strip().startswith(_OMPI_BOILERPLATE)]
    # A daemon lost (its host died or was cut off) is the cause whatever the ranks said about it
    # meanwhile, in whichever order; its block names the host after the sentence.
    lost = [(b, m.group(1)) for b in blocks for m in map(_REMOTE_DAEMON.search, b) if m]
    if lost:
        cause = f"{_first_sentences(lost[0][0]).rstrip('.')}: the daemon on {lost[0][1]}"
    else:
        cause = _first_sentences((useful or blocks)[-1])
    # Tools mpirun starts (ssh, srun) print their own error outside the blocks.
    tool = next((line.strip() for line in log if _TOOL_LINE.match(line)), None)
    return f"{tool}; {cause}" if tool else cause


def _hydra_cause(log: list[str]) -> str | None:
    """MPICH's Hydra: '[mpiexec@host] func (file:line): message' lines (the
    first is the cause, the rest its call chain), or its '=' framed
    'BAD TERMINATION' block and exit string."""
    for line in log:
        m = _HYDRA_LINE.match(line)
        if m:
            return f"{m.group(1)}: {m.group(2).strip()}"
    if not any("BAD TERMINATION" in line for line in log):
        return None
    text = "\n".join(log)
    where = re.search(r"PID (\d+) RUNNING AT (\S+)", text)
    how = re.search(r"EXIT STRING: (.*)", text) or re.search(r"EXIT CODE: (.*)", text)
    who = f"process {where.group(1)} on {where.group(2)}" if where else "a process"
    return f"Hydra: bad termination of {who}" + (f": {how.group(1).strip()}" if how else "")


def launcher_cause(log: list[str]) -> str | None:
    """What the launcher (Open MPI's mpirun, MPICH's Hydra) said went wrong."""
    return _hydra_cause(log) or _open_mpi_cause(log)


def failure_message(what: str, result: RunResult) -> str:
    """One line: the program's own error line if it printed one, else the
    launcher's explanation, else its last line (never a separator)."""
    for line in reversed(result.log):
        if "error:" in line:
            return line.split("error:", 1)[1].strip() if line.startswith("rankwise") else line.strip()
    cause = launcher_cause(result.log)
    if cause is None:
        lines = [line.strip() for line in result.log if line.strip() and not _SEPARATOR.match(line)]
        errors = [line for line in lines if re.search(r"\berror\b", line, re.IGNORECASE)]
        if not lines:
            return f"{what} failed (exit code {result.returncode}) without a message"
        cause = errors[0] if errors else lines[-1]
    return f"{what} failed (exit code {result.returncode}): {cause}"
