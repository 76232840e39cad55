"""The `rankwise` command line: one module per verb, mounted here."""

from __future__ import annotations

import sys

import typer

from rankwise.cli.bench import bench_command
from rankwise.cli.common import err_console
from rankwise.cli.demo import demo_command
from rankwise.cli.import_ import import_command
from rankwise.cli.map import map_command
from rankwise.cli.optimize import optimize_command
from rankwise.cli.pattern import pattern_app
from rankwise.cli.probe import probe_command
from rankwise.cli.profile import profile_app
from rankwise.cli.show import show_command
from rankwise.cli.sim import sim_app
from rankwise.errors import RankwiseError

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Measure the network an MPI job runs on, and act on what was measured.",
)
app.command("probe", no_args_is_help=True)(probe_command)
app.command("show", no_args_is_help=True)(show_command)
app.add_typer(sim_app, name="sim")
app.add_typer(pattern_app, name="pattern")
app.add_typer(profile_app, name="profile")
app.command("import", no_args_is_help=True)(import_command)
app.command("map", no_args_is_help=True)(map_command)
app.command("optimize", no_args_is_help=True, context_settings={"allow_interspersed_args": False})(optimize_command)
app.command("demo")(demo_command)
app.command("bench")(bench_command)


def main() -> None:
    try:
        app(standalone_mode=True)
    except RankwiseError as exc:
        err_console.print(f"[bold red]rankwise: error:[/bold red] {exc}", highlight=False, soft_wrap=True)
        sys.exit(exc.exit_code)
