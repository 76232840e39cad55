"""`rankwise bench`: the papers' before/after tables on simulated platforms."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from rankwise.cli.common import console
from rankwise.util.errors import RankwiseError, UsageError


def bench_command(
    out: Path = typer.Option(Path("rankwise-bench"), "--out", help="Folder for the tables (CSV), plots (PNG) and the platforms' models."),
    only: Optional[str] = typer.Option(None, "--only", help="Comma list of: alltoall, stencil, scaling, groups, uniform, real."),
    quick: bool = typer.Option(False, "--quick", help="Fewer scales and configurations (a couple of minutes)."),
    repeats: int = typer.Option(1, "--repeats", help="Runs per placement (simulated time is deterministic: 1 is enough)."),
):
    """Before/after tables of Cui et al. 2020 and Getmansky et al. 2015, reproduced on simulated platforms (and one real-MPI run)."""
    from rankwise.workflows.experiments import run_bench

    if repeats < 1:
        raise UsageError(f"--repeats must be >= 1, got {repeats}")
    names = [n.strip() for n in only.split(",") if n.strip()] if only else None
    if not run_bench(out, names, quick, repeats, console):
        raise RankwiseError("some goals were missed (see FAIL above)", exit_code=1)
