"""What every verb shares: the consoles, and the options that mean the same everywhere."""

from __future__ import annotations

import typer
from rich.console import Console

# emoji=False: ':x:' in a file name (a:x:b.rwm) is text, not an emoji. Markup stays on for
# rankwise's own styles; text the user typed is escaped (rich.markup.escape) where it is printed.
console = Console(emoji=False)
err_console = Console(stderr=True, emoji=False)

# One name for a hostfile in every verb: the hosts, and their slots, the job may use.
HOSTFILE_OPTION = typer.Option(
    None, "--hostfile", metavar="FILE",
    help="Hostfile (Open MPI, MPICH or one line per rank): the hosts and their slots to use.",
)
