"""`rankwise import`: a communication matrix from what MPI tools write
(Intel MPI statistics, Open MPI monitoring, lists, dense or Matrix Market
matrices; docs/reference/formats.md, "Importers"), saved as .rwc or .npz.

Options are taken as text and checked by the importers, so that a bad
value is one line (`rankwise: error: ...`), as everywhere in rankwise."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer
from rich.markup import escape

from rankwise.report.matrix import summary_line

from rankwise.cli.common import console

FORMAT_HELP = "Input format: auto (default: told by content, then name), " \
              "intel, openmpi, list, dense, mtx, npz, rwc."


def import_command(
    sources: List[str] = typer.Argument(..., metavar="FILE_OR_DIR...",
                                        help="A file, a directory of Open MPI NAME.RANK.prof files, a glob, "
                                             "or several .prof files."),
    output: Path = typer.Option(..., "--output", "-o", help="Matrix file to write: .rwc (text) or .npz."),
    format: str = typer.Option("auto", "--format", "-f", metavar="F", help=FORMAT_HELP),
    ranks: Optional[str] = typer.Option(None, "--ranks", metavar="N",
                                        help="Job size: ranks outside [0, N) are errors; must agree with "
                                             "a file that states it."),
    kinds: Optional[str] = typer.Option(None, "--kinds", metavar="EISRC",
                                        help="Open MPI monitoring lines to import (default EISR: "
                                             "point-to-point, internal, one-sided)."),
):
    """Import an application's traffic: Intel MPI stats, Open MPI monitoring, lists, matrices."""
    from rankwise.util.files import prepare_output
    from rankwise.traffic.importers import load_comm
    from rankwise.traffic.matrix import MATRIX_SUFFIXES

    prepare_output(output, MATRIX_SUFFIXES)  # before reading: a wrong name must not cost an import
    matrix = load_comm(sources if len(sources) > 1 else sources[0], format, n_ranks=ranks, kinds=kinds)
    matrix.save(output)
    source = sources[0] if len(sources) == 1 else f"{len(sources)} files ({sources[0]} ...)"
    console.print(escape(summary_line(matrix, source, output)), highlight=False, soft_wrap=True)
