"""`rankwise profile`: run an MPI application under the PMPI profiler and
keep its communication matrix (docs/reference/formats.md, "Profile").

Two ways to run it:

- a real MPI launcher ('mpirun -np 64', 'srun', 'mpiexec'): the application
  is unchanged; librankwise_profile.so is preloaded into every rank
  (LD_PRELOAD). Open MPI's mpirun is given the variables with `-x NAME=VALUE`,
  MPICH/Intel MPI's Hydra with `-genv NAME VALUE`; other launchers (srun)
  pass their environment on to the ranks, so the variables are set in it.
  The application must be linked dynamically against the MPI the profiler
  was built with (Open MPI from Debian by default; `make MPICC=...`).
- the simulated cluster (smpirun): SMPI runs every rank in one process, so
  nothing can be preloaded per rank; the application is built with smpicc
  and linked with librankwise_profile.a (`rankwise profile --smpi-flags`).

The profiler writes into a fresh folder beside the output; the files are
moved into place only when the run wrote them, so a run that failed before
MPI_Finalize leaves no matrix (and an older one untouched). One that exited
non-zero after MPI_Finalize wrote them keeps them, with a warning."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections import deque
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path

import numpy as np

from rankwise.cluster import launch

from rankwise.util import paths
from rankwise.util.errors import RankwiseError, UsageError, file_error
from rankwise.traffic.matrix import CommMatrix
from rankwise.cluster.hostfile import read_hostfile, write_hostfile

LIBRARY = "librankwise_profile"
HEADER = "rankwise_profile.h"
SUMMARY_FORMAT = "rankwise-profile-summary 1"
# A string only librankwise_profile holds: its presence in an SMPI
# application tells that the profiler was linked in.
_SMPI_MARKER = b"# rankwise-profile-summary"
SOURCE_MAX = 255  # the matrix's source line


# --- where the library is --------------------------------------------------------------


def library(flavour: str) -> Path:
    """librankwise_profile.so (flavour 'mpi', for LD_PRELOAD) or .a ('smpi', to link in)."""
    base = paths.PACKAGE_DIR / "_lib"
    path = base / f"{LIBRARY}.so" if flavour == "mpi" else base / "smpi" / f"{LIBRARY}.a"
    if not path.exists():
        raise RankwiseError(f"the profiler for {flavour} is not built ({path} is missing): run 'make'")
    return path


def include_dir() -> Path:
    path = paths.PACKAGE_DIR / "_lib" / "include"
    if not (path / HEADER).exists():
        raise RankwiseError(f"{HEADER} is not installed ({path} is missing): run 'make'")
    return path


def smpi_flags() -> list[str]:
    """What `smpicc app.c ...` needs to link the profiler into an SMPI application.

    --whole-archive: SMPI's mpi.h declares every MPI_ function weak, and a
    weak reference does not pull a member out of a static library."""
    lib = library("smpi")
    return [f"-I{include_dir()}", f"-L{lib.parent}", "-Wl,--whole-archive", "-lrankwise_profile",
            "-Wl,--no-whole-archive"]


def mpi_flags() -> list[str]:
    """Linking the real-MPI profiler in directly (instead of LD_PRELOAD), e.g.
    for a program that calls rw_profile_write without RW_PROFILE_OPTIONAL."""
    lib = library("mpi")
    return [f"-I{include_dir()}", f"-L{lib.parent}", f"-Wl,-rpath,{lib.parent}", "-lrankwise_profile"]


# --- the summary file ------------------------------------------------------------------


def summary_path(matrix_path: str | PathLike) -> Path:
    """NAME.rwc (or NAME.npz) -> NAME.summary.txt, as the profiler names it."""
    p = Path(matrix_path)
    stem = p.name[:-4] if p.name.endswith((".rwc", ".npz")) else p.name
    return p.with_name(stem + ".summary.txt")


@dataclass
class ProfileSummary:
    """The profiler's summary: per-rank columns (numpy arrays) and their totals."""

    source: str
    n_ranks: int
    elapsed: float
    columns: dict[str, np.ndarray] = field(default_factory=dict)
    total: dict[str, float] = field(default_factory=dict)

    def __getitem__(self, name: str) -> np.ndarray:
        return self.columns[name]


