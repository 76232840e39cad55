"""`rankwise show`: summarise a model or a communication matrix, with heatmaps."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape

from rankwise.cli.common import console
from rankwise.util.errors import RankwiseError, UsageError
from rankwise.util.inputs import check_input


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
    as_json: bool = typer.Option(False, "--json", help="Print the summary as one JSON object instead (docs/reference/formats.md)."),
    csv_dir: Optional[Path] = typer.Option(None, "--csv", help="A model's matrices into this folder: alpha.csv, bandwidth.csv, jitter.csv."),
):
    """Summarise a model (groups of close nodes, slowest and missing pairs) or a traffic matrix."""
    from rankwise.model.model import Model
    from rankwise.report.plots import plot_matrix, plot_model, png_target
    from rankwise.report.jsonable import dumps
    from rankwise.report.model import render, summarize

    if model_path.is_dir():
        raise RankwiseError(f"{model_path}: is a directory; give a model (.rwm) or a matrix (.rwc, .npz)")
    check_input(model_path)  # before peeking at its first bytes: a FIFO would block
    if plot:
        png_target(plot)  # a PNG that cannot be written is refused before the summary
    if _is_matrix(model_path):
        from rankwise.report.matrix import matrix_summary, show_summary
        from rankwise.traffic.matrix import CommMatrix

        if csv_dir is not None:
            raise UsageError("--csv writes a model's matrices; a traffic matrix is already one (rankwise export)")
        matrix = CommMatrix.load(model_path)
        if as_json:
            print(dumps("matrix-summary", {"file": str(model_path), **matrix_summary(matrix)}))
        else:
            show_summary(matrix, model_path, console)
        if plot:
            plot_matrix(matrix, plot)
            if not as_json:
                console.print(f"traffic heatmap written to [bold]{escape(str(plot))}[/bold]", highlight=False)
        return
    model = Model.load(model_path)
    targets = _csv_targets(csv_dir) if csv_dir is not None else None
    summary = summarize(model, top=top)
    if as_json:
        print(dumps("model-summary", {"file": str(model_path), "summary": summary}))
    else:
        render(summary, console)
    if targets:
        _write_matrices(model, targets)
        if not as_json:
            console.print(f"alpha, bandwidth and jitter matrices written to [bold]{escape(str(csv_dir))}[/bold]",
                          highlight=False)
    if plot:
        plot_model(model, plot)
        if not as_json:
            console.print(f"heatmaps written to [bold]{escape(str(plot))}[/bold]", highlight=False)


CSV_MATRICES = ("alpha", "bandwidth", "jitter")


def _csv_targets(folder: Path) -> dict[str, Path]:
    """The three files, checked as every -o is before anything is measured or written."""
    from rankwise.util.files import prepare_output

    if folder.exists() and not folder.is_dir():
        raise RankwiseError(f"{folder}: not a folder (--csv writes alpha.csv, bandwidth.csv, jitter.csv into one)")
    return {name: prepare_output(folder / f"{name}.csv") for name in CSV_MATRICES}


def _write_matrices(model, targets: dict[str, Path]) -> None:
    """Per ordered pair (row = sender): alpha in seconds, bandwidth in bytes/s,
    jitter ((max - min) / mean) at the largest size; empty where not measured."""
    import csv
    import io

    import numpy as np

    from rankwise.util.files import write_atomic
    from rankwise.model.model import MEASURED

    measured = model.state == MEASURED
    values = {"alpha": model.alpha, "bandwidth": model.bandwidth, "jitter": model.jitter[:, :, -1]}
    for name, path in targets.items():
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["node", *model.names])
        for i, row in enumerate(values[name]):
            w.writerow([model.names[i], *(f"{v:.6g}" if measured[i, j] and np.isfinite(v) else ""
                                          for j, v in enumerate(row))])
        try:
            write_atomic(path, buf.getvalue())
        except OSError as exc:
            raise RankwiseError(f"{path}: cannot write: {exc.strerror or exc}") from None
