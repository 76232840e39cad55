"""`rankwise diff`: what changed between two models of the same network."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape

from rankwise.cli.common import console
from rankwise.util.errors import RankwiseError, UsageError


def diff_command(
    before: Path = typer.Argument(..., metavar="BEFORE", help="The earlier model (.rwm), or SERIES/SEQ of a watch folder."),
    after: Path = typer.Argument(..., metavar="AFTER", help="The later model (.rwm), SERIES/SEQ, or SERIES (its latest)."),
    plot: Optional[Path] = typer.Option(None, "--plot", help="Also draw the heatmap of the change into this PNG."),
    threshold: float = typer.Option(0.10, "--threshold", help="Smallest relative change of a median that counts (0.10 = 10 %)."),
    top: int = typer.Option(10, "--top", help="How many of the most changed pairs to list."),
    as_json: bool = typer.Option(False, "--json", help="Print the change as one JSON object instead (docs/reference/formats.md)."),
):
    """What changed between two models: pairs, nodes, shared links and groups, beyond the measured noise."""
    from rankwise.report.diff_plot import plot_diff
    from rankwise.model.model import Model
    from rankwise.model.diff import diff_models
    from rankwise.report.diff import render
    from rankwise.measure.watch import series_model

    if not threshold >= 0:
        raise UsageError(f"--threshold must be >= 0, got {threshold:g}")
    if top < 0:
        raise UsageError(f"--top must be >= 0, got {top}")
    if plot:
        from rankwise.report.plots import png_target

        png_target(plot)  # checked before any model is read
    before, after = series_model(before), series_model(after)
    for path in (before, after):
        if path.is_dir():
            raise RankwiseError(f"{path}: is a directory; give a model (.rwm)")
    a, b = Model.load(before), Model.load(after)
    diff = diff_models(a, b, threshold=threshold)
    if not diff.names:
        raise RankwiseError(f"{before} and {after} have no node in common: they are not models of one network")
    if as_json:
        from dataclasses import fields

        from rankwise.report.jsonable import dumps

        # every changed pair, node, link and group; the n x n arrays stay out (the CSVs of show)
        lists = {f.name: getattr(diff, f.name) for f in fields(diff)
                 if f.name not in ("compared", "ratio", "changed", "group_of")}
        print(dumps("model-diff", {"before": str(before), "after": str(after), **lists}))
    else:
        render(diff, console, top=top)
    if plot:
        plot_diff(diff, plot, title=f"{before.name} -> {after.name}")
        if not as_json:
            console.print(f"heatmap of the change written to [bold]{escape(str(plot))}[/bold]", highlight=False)