def read_summary(path: str | PathLike) -> ProfileSummary:
    """Parse a .summary.txt written by the profiler."""
    try:
        lines = Path(path).read_text().splitlines()
    except OSError as e:
        raise file_error(path, None, f"cannot read profile summary: {e.strerror}") from None
    if not lines or lines[0].strip() != f"# {SUMMARY_FORMAT}":
        raise file_error(path, 1, f"not a profile summary (expected '# {SUMMARY_FORMAT}')")
    meta: dict[str, str] = {}
    header: list[str] | None = None
    rows: list[list[str]] = []
    total: list[str] | None = None
    for number, line in enumerate(lines[1:], start=2):
        if line.startswith("#"):
            key, _, value = line[1:].strip().partition(" ")
            meta.setdefault(key, value)
        elif header is None:
            header = line.split()
        elif line.strip():
            fields = line.split()
            if len(fields) != len(header):
                raise file_error(path, number, f"{len(fields)} fields, expected {len(header)}")
            if fields[0] == "all":
                total = fields
            else:
                rows.append(fields)
    if header is None or total is None:
        raise file_error(path, None, "truncated profile summary (no header or no 'all' line)")
    n = int(meta.get("ranks", len(rows)))
    if len(rows) != n:
        raise file_error(path, None, f"{len(rows)} rank lines for {n} ranks")
    columns = {}
    for k, name in enumerate(header):
        values = [row[k] for row in rows]
        integer = all(v.lstrip("-").isdigit() for v in values)
        columns[name] = np.array(values, dtype=np.int64 if integer else np.float64)
    totals = {name: float(v) for name, v in zip(header[1:], total[1:])}
    elapsed = float(meta.get("elapsed", "0").split()[0])
    return ProfileSummary(meta.get("source", ""), n, elapsed, columns, totals)


# --- running ---------------------------------------------------------------------------


@dataclass
class ProfileResult:
    matrix: CommMatrix
    summary: ProfileSummary
    output: Path
    summary_file: Path
    returncode: int = 0  # the application's, kept when it wrote its profile anyway
    warning: str | None = None  # said to the user beside the result


def _source(prefix: str, words: list[str]) -> str:
    text = prefix + " ".join(shlex.quote(w) for w in words)
    text = " ".join(text.split())  # one line
    return text if len(text) <= SOURCE_MAX else text[: SOURCE_MAX - 3] + "..."


def _run_tee(cmd: list[str], env: dict[str, str], echo: bool) -> launch.RunResult:
    """Run cmd, showing its output (when echo) and keeping the tail for errors."""
    tail: deque[str] = deque(maxlen=40)
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, text=True, errors="replace", env=env)
    except OSError as exc:
        raise RankwiseError(f"cannot start {cmd[0]}: {exc.strerror}") from None
    assert proc.stdout is not None
    try:
        for line in proc.stdout:
            if echo:
                sys.stdout.write(line)
                sys.stdout.flush()
            if line.strip():
                tail.append(line.rstrip("\n"))
        proc.wait()
    except KeyboardInterrupt:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        raise RankwiseError("interrupted: no matrix written", exit_code=130) from None
    return launch.RunResult(proc.returncode, list(tail))


def _profiler_error(log: list[str]) -> str | None:
    for line in reversed(log):
        if line.startswith("rankwise-profile: error:"):
            return line.split("error:", 1)[1].strip()
    return None


def _telling_line(log: list[str]) -> str | None:
    """The last line that says what went wrong: an error message (the
    application's or the profiler's), or the launcher's word of a signal.
    An ordinary output line ('Time in seconds = 1.2') says nothing of it."""
    words = [line.strip() for line in log if any(c.isalnum() for c in line)]
    telling = (lambda line: "error:" in line.lower(),
               lambda line: "exited on signal" in line or "killed" in line.lower())
    return next((line for test in telling for line in reversed(words) if test(line)), None)


def _failure(result: launch.RunResult, app: str) -> RankwiseError:
    """One line for a run that failed, quoting only a line that tells why."""
    said = _telling_line(result.log)
    code = result.returncode
    how = f"was killed by signal {-code}" if code < 0 else f"failed (exit code {code})"
    why = f": {said.rstrip('.')}" if said else " before writing its profile (it printed no error message)"
    return RankwiseError(f"the profiled application {app} {how}{why}; no matrix written")


