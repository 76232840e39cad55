"""The `rankwise` command line: one module per verb, mounted here.

Every error ends as one line on stderr, `rankwise: error: ...`, and an exit
code: 2 when the command line is wrong (typer's own usage errors and
rankwise.util.errors.UsageError), 1 when a well-formed command failed."""

from __future__ import annotations

import signal
import sys
from typing import Optional

import typer
from rich.markup import escape
from typer import _click as click

from rankwise.cli.bench import bench_command
from rankwise.cli.coll import coll_app
from rankwise.cli.common import err_console
from rankwise.cli.demo import demo_command
from rankwise.cli.diff import diff_command
from rankwise.cli.emulate import emulate_app
from rankwise.cli.export import export_app
from rankwise.cli.import_ import import_command
from rankwise.cli.info import info_command
from rankwise.cli.map import map_command
from rankwise.cli.node import node_app
from rankwise.cli.optimize import optimize_command
from rankwise.cli.pattern import pattern_app
from rankwise.cli.predict import predict_command
from rankwise.cli.probe import probe_command
from rankwise.cli.profile import profile_app
from rankwise.cli.show import show_command
from rankwise.cli.sim import sim_app
from rankwise.cli.validate import validate_command
from rankwise.cli.watch import watch_command
from rankwise.util.errors import RankwiseError

app = typer.Typer(
    add_completion=True,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Measure the network an MPI job runs on, and act on what was measured.",
)
app.command("probe", no_args_is_help=True)(probe_command)
app.command("show", no_args_is_help=True)(show_command)
app.add_typer(sim_app, name="sim")
app.add_typer(pattern_app, name="pattern")
app.add_typer(profile_app, name="profile")
app.add_typer(coll_app, name="coll")
app.command("import", no_args_is_help=True)(import_command)
app.command("map", no_args_is_help=True)(map_command)
app.add_typer(node_app, name="node")
app.command("optimize", no_args_is_help=True, context_settings={"allow_interspersed_args": False})(optimize_command)
app.command("demo")(demo_command)
app.command("bench")(bench_command)
app.command("predict", no_args_is_help=True)(predict_command)
app.command("validate", no_args_is_help=True)(validate_command)
app.command("diff", no_args_is_help=True)(diff_command)
app.command("watch", no_args_is_help=True)(watch_command)
app.add_typer(export_app, name="export")
app.command("info")(info_command)
app.add_typer(emulate_app, name="emulate")


def version_text() -> str:
    """'rankwise 0.1.0 (engine 0.1.0)': the package and the C engine it loads."""
    from rankwise import __version__
    from rankwise._engine.core import version as engine_version

    try:
        engine = engine_version()
    except RankwiseError as exc:  # an unbuilt engine must not hide the package's version
        engine = f"not loaded: {exc}"
    return f"rankwise {__version__} (engine {engine})"


def _show_version(value: bool) -> None:
    if value:
        typer.echo(version_text())
        raise typer.Exit()


@app.callback()
def _root(
    version: Optional[bool] = typer.Option(None, "--version", callback=_show_version, is_eager=True,
                                           help="Print the versions of rankwise and of its engine, and exit."),
):
    """Measure the network an MPI job runs on, and act on what was measured."""


def _finite(ctx, param, value):
    """Every real-valued option of every verb is a finite number (rankwise.util.numbers):
    typer takes nan and inf, which then fail, or print 'nan us', later."""
    from rankwise.util.numbers import check_finite

    if isinstance(value, float):
        try:
            check_finite(value)
        except ValueError:
            raise click.exceptions.BadParameter(f"{value!r} is not a finite number", ctx=ctx, param=param) from None
    return value


def _finite_floats(command) -> None:
    """Give every float option of `command` and its sub-commands the finite-number check."""
    import typing

    for param in command.params:
        descriptor = getattr(param, "type_descriptor", None)
        annotation = getattr(descriptor, "annotation", None)
        if param.callback is None and float in (annotation, *typing.get_args(annotation)):
            param.callback = _finite
    for sub in getattr(command, "commands", {}).values():
        _finite_floats(sub)


def command():
    """The click command of `rankwise`, as main() runs it."""
    cmd = typer.main.get_command(app)
    _finite_floats(cmd)
    return cmd


def _fail(message: str, code: int) -> None:
    # escape(): a message quotes file names and option values as the user typed them.
    err_console.print(f"[bold red]rankwise: error:[/bold red] {escape(message)}", highlight=False, soft_wrap=True)
    sys.exit(code)


def _usage_message(exc: click.exceptions.ClickException) -> str:
    """click's usage error as one line, with where to read more."""
    text = " ".join(exc.format_message().split())
    ctx = getattr(exc, "ctx", None)
    if ctx is not None:
        text += f" (see '{ctx.command_path} --help')"
    return text


class Stopped(RankwiseError):
    """rankwise got SIGINT or SIGTERM; exit 128 + the signal, as a shell reports it."""

    def __init__(self, signum: int) -> None:
        super().__init__("interrupted" if signum == signal.SIGINT else "terminated", exit_code=128 + signum)


def _stopped(signum, frame):
    # Launched jobs run in process groups of their own (launch.py) and no longer
    # get the terminal's signals: unwinding ends them on the way (run_with_progress).
    raise Stopped(signum)


def main() -> None:
    for signum in (signal.SIGINT, signal.SIGTERM):
        if signal.getsignal(signum) is not signal.SIG_IGN:  # nohup and background jobs ignore them
            signal.signal(signum, _stopped)
    try:
        # standalone_mode=False: the errors come back here, to be printed as one line.
        # prog_name: `python -m rankwise` is still rankwise, in its usage lines and in the
        # _RANKWISE_COMPLETE variable that shell completion sets.
        code = command()(prog_name="rankwise", standalone_mode=False)
    except click.exceptions.NoArgsIsHelpError:
        sys.exit(2)  # the help was printed: a verb without its arguments is a usage error
    except click.exceptions.ClickException as exc:
        _fail(_usage_message(exc), exc.exit_code)
    except typer.Abort:
        _fail("interrupted", 130)
    except RankwiseError as exc:
        _fail(str(exc), exc.exit_code)
    sys.exit(code if isinstance(code, int) else 0)
