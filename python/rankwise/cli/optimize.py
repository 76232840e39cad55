"""`rankwise optimize`: probe -> traffic -> map -> launcher file -> verify.

    rankwise optimize --sim platform.xml --ranks 64 --ranks-per-node 2 -- alltoall --sizes 1K:1M
    rankwise optimize --sim platform.xml --pattern stencil3d:grid=4x4x4,bytes=1M,mode=3d -- stencil --grid 4x4x4 --mode 3d
    rankwise optimize --launcher 'mpirun -np 64' --hostfile hostfile --model net.rwm -- ./app args

Everything after the application name belongs to the application."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from rankwise.util.errors import UsageError

from rankwise.cli.common import HOSTFILE_OPTION, console
from rankwise.cli.probe import GROUP_BY, check_choice

DEFAULT_FORMAT = {"sim": "slurm", "real": "openmpi"}


def optimize_command(
    command: Optional[List[str]] = typer.Argument(None, metavar="[APP [ARGS]]", help="Application (or a rankwise benchmark: alltoall, stencil, groups, fft, collectives) and its arguments."),
    sim: Optional[Path] = typer.Option(None, "--sim", help="Simulated cluster: a SimGrid platform (rankwise sim platform)."),
    launcher: Optional[str] = typer.Option(None, "--launcher", help="Real cluster: e.g. 'mpirun -np 64'."),
    model_path: Optional[Path] = typer.Option(None, "--model", "-m", help="Model to reuse if fresh enough (default OUT/model.rwm); probed when missing."),
    max_age: float = typer.Option(86400.0, "--max-age", help="Seconds a model stays fresh; older: warn (or --reprobe)."),
    reprobe: bool = typer.Option(False, "--reprobe", help="Probe again even if the model is fresh."),
    hosts: Optional[Path] = HOSTFILE_OPTION,
    ranks_per_node: Optional[int] = typer.Option(None, "--ranks-per-node", help="Slots on every node (default: the ranks per node of the probe)."),
    ranks: Optional[int] = typer.Option(None, "--ranks", help="Job size (default: the traffic's rank count)."),
    pattern: Optional[str] = typer.Option(None, "--pattern", "-p", help="Traffic as a pattern spec (else --matrix, else the app is profiled)."),
    matrix: Optional[Path] = typer.Option(None, "--matrix", help="Traffic as a matrix file."),
    algorithm: str = typer.Option("auto", "--algorithm", "-a", help="Mapping algorithm (rankwise map --help)."),
    objective: str = typer.Option("time", "--objective", help="time | bottleneck."),
    seed: int = typer.Option(1, "--seed", help="Seed of the randomised algorithms."),
    fmt: Optional[str] = typer.Option(None, "--format", "-f", help="Launcher file: openmpi | mpich | intel | slurm | permutation."),
    out: Path = typer.Option(Path("rankwise-optimize"), "--out", help="Folder for the model, traffic, placement, tables and plots."),
    verify: bool = typer.Option(True, "--verify/--no-verify", help="Run the app in both placements and compare."),
    repeats: int = typer.Option(3, "--repeats", help="Verification runs per placement (interleaved)."),
    table: Optional[str] = typer.Option(None, "--table", help="Benchmark table to compare (e.g. 3d for the stencil)."),
    group_by: Optional[str] = typer.Option(None, "--group-by", help="Probe: host (default) or rank (every rank a node: one host)."),
    allow_missing: bool = typer.Option(False, "--allow-missing", help="Cost pairs the model lacks as its slowest pair (warns) instead of failing."),
):
    """Probe, map and verify in one go; writes the launcher file."""
    from rankwise.workflows.optimize import run_optimize

    if (sim is None) == (launcher is None):
        raise UsageError("give exactly one of --sim PLATFORM or --launcher 'mpirun ...'")
    check_choice("--group-by", group_by, GROUP_BY)
    if group_by is not None and sim is not None:
        raise UsageError("--group-by is for --launcher (the simulated probe groups ranks by host)")
    app, *args = command or [None]
    run_optimize(console=console, app=app, args=args, sim=sim, launcher=launcher, model_path=model_path,
                 max_age=max_age, reprobe=reprobe, hosts=hosts, ranks_per_node=ranks_per_node, ranks=ranks,
                 pattern=pattern, matrix=matrix, algorithm=algorithm, objective=objective, seed=seed,
                 fmt=fmt or DEFAULT_FORMAT["sim" if sim else "real"], out=out, verify=verify, repeats=repeats,
                 table=table, group_by=group_by, allow_missing=allow_missing)
