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
from rich.markup import escape
from typer import _click as click
from typer.core import TyperGroup

from rankwise.util.errors import UsageError
from rankwise.report.profile import show_profile


class _SingleCommand(TyperGroup):
    """A typer app mounted with add_typer is a group; this one has no
    subcommands and hands every argument to its callback."""

    def parse_args(self, ctx, args):
        if not args and self.no_args_is_help and not ctx.resilient_parsing:
            raise click.exceptions.NoArgsIsHelpError(ctx)  # help, then exit 2 like every verb
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
from rankwise.cli.common import HOSTFILE_OPTION, console, err_console


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
    hostfile: Optional[Path] = HOSTFILE_OPTION,
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Do not show the application's output."),
    smpi_flags: bool = typer.Option(False, "--smpi-flags", help="Print the smpicc flags that link the profiler into an application, and exit."),
    mpi_flags: bool = typer.Option(False, "--mpi-flags", help="Print the mpicc flags that link the real-MPI profiler in (instead of preloading it), and exit."),
):
    """Run an MPI application under the profiler and write its communication matrix."""
    from rankwise.measure import profile as prof
    if smpi_flags or mpi_flags:
        if command or sim or launcher:
            raise UsageError("--smpi-flags and --mpi-flags take nothing else")
        typer.echo(" ".join(prof.smpi_flags() if smpi_flags else prof.mpi_flags()))
        return
    if not command:
        raise UsageError("give the application to profile: rankwise profile --sim P -o OUT.rwc APP ARGS...")
    if (sim is None) == (launcher is None):
        raise UsageError("give exactly one of --sim PLATFORM or --launcher 'mpirun ...'")
    if launcher is not None and (ranks is not None or ranks_per_node is not None or hostfile is not None):
        raise UsageError("--ranks, --ranks-per-node and --hostfile are for --sim; tell the launcher instead")
    if ranks_per_node is not None and hostfile is not None:
        raise UsageError("give --ranks-per-node or --hostfile, not both")
    app, args = command[0], list(command[1:])
    if sim is not None:
        result = prof.profile_sim(sim, app, args, output, ranks=ranks, ranks_per_node=ranks_per_node,
                                  hostfile=hostfile, echo=not quiet)
    else:
        result = prof.profile_launcher(launcher, app, args, output, echo=not quiet)
    show_profile(result, console)
    if result.warning:
        err_console.print(f"[yellow]rankwise: warning:[/] {escape(result.warning)}", highlight=False, soft_wrap=True)
