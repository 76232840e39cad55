"""The benchmark programs (rankwise-bench-*): run one on a simulated or real
cluster and read its OSU-style tables into numpy arrays.

The programs are C MPI programs of the engine (engine/mpi/benchmarks/, docs in
docs/reference/benchmark-programs.md), built for real MPI and for SMPI like
rankwise-probe. Their standard output, on rank 0, is::

    # program: rankwise-bench-alltoall 0.1.0     "# key: value" lines (meta)
    # ranks: 8
    # table alltoall                             one or more tables
    # size  min_us  median_us  max_us            the columns
    1024  12.345  12.500  13.001                 one row per size
    # skipped 8388608: needs 128M of buffers ... a size left out, and why
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from os import PathLike, fspath
from pathlib import Path

import numpy as np

from rankwise.cluster import launch

from rankwise.util import paths
from rankwise.util.errors import RankwiseError
from rankwise.sim import smpi
from rankwise.sim.hosts import rank_hosts
from rankwise.cluster.hostfile import read_hostfile, write_hostfile

PROGRAMS = ("alltoall", "stencil", "groups", "fft", "collectives")
PREFIX = "rankwise-bench-"

# SMPI_SHARED_MALLOC maps one shared block (1 MiB by default) over and over:
# a 64-rank all-to-all of 8 MiB blocks would need 65,536 mappings, beyond
# Linux's default vm.max_map_count. 64 MiB blocks need 1,024.
SMPI_SHARED_BLOCK = "smpi/shared-malloc-blocksize:67108864"


def smpi_alltoall_cfg(n_ranks: int) -> tuple[str, str]:
    """SMPI's default all-to-all selector gets slow past ~128 ranks, and its
    default all-to-allv (every request at once, empty ones included) costs
    O(P^4) simulation time: 9 s per call at 128 ranks. Both are pinned to
    the pairwise exchange (P - 1 steps, partner rank XOR step), Open MPI
    4.1's choice for all-to-allv below 4 and from 64 to 127 ranks (from 4
    to 63 it sends everything at once: docs/results/emulated.md, "The
    duplex cap on real TCP, quiet"). SMPI's `pair` refuses
    communicators whose size is not a power of two; `ring` (partner rank
    +- step) then takes the same P - 1 steps. Every communicator of the
    programs divides the job (the FFT's rows and columns), so a power-of-two
    job has power-of-two communicators only."""
    algorithm = "pair" if n_ranks & (n_ranks - 1) == 0 else "ring"
    return f"smpi/alltoall:{algorithm}", f"smpi/alltoallv:{algorithm}"


_META = re.compile(r"#\s*([a-z][a-z0-9-]*):\s?(.*)")
_SKIPPED = re.compile(r"#\s*skipped\s+(\d+):\s*(.*)")
_TABLE = re.compile(r"#\s*table\s+(\S+)\s*")
TIME_COLUMNS = ("min_us", "median_us", "max_us")


@dataclass
class Table:
    """One table: a row per size; times in microseconds (per iteration, the
    slowest rank; min/median/max over the iterations). `extra` holds the
    program's further columns (fft: nx, ny, nz; groups: mean_us)."""

    name: str
    size: np.ndarray  # int64 bytes
    min_us: np.ndarray
    median_us: np.ndarray
    max_us: np.ndarray
    extra: dict[str, np.ndarray] = field(default_factory=dict)
    skipped: list[tuple[int, str]] = field(default_factory=list)  # (size, reason)

    def __len__(self) -> int:
        return int(self.size.size)

    def at(self, size: int, column: str = "median_us") -> float:
        """The value of a column in the row of one size."""
        rows = np.flatnonzero(self.size == size)
        if rows.size != 1:
            raise KeyError(f"table {self.name} has no row for size {size}")
        values = self.extra[column] if column in self.extra else getattr(self, column)
        return float(values[rows[0]])


@dataclass
class BenchResult:
    """A benchmark run: its header lines, tables in output order, raw output."""

    program: str
    meta: dict[str, str]
    tables: dict[str, Table]
    output: str

    def __getitem__(self, name: str) -> Table:
        try:
            return self.tables[name]
        except KeyError:
            raise KeyError(f"{self.program}: no table '{name}' (have: {', '.join(self.tables)})") from None

    @property
    def table(self) -> Table:
        """The table of a program that prints one."""
        if len(self.tables) != 1:
            raise RankwiseError(f"{self.program} printed {len(self.tables)} tables, not one")
        return next(iter(self.tables.values()))


def parse_output(text: str, program: str = "") -> BenchResult:
    """Read a benchmark program's standard output (see the module doc).
    Lines that belong to no table (launcher chatter) are ignored; a data
    line inside a table must match its columns."""
    meta: dict[str, str] = {}
    tables: dict[str, Table] = {}
    name = None
    columns: list[str] = []
    rows: list[list[str]] = []
    pending_skips: list[tuple[int, str]] = []

    def close():
        if name is None:
            return
        if not columns:
            raise RankwiseError(f"{program or 'benchmark'}: table {name} has no '# size ...' line")
        missing = [c for c in ("size", *TIME_COLUMNS) if c not in columns]
        if missing:
            raise RankwiseError(f"{program or 'benchmark'}: table {name} has no column {missing[0]}")
        cols = {}
        for k, col in enumerate(columns):
            values = [row[k] for row in rows]
            integral = col == "size" or (col not in TIME_COLUMNS and all(_is_int(v) for v in values))
            cols[col] = np.array([int(v) for v in values] if integral else [float(v) for v in values],
                                 np.int64 if integral else np.float64)
        extra = {c: v for c, v in cols.items() if c not in ("size", *TIME_COLUMNS)}
        tables[name] = Table(name, cols["size"], cols["min_us"], cols["median_us"], cols["max_us"],
                             extra, list(pending_skips))

    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            if m := _TABLE.fullmatch(line):
                close()
                name, columns, rows, pending_skips = m.group(1), [], [], []
            elif m := _SKIPPED.fullmatch(line):
                pending_skips.append((int(m.group(1)), m.group(2)))
            elif name is not None and not columns and line[1:].split()[:1] == ["size"]:
                columns = line[1:].split()
            elif name is None and (m := _META.fullmatch(line)):
                meta.setdefault(m.group(1), m.group(2).strip())
            continue
        if name is None or not columns:
            continue
        fields = line.split()
        if len(fields) != len(columns) or not _numeric(fields):
            raise RankwiseError(f"{program or 'benchmark'}: output line {lineno} is not a row of "
                                f"table {name}: {line!r}")
        rows.append(fields)
    close()
    program = program or meta.get("program", "").split(" ")[0]
    return BenchResult(program, meta, tables, text)


def _is_int(text: str) -> bool:
    try:
        int(text)
    except ValueError:
        return False
    return True


def _numeric(fields: list[str]) -> bool:
    try:
        int(fields[0])
        [float(f) for f in fields[1:]]
    except ValueError:
        return False
    return True


def program_name(name: str) -> str:
    """'alltoall' or 'rankwise-bench-alltoall' -> 'rankwise-bench-alltoall'."""
    short = name[len(PREFIX):] if name.startswith(PREFIX) else name
    if short not in PROGRAMS:
        raise RankwiseError(f"unknown benchmark program '{name}' (known: {', '.join(PROGRAMS)})")
    return PREFIX + short


def run_benchmark(
    program: str,
    args: Sequence[str] = (),
    *,
    sim: str | PathLike | None = None,
    hosts: Sequence[str] | None = None,
    hostfile: str | PathLike | None = None,
    ranks_per_node: int = 1,
    nodes: int | None = None,
    launcher: str | None = None,
    smpi_cfg: Sequence[str] = (),
    timeout: float | None = 600,
    profile: str | PathLike | None = None,
    env: dict[str, str] | None = None,
    coll: bool = False,
) -> BenchResult:
    """Run a benchmark program and parse its tables.

    Simulated (`sim`: a SimGrid platform): one rank per entry of `hosts`
    (host names, repeated for several ranks on a host), or per slot of
    `hostfile`, or else `ranks_per_node` ranks on each platform host (the
    first `nodes` of them); smpirun gets rankwise's deterministic settings,
    smpi_alltoall_cfg() and SMPI_SHARED_BLOCK (unless `smpi_cfg` sets
    them) and `smpi_cfg`. Real (`launcher`: 'mpirun -np 4', 'srun ...'):
    the MPI build under that launcher, `hostfile` handed to it as
    -hostfile. Raises RankwiseError with the program's own error line when
    it fails.

    env: variables added to the launcher's environment (simulated runs: to
    smpirun's, which its ranks share).
    coll (simulated runs): run the build linked with librankwise_coll
    (rankwise-bench-NAME-coll, collectives and stencil); it reads
    RANKWISE_MODEL and the other RANKWISE_COLL_* variables from `env`.
    Under a real launcher, preload the library through `env` instead.
    profile (simulated runs): run the build linked with the PMPI profiler
    (rankwise-bench-NAME-profiled) and write the traffic of the timed
    iterations to this matrix file. Under a real launcher, preload the
    profiler through the launcher instead (rankwise.measure.profile).
    """
    name = program_name(program)
    args = [fspath(a) for a in args]
    if (sim is None) == (launcher is None):
        raise RankwiseError("run_benchmark: give either sim (a platform) or launcher")
    if sim is None:
        if hosts is not None:
            raise RankwiseError("run_benchmark: hosts is for simulated runs; give a hostfile to the launcher")
        words = launch.parse_launcher(launcher)
        if hostfile is not None:
            read_hostfile(hostfile)
            words += ["-hostfile", str(Path(hostfile).resolve())]
        cmd = [*words, str(paths.program(name, "mpi")), *args]
        return _run(cmd, name, timeout, cwd=None, env={**launch.mpi_environment(), **(env or {})})

    if profile is not None and sim is None:
        raise RankwiseError("run_benchmark: profile= is for simulated runs (preload the profiler with a launcher)")
    platform = Path(sim)
    lines = rank_hosts(platform, hostfile=hostfile, hosts=hosts, nodes=nodes, ranks_per_node=ranks_per_node)
    with tempfile.TemporaryDirectory(prefix="rankwise-bench-") as tmp:
        hf = Path(tmp) / "hostfile"
        write_hostfile(hf, lines)
        cfg = tuple(smpi_cfg)
        if not any(c.startswith("smpi/shared-malloc-blocksize:") for c in cfg):
            cfg = (SMPI_SHARED_BLOCK, *cfg)
        for pinned in smpi_alltoall_cfg(len(lines)):
            if not any(c.startswith(pinned.split(":")[0] + ":") for c in cfg):
                cfg = (pinned, *cfg)
        extra_env = env or {}
        env = {**launch.mpi_environment(), **extra_env}
        binary = f"{name}-coll" if coll else name
        if coll and profile is not None:
            raise RankwiseError("run_benchmark: coll and profile are separate builds; choose one")
        if profile is not None:
            # Each rank needs its own copy of the profiler's tables.
            binary = f"{name}-profiled"
            cfg = (*cfg, "smpi/privatization:dlopen")
            env["RANKWISE_PROFILE_OUT"] = str(Path(profile).resolve())
            env["RANKWISE_PROFILE_SOURCE"] = f"smpi:{platform} {binary} {' '.join(args)}"
        cmd = smpi.smpirun_command(paths.program(binary, "smpi"), args, platform, hf, len(lines),
                                   extra_cfg=cfg)
        return _run(cmd, name, timeout, cwd=tmp, env=env, simulated=True)


def _run(cmd: list[str], name: str, timeout: float | None, cwd, env=None, simulated: bool = False) -> BenchResult:
    """Run cmd in its own session (a timeout ends the launcher and its ranks)."""
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                errors="replace", stdin=subprocess.DEVNULL, env=env or launch.mpi_environment(),
                                cwd=cwd, start_new_session=True)
    except OSError as exc:
        raise RankwiseError(f"cannot start {cmd[0]}: {exc.strerror}") from None
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise RankwiseError(f"{name} did not finish within {timeout:g} s", exit_code=1) from None
    if proc.returncode != 0:
        log = [line for line in (stdout + "\n" + stderr).splitlines() if line.strip()]
        message = (smpi.failure_message(name, proc.returncode, log) if simulated
                   else launch.failure_message(name, launch.RunResult(proc.returncode, log)))
        if not message.startswith((name, "SimGrid crashed")):
            message = f"{name}: {message}"
        raise RankwiseError(message, exit_code=1)
    result = parse_output(stdout, name)
    if not result.tables:
        raise RankwiseError(f"{name} printed no table: {stdout.strip()[-200:] or 'no output'}",
                            exit_code=1)
    return result
