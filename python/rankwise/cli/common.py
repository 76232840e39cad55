"""What every verb shares: the consoles, and the options that mean the same everywhere."""

from __future__ import annotations

import typer
from rich.console import Console

console = Console()
err_console = Console(stderr=True)

# One name for a hostfile in every verb: the hosts, and their slots, the job may use.
HOSTFILE_OPTION = typer.Option(
    None, "--hostfile", metavar="FILE",
    help="Hostfile (Open MPI, MPICH or one line per rank): the hosts and their slots to use.",
)