def _check_output(output: Path) -> Path:
    from rankwise.util.files import prepare_output
    from rankwise.traffic.matrix import MATRIX_SUFFIXES

    return prepare_output(output.resolve(), MATRIX_SUFFIXES)  # the same -o rules as every verb


def _prepare_output(output: Path) -> tuple[Path, Path]:
    """A fresh folder beside output for the profiler to write into, and the
    .rwc file inside it."""
    output = _check_output(output)
    try:
        work = Path(tempfile.mkdtemp(prefix=".rankwise-profile-", dir=output.parent))
    except OSError as e:
        raise RankwiseError(f"{output.parent}: cannot write there: {e.strerror}") from None
    return work, work / "profile.rwc"


def _finish(result: launch.RunResult, app: str, written: Path, output: Path) -> ProfileResult:
    output = output.resolve()
    complete = written.exists() and summary_path(written).exists()
    warning = None
    if result.returncode != 0:
        # A profile is written in MPI_Finalize: the run got to its end. An application such as NAS DT
        # ends with `return 1` after its work and says nothing: keep what it wrote, and say so. One
        # that printed an error failed, whatever it wrote.
        if not complete or _telling_line(result.log):
            raise _failure(result, app)
        warning = (f"{app} exited with code {result.returncode} after MPI_Finalize wrote its profile, "
                   "printing no error; the matrix is kept")
    if not written.exists():
        why = _profiler_error(result.log)
        if why:
            raise RankwiseError(f"the profiler could not write the matrix: {why}", exit_code=1)
        raise RankwiseError(
            f"{app} ended without writing a profile: did it call MPI_Finalize, and is it linked "
            "dynamically against the MPI the profiler was built for?", exit_code=1)
    matrix = CommMatrix.load(written)
    summary = read_summary(summary_path(written))
    final_summary = summary_path(output)
    if output.suffix == ".npz":
        matrix.save(output)
    else:
        os.replace(written, output)
    os.replace(summary_path(written), final_summary)
    return ProfileResult(matrix, summary, output, final_summary, result.returncode, warning)


def _check_app(app: str) -> Path:
    found = shutil.which(app) if os.sep not in app else (app if Path(app).is_file() else None)
    if not found:
        raise RankwiseError(f"application '{app}' not found")
    path = Path(found).resolve()
    if not os.access(path, os.X_OK):
        raise RankwiseError(f"application '{app}' is not executable")
    return path


def _sim_hosts(platform: Path, ranks: int | None, ranks_per_node: int | None,
               hostfile: Path | None) -> list[str]:
    """One host name per rank for smpirun."""
    from rankwise.sim.platform_file import hostfile_for, read_platform  # here: real MPI needs no simulator

    hosts = read_platform(platform)
    if hostfile is not None:
        chosen = read_hostfile(hostfile)
        known = {name for name, _ in hosts} if hosts is not None else None
        for name, _ in chosen:
            if known is not None and name not in known:
                raise RankwiseError(f"{hostfile}: host '{name}' is not in the platform {platform}")
        lines = [name for name, slots in chosen for _ in range(slots)]
    elif hosts is None:
        raise RankwiseError(f"{platform}: a compiled platform has no host list to read; give --hostfile")
    elif ranks_per_node is not None:
        lines = hostfile_for(hosts, ranks_per_node)
    else:
        # One rank per host while they last, else fill each host's cores in order.
        n = len(hosts) if ranks is None else ranks
        if n <= len(hosts):
            lines = [name for name, _ in hosts[:n]]
        else:
            lines = [name for name, cores in hosts for _ in range(cores)][:n]
            if len(lines) < n:
                raise UsageError(f"--ranks {n}: the platform has {len(lines)} cores")
    if ranks is not None:
        if ranks < 1:
            raise UsageError("--ranks must be at least 1")
        if ranks > len(lines):
            raise UsageError(f"--ranks {ranks}: the hosts chosen hold {len(lines)} ranks")
        lines = lines[:ranks]
    return lines


