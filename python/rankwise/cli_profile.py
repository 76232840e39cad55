"""`rankwise profile`: run an MPI application under the PMPI profiler.

    rankwise profile --sim PLATFORM [--ranks N] -o OUT.rwc APP ARGS...
    rankwise profile --launcher 'mpirun -np 4' -o OUT.rwc APP ARGS...
    rankwise profile --smpi-flags        (what smpicc needs to link the profiler in)

One command, not a group: everything after APP belongs to the application
(options are not looked for past the first argument), so `rankwise
profile -o p.rwc ./app -o x` gives `-o x` to the application."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer
from rich.console import Console
from rich.markup import escape
from typer import _click as click
from typer.core import TyperGroup

from rankwise.errors import RankwiseError


class _SingleCommand(TyperGroup):
    """A typer app mounted with add_typer is a group; this one has no
    subcommands and hands every argument to its callback."""

    def parse_args(self, ctx, args):
        if not args and self.no_args_is_help and not ctx.resilient_parsing:
            click.echo(ctx.get_help(), color=ctx.color)
            ctx.exit()
        return click.Command.parse_args(self, ctx, args)

    def collect_usage_pieces(self, ctx):
        return click.Command.collect_usage_pieces(self, ctx)

    def format_commands(self, ctx, formatter):
        pass


profile_app = typer.Typer(
    cls=_SingleCommand,
    no_args_is_help=True,
    help="Run an MPI application under the profiler: its communication matrix (.rwc) and MPI times.",
)
console = Console()


@profile_app.callback(
    invoke_without_command=True,
    context_settings={"allow_interspersed_args": False},
)
def profile(
    command: Optional[List[str]] = typer.Argument(None, metavar="APP [ARGS]", help="The application and its arguments."),
    output: Path = typer.Option(Path("rankwise-profile.rwc"), "--output", "-o", help="Matrix file to write (.rwc or .npz); the summary goes beside it (NAME.summary.txt)."),
    sim: Optional[Path] = typer.Option(None, "--sim", help="Run on the simulated cluster of this SimGrid platform (APP built with --smpi-flags)."),
    launcher: Optional[str] = typer.Option(None, "--launcher", help="Run through a real launcher, e.g. 'mpirun -np 64' (APP unchanged, profiler preloaded)."),
    ranks: Optional[int] = typer.Option(None, "--ranks", help="--sim: number of ranks (default: one per host)."),
    ranks_per_node: Optional[int] = typer.Option(None, "--ranks-per-node", help="--sim: ranks on each host of the platform."),
    hostfile: Optional[Path] = typer.Option(None, "--hostfile", help="--sim: hosts (and slots = ranks) to use."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Do not show the application's output."),
    smpi_flags: bool = typer.Option(False, "--smpi-flags", help="Print the smpicc flags that link the profiler into an application, and exit."),
    mpi_flags: bool = typer.Option(False, "--mpi-flags", help="Print the mpicc flags that link the real-MPI profiler in (instead of preloading it), and exit."),
):
    """Run an MPI application under the profiler and write its communication matrix."""
    from rankwise import profile as prof

    if smpi_flags or mpi_flags:
        if command or sim or launcher:
            raise RankwiseError("--smpi-flags and --mpi-flags take nothing else")
        typer.echo(" ".join(prof.smpi_flags() if smpi_flags else prof.mpi_flags()))
        return
    if not command:
        raise RankwiseError("give the application to profile: rankwise profile --sim P -o OUT.rwc APP ARGS...")
    if (sim is None) == (launcher is None):
        raise RankwiseError("give exactly one of --sim PLATFORM or --launcher 'mpirun ...'")
    if launcher is not None and (ranks is not None or ranks_per_node is not None or hostfile is not None):
        raise RankwiseError("--ranks, --ranks-per-node and --hostfile are for --sim; tell the launcher instead")
    if ranks_per_node is not None and hostfile is not None:
        raise RankwiseError("give --ranks-per-node or --hostfile, not both")
    app, args = command[0], list(command[1:])
    if sim is not None:
        result = prof.profile_sim(sim, app, args, output, ranks=ranks, ranks_per_node=ranks_per_node,
                                  hostfile=hostfile, echo=not quiet)
    else:
        result = prof.profile_launcher(launcher, app, args, output, echo=not quiet)
    show_profile(result)


def show_profile(result) -> None:
    """The matrix summary of `rankwise pattern show`, then where MPI time went."""
    from rankwise.cli_pattern import show_summary

    show_summary(result.matrix, result.output)
    total = result.summary.total
    classes = (("t_p2p", "point-to-point"), ("t_coll", "collectives"), ("t_wait", "wait/test"),
               ("t_other", "other"))
    mpi = total.get("mpi_time", 0.0)
    n = max(result.summary.n_ranks, 1)
    share = f" ({100 * mpi / (n * result.summary.elapsed):.3g}% of the run)" if result.summary.elapsed > 0 else ""
    parts = ", ".join(f"{label} {total.get(key, 0.0) / n:.3g} s" for key, label in classes)
    rows = [
        ("collective share", f"{100 * total.get('coll_bytes', 0) / max(total.get('sent_bytes', 0), 1):.3g}% of bytes"),
        ("MPI time per rank", f"{mpi / n:.3g} s{share}: {parts}"),
        ("summary", str(result.summary_file)),
    ]
    width = 17
    for key, value in rows:
        console.print(f"[bold]{key:<{width}}[/bold]  {escape(value)}", highlight=False, soft_wrap=True)
