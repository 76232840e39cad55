"""`rankwise show`: summarise a model or a communication matrix, with heatmaps."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape

from rankwise.cli.common import console
from rankwise.errors import RankwiseError
from rankwise.inputs import check_input


def _is_matrix(path: Path) -> bool:
    if path.suffix in (".npz", ".rwc"):
        return True
    try:
        with open(path, "rb") as f:
            return f.read(15) == b"rankwise-matrix"
    except OSError:
        return False  # the model reader says why


def show_command(
    model_path: Path = typer.Argument(..., metavar="FILE", help="A model (.rwm) or a communication matrix (.rwc, .npz)."),
    plot: Optional[Path] = typer.Option(None, "--plot", help="Also draw heatmaps into this PNG (latency and bandwidth, or traffic)."),
    top: int = typer.Option(10, "--top", help="How many of the slowest pairs to list."),
):
    """Summarise a model (groups of close nodes, slowest and missing pairs) or a traffic matrix."""
    from rankwise.model import Model
    from rankwise.plots import plot_matrix, plot_model, png_target
    from rankwise.report.model import render, summarize

    if model_path.is_dir():
        raise RankwiseError(f"{model_path}: is a directory; give a model (.rwm) or a matrix (.rwc, .npz)")
    check_input(model_path)  # before peeking at its first bytes: a FIFO would block
    if plot:
        png_target(plot)  # a PNG that cannot be written is refused before the summary
    if _is_matrix(model_path):
        from rankwise.report.matrix import show_summary
        from rankwise.matrix import CommMatrix

        matrix = CommMatrix.load(model_path)
        show_summary(matrix, model_path, console)
        if plot:
            plot_matrix(matrix, plot)
            console.print(f"traffic heatmap written to [bold]{escape(str(plot))}[/bold]", highlight=False)
        return
    model = Model.load(model_path)
    render(summarize(model, top=top), console)
    if plot:
        plot_model(model, plot)
        console.print(f"heatmaps written to [bold]{escape(str(plot))}[/bold]", highlight=False)