def profile_sim(
    platform: str | PathLike,
    app: str,
    args: list[str],
    output: str | PathLike,
    ranks: int | None = None,
    ranks_per_node: int | None = None,
    hostfile: str | PathLike | None = None,
    echo: bool = True,
) -> ProfileResult:
    """Run an SMPI application (linked with librankwise_profile.a) on the
    simulated cluster of a SimGrid platform and keep its matrix."""
    from rankwise.sim import smpi

    platform, output = Path(platform), _check_output(Path(output))
    app_path = _check_app(app)
    library("smpi")
    try:
        linked = _SMPI_MARKER in app_path.read_bytes()
    except OSError as e:
        raise RankwiseError(f"cannot read {app}: {e.strerror}") from None
    if not linked:
        raise RankwiseError(
            f"{app} is not linked with the profiler: build it with "
            f"'smpicc ... {' '.join(smpi_flags())}' (rankwise profile --smpi-flags)")
    lines = _sim_hosts(platform, ranks, ranks_per_node, Path(hostfile) if hostfile else None)
    work, written = _prepare_output(output)
    try:
        hostfile_path = work / "hostfile"
        write_hostfile(hostfile_path, lines)
        cmd = smpi.smpirun_command(app_path, list(args), platform, hostfile_path, len(lines),
                                   extra_cfg=("smpi/privatization:dlopen",))
        env = launch.mpi_environment()
        env["RANKWISE_PROFILE_OUT"] = str(written)
        env["RANKWISE_PROFILE_SOURCE"] = _source(f"smpi:{platform} ", [app, *args])
        result = _run_tee(cmd, env, echo)
        if result.returncode != 0:
            # SimGrid's own failures are told as such; the application's are judged by _finish.
            why = smpi.simgrid_failure(f"the profiled application {app}", result.returncode, result.log)
            if why is not None:
                raise RankwiseError(f"{why}; no matrix written", exit_code=1)
        return _finish(result, app, written, output)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def launcher_kind(word: str) -> str:
    """'openmpi', 'hydra' (MPICH, Intel MPI) or 'other', from `LAUNCHER --version`."""
    name = os.path.basename(word)
    if name == "srun":
        return "other"
    try:
        out = subprocess.run([word, "--version"], capture_output=True, text=True, timeout=30,
                             stdin=subprocess.DEVNULL, env=launch.mpi_environment())
    except (OSError, subprocess.SubprocessError):
        return "other"
    text = out.stdout + out.stderr
    if "Open MPI" in text or "OpenRTE" in text or "Open RTE" in text:
        return "openmpi"
    if "HYDRA" in text or "Hydra" in text:
        return "hydra"
    return "other"


def launcher_command(launcher: str, app: str, args: list[str], variables: dict[str, str]
                     ) -> tuple[list[str], dict[str, str]]:
    """The command line and environment that give every rank `variables`."""
    words = launch.parse_launcher(launcher)
    env = launch.mpi_environment()
    kind = launcher_kind(words[0])
    extra: list[str] = []
    for name, value in variables.items():
        if kind == "openmpi":
            extra += ["-x", f"{name}={value}"]
        elif kind == "hydra":
            extra += ["-genv", name, value]
        else:
            env[name] = value
    return [*words, *extra, app, *args], env


def profile_launcher(
    launcher: str,
    app: str,
    args: list[str],
    output: str | PathLike,
    echo: bool = True,
) -> ProfileResult:
    """Run an unchanged MPI application through a real launcher with the
    profiler preloaded into every rank, and keep its matrix."""
    output = _check_output(Path(output))
    app_path = _check_app(app)
    lib = library("mpi")
    work, written = _prepare_output(output)
    try:
        preload = " ".join(p for p in (str(lib), os.environ.get("LD_PRELOAD", "")) if p)
        variables = {
            "LD_PRELOAD": preload,
            "RANKWISE_PROFILE_OUT": str(written),
            "RANKWISE_PROFILE_SOURCE": _source(f"mpi:{launcher} ", [app, *args]),
        }
        cmd, env = launcher_command(launcher, str(app_path), list(args), variables)
        result = _run_tee(cmd, env, echo)
        return _finish(result, app, written, output)
    finally:
        shutil.rmtree(work, ignore_errors=True)
