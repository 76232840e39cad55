"""The heatmap of what changed between two models (`rankwise diff --plot`).

One cell per ordered pair, ordered by group as `rankwise show` orders
them: log2 of the round trip after / before, red slower, blue faster,
white where the change stays within the measured noise (docs/concepts/live.md).
Pairs not measured in both models are grey."""

from __future__ import annotations

from os import PathLike
from pathlib import Path

import numpy as np

from rankwise.model.diff import ModelDiff
from rankwise.report.plots import (GROUP_LINE_COLOR, UNPROBED_COLOR, group_ticks, label_positions, node_ticks,
                            png_target, save_figure, short_names)
from rankwise.util.errors import RankwiseError


def plot_diff(diff: ModelDiff, path: str | PathLike, title: str = "") -> Path:
    """Write the change heatmap of ``diff`` to the PNG ``path`` (atomically)."""
    from matplotlib import colors
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    path = png_target(path)
    n = len(diff.names)
    if n == 0:
        raise RankwiseError("the two models have no node in common: nothing to plot")
    g = diff.group_of
    order = np.lexsort((np.arange(n), g))
    g_sorted = g[order]
    starts = [0] + [k for k in range(1, n) if g_sorted[k] != g_sorted[k - 1]]
    bounds = starts + [n]
    sub = np.ix_(order, order)
    compared, changed = diff.compared[sub], diff.changed[sub]
    with np.errstate(divide="ignore", invalid="ignore"):
        layer = np.where(changed, np.log2(diff.ratio[sub]), np.where(compared, 0.0, np.nan))
    limit = max(1.0, float(np.nanmax(np.abs(layer))) if np.isfinite(layer).any() else 1.0)

    fig = Figure(figsize=(9, 8), dpi=110, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.set_facecolor(UNPROBED_COLOR)  # not compared: grey
    offdiag = ~np.eye(n, dtype=bool)
    layer[~offdiag] = np.nan
    image = ax.imshow(np.ma.masked_invalid(layer), cmap="RdBu_r", norm=colors.Normalize(-limit, limit),
                      interpolation="nearest", origin="upper", aspect="equal")
    diag = np.zeros((n, n, 4))
    diag[~offdiag] = colors.to_rgba("white")
    ax.imshow(diag, interpolation="nearest", origin="upper", aspect="equal")
    bar = fig.colorbar(image, ax=ax, shrink=0.82)
    bar.set_label("log2(round trip after / before): red slower, blue faster; 0 within the noise")
    for b in bounds[1:-1]:
        ax.axhline(b - 0.5, color=GROUP_LINE_COLOR, lw=0.9)
        ax.axvline(b - 0.5, color=GROUP_LINE_COLOR, lw=0.9)
    names = short_names(diff.names)
    sorted_names = [names[i] for i in order]
    marked = sorted(int(np.flatnonzero(order == diff.names.index(c.name))[0]) for c in diff.nodes)
    labelled = label_positions(n, starts, marked)
    node_ticks(ax, labelled, sorted_names, set(marked), 9 if n <= 16 else 7)
    if len(starts) > 1:
        group_ticks(ax, bounds, g_sorted, n)
    ax.set_xlabel("destination node")
    ax.set_ylabel("source node")
    what = [f"{int(changed.sum())} of {int(compared.sum())} compared pairs changed"]
    if diff.links:
        what.append("links: " + ", ".join(link.name for link in diff.links))
    if diff.nodes:
        what.append("nodes (red): " + ", ".join(sorted({c.name for c in diff.nodes})))
    fig.suptitle((title or "What changed") + "\n" + "; ".join(what), fontsize=11)
    save_figure(fig, path)
    return path
