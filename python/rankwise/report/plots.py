"""Latency and bandwidth heatmaps of a model, in one PNG.

Nodes are ordered by the groups the engine finds in the latencies
(``Model.groups``), so racks show as blocks; thin lines mark group
boundaries. Darker is slower in both maps. Missing pairs (no answer within
the timeout) have their own colour, never-probed pairs are light grey, the
diagonal is blank.

Drawing uses matplotlib's Agg canvas directly (a ``Figure`` with a
``FigureCanvasAgg``), not pyplot: nothing global changes in the calling
process, and no display is needed.
"""

from __future__ import annotations

import math
import time
from os import PathLike
from pathlib import Path

import numpy as np

from rankwise.util.errors import RankwiseError
from rankwise.model.model import MEASURED, MISSING, UNPROBED, Model

FIGSIZE = (16.0, 8.0)  # inches
DPI = 125  # -> 2000 x 1000 pixels
MISSING_COLOR = "#19b8c8"  # cyan: outside the magma colour maps
UNPROBED_COLOR = "#d4d4d4"
HIGHLIGHT_COLOR = "#e0102a"
GROUP_LINE_COLOR = "#3a7bd5"
MAX_LABELS = 40  # tick labels per axis beyond which only some nodes are named
LOG_RANGE = 10.0
ANNOTATE_MAX = 16  # up to this many nodes, each cell shows its value  # max / min beyond which a colour scale is logarithmic


def png_target(path: str | PathLike) -> Path:
    """The PNG path checked before any work is done, by the rules of every output
    (rankwise.util.files.prepare_output: no directory, device, FIFO or socket; a link
    followed; its folder made); rankwise's plots go through here, then save_figure."""
    from rankwise.util.files import prepare_output

    return prepare_output(path)


MATRIX_CELLS = 512  # larger jobs are drawn in blocks of consecutive ranks


def plot_matrix(matrix, path: str | PathLike) -> Path:
    """Write the traffic heatmap of a CommMatrix (bytes sender -> receiver,
    log colour scale) to the PNG ``path``; past MATRIX_CELLS ranks, cells sum
    blocks of consecutive ranks. Written atomically; returns the path."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.colors import LogNorm
    from matplotlib.figure import Figure

    path = png_target(path)
    n = matrix.n_ranks
    block = max(1, math.ceil(n / MATRIX_CELLS))
    cells = math.ceil(n / block)
    grid = np.zeros((cells, cells))
    np.add.at(grid, (matrix.src // block, matrix.dst // block), matrix.bytes.astype(float))
    fig = Figure(figsize=(8, 7), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    shown = np.ma.masked_where(grid <= 0, grid)
    norm = LogNorm(vmin=shown.min(), vmax=shown.max()) if shown.count() else None
    image = ax.imshow(shown, cmap=_colormap("magma_r"), norm=norm, interpolation="nearest",
                      extent=(-0.5 * block, n - 0.5 * block, n - 0.5 * block, -0.5 * block))
    ax.set_xlabel("receiver rank")
    ax.set_ylabel("sender rank")
    what = matrix.pattern or matrix.source or "communication matrix"
    per = f", cells of {block} ranks" if block > 1 else ""
    ax.set_title(f"{what}\n{n} ranks, {matrix.nnz} pairs, {matrix.total_bytes / 2**20:.4g} MiB{per}", fontsize=10)
    bar = fig.colorbar(image, ax=ax, shrink=0.85)
    bar.set_label("bytes sent (log scale)")
    save_figure(fig, path)
    return path


def plot_model(model: Model, path: str | PathLike, highlight: list[int] | None = None) -> Path:
    """Write latency and bandwidth heatmaps of ``model`` to the PNG ``path``.

    ``highlight``: node indices to mark (red ticks and names), e.g. the
    nodes a mapping chose. Written atomically; returns the path."""
    path = png_target(path)
    n = model.n_nodes
    if n == 0:
        raise RankwiseError("the model has no nodes: nothing to plot")
    marked = sorted({int(i) for i in (highlight or [])})
    bad = [i for i in marked if not 0 <= i < n]
    if bad:
        raise RankwiseError(f"highlight: node index {bad[0]} is not in the model (0..{n - 1})")

    fig = _draw(model, marked)
    save_figure(fig, path)
    return path


# ------------------------------------------------------------------ drawing


def _draw(model: Model, marked: list[int]):
    from matplotlib import colors
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    n = model.n_nodes
    groups = model.groups()
    order = np.lexsort((np.arange(n), groups))  # by group, then by index
    pos = np.empty(n, dtype=int)
    pos[order] = np.arange(n)
    g_sorted = groups[order]
    starts = [0] + [k for k in range(1, n) if g_sorted[k] != g_sorted[k - 1]]
    bounds = starts + [n]

    state = model.state[np.ix_(order, order)]
    offdiag = ~np.eye(n, dtype=bool)
    measured = (state == MEASURED) & offdiag
    alpha = np.where(measured, model.alpha[np.ix_(order, order)] * 1e6, np.nan)
    bw = np.where(measured, model.bandwidth[np.ix_(order, order)] / 1e9, np.nan)

    # Pairs without a value: missing, never probed (or no finite fit).
    overlay = np.zeros((n, n, 4))
    overlay[(state == UNPROBED) & offdiag] = colors.to_rgba(UNPROBED_COLOR)
    n_missing = int(((state == MISSING) & offdiag).sum())
    n_unprobed = int(((state == UNPROBED) & offdiag).sum())

    fig = Figure(figsize=FIGSIZE, dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    fig.get_layout_engine().set(w_pad=0.12, h_pad=0.08, wspace=0.06)
    axes = fig.subplots(1, 2)

    names = short_names(model.names)
    sorted_names = [names[i] for i in order]
    marked_pos = sorted(int(pos[i]) for i in marked)
    labelled = label_positions(n, starts, marked_pos)
    fontsize = 9 if n <= 16 else 8 if n <= 32 else 7 if len(labelled) <= 30 else 6

    panels = [
        (axes[0], alpha, "magma_r", "Latency: one-way \u03b1", "one-way latency \u03b1 [\u00b5s]"),
        (axes[1], bw, "magma", "Bandwidth", "bandwidth [GB/s]  (1 GB = 10\u2079 bytes)"),
    ]
    for ax, data, cmap_name, title, unit in panels:
        layer = data.copy()
        no_value = measured & ~np.isfinite(layer)  # measured but no finite figure
        ov = overlay.copy()
        ov[no_value] = colors.to_rgba(UNPROBED_COLOR)
        ov[(state == MISSING) & offdiag] = colors.to_rgba(MISSING_COLOR)
        norm, log = _norm(layer)
        cmap = _colormap(cmap_name)
        ax.set_facecolor("white")
        im = ax.imshow(np.ma.masked_invalid(layer), cmap=cmap, norm=norm, interpolation="nearest",
                       origin="upper", aspect="equal")
        ax.imshow(ov, interpolation="nearest", origin="upper", aspect="equal")
        cb = fig.colorbar(im, ax=ax, shrink=0.82, pad=0.015, fraction=0.05)
        cb.set_label(unit + ("  (log scale)" if log else ""), fontsize=9)
        if not np.isfinite(layer).any():
            cb.set_ticks([])
            cb.set_label(unit + "  (no measured values)", fontsize=9)
        cb.ax.tick_params(labelsize=8)
        if log:
            from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

            decades = math.log10(norm.vmax / norm.vmin)
            subs = (1.0, 2.0, 3.0, 5.0, 7.0) if decades < 1.5 else (1.0, 2.0, 5.0) if decades < 4 else (1.0,)
            cb.ax.yaxis.set_major_locator(LogLocator(subs=subs))
            cb.ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            cb.ax.yaxis.set_minor_formatter(NullFormatter())
        if n <= ANNOTATE_MAX:
            _annotate(ax, layer, norm, cmap, fontsize=10 if n <= 8 else 8)

        for b in bounds[1:-1]:
            ax.axhline(b - 0.5, color=GROUP_LINE_COLOR, lw=0.9, alpha=0.9)
            ax.axvline(b - 0.5, color=GROUP_LINE_COLOR, lw=0.9, alpha=0.9)
        ax.set_xlim(-0.5, n - 0.5)
        ax.set_ylim(n - 0.5, -0.5)

        ax.set_title(title, fontsize=12, loc="left", pad=18 if len(starts) > 1 else 6)
        ax.set_xlabel("destination node", fontsize=9)
        ax.set_ylabel("source node", fontsize=9)
        node_ticks(ax, labelled, sorted_names, set(marked_pos), fontsize)
        if len(starts) > 1:
            group_ticks(ax, bounds, g_sorted, n)

    # Title, subtitle and legend.
    src = model.source.strip()
    head = src if src not in ("", "-") else "rankwise model"
    fig.suptitle(f"{head} \u2014 {n} node{'s' if n != 1 else ''}", fontsize=14, fontweight="bold")
    sub = [f"{int(measured.sum())}/{n * (n - 1)} pairs measured"]
    if n_missing:
        sub.append(f"{n_missing} missing")
    if n_unprobed:
        sub.append(f"{n_unprobed} not probed")
    if len(starts) > 1:
        sub.append(f"{len(starts)} groups (g0..g{len(starts) - 1}) found from the measurements, nodes ordered by group")
    else:
        sub.append("one group: no structure in the latencies")
    if np.isfinite(model.created):
        sub.append("created " + time.strftime("%Y-%m-%d %H:%M", time.localtime(model.created)))
    handles = [
        Patch(facecolor=MISSING_COLOR, edgecolor="0.4", label=f"missing: no answer ({n_missing})"),
        Patch(facecolor="white", edgecolor="0.4", label="diagonal: same node"),
    ]
    if len(starts) > 1:
        handles.append(Patch(facecolor="none", edgecolor=GROUP_LINE_COLOR, lw=1.5, label="group boundary"))
    n_no_value = n_unprobed + int((measured & ~(np.isfinite(alpha) & np.isfinite(bw))).sum())
    if n_no_value:
        handles.insert(1, Patch(facecolor=UNPROBED_COLOR, edgecolor="0.4",
                                label=f"not probed / no value ({n_no_value})"))
    if marked:
        handles.append(Patch(facecolor=HIGHLIGHT_COLOR, edgecolor=HIGHLIGHT_COLOR,
                             label=f"highlighted nodes: red ticks ({len(marked)})"))
    fig.legend(handles=handles, loc="outside lower center", ncols=len(handles), fontsize=9, frameon=False,
               title="  \u00b7  ".join(sub) + "      darker = slower", title_fontsize=9)
    return fig


def _annotate(ax, data, norm, cmap, fontsize):
    """Small models: the value in each cell, in a colour readable on it."""
    for (i, j), v in np.ndenumerate(data):
        if not np.isfinite(v):
            continue
        r, g, b, _ = cmap(norm(v))
        light = 0.299 * r + 0.587 * g + 0.114 * b > 0.5
        ax.text(j, i, f"{v:.3g}", ha="center", va="center", fontsize=fontsize,
                color="black" if light else "white")


def _colormap(name: str):
    from matplotlib import colormaps

    from matplotlib.colors import ListedColormap

    # Trim magma's near-white end so the fastest cells differ from the blank diagonal.
    lo, hi = (0.08, 1.0) if name.endswith("_r") else (0.0, 0.92)
    return ListedColormap(colormaps[name](np.linspace(lo, hi, 256))).with_extremes(bad=(0, 0, 0, 0))


def _norm(data: np.ndarray):
    from matplotlib.colors import LogNorm, Normalize

    finite = data[np.isfinite(data) & (data > 0)]
    if finite.size == 0:
        return Normalize(0, 1), False
    lo, hi = float(finite.min()), float(finite.max())
    if hi > LOG_RANGE * lo:
        return LogNorm(lo, hi), True
    if hi - lo < 1e-9 * max(abs(hi), 1e-30):  # a flat map: centre it
        lo, hi = lo * 0.95, hi * 1.05
    return Normalize(lo, hi), False


def label_positions(n: int, starts: list[int], marked: list[int]) -> list[int]:
    """Positions whose node is named: all of them up to MAX_LABELS, else a
    spaced subset preferring highlighted nodes, then group starts, then a
    regular grid."""
    if n <= MAX_LABELS:
        return list(range(n))
    step = n / (MAX_LABELS * 0.8)
    gap = step * 0.7
    chosen: list[int] = []
    grid = [int(round(k * step)) for k in range(int(n / step) + 1) if round(k * step) < n]
    for p in list(marked) + list(starts) + grid:
        if all(abs(p - q) >= gap for q in chosen):
            chosen.append(p)
    return sorted(chosen)


def node_ticks(ax, labelled, names, marked, fontsize):
    ax.set_xticks(labelled, [names[p] for p in labelled], rotation=90, fontsize=fontsize)
    ax.set_yticks(labelled, [names[p] for p in labelled], fontsize=fontsize)
    ax.tick_params(which="major", length=3, width=0.6, color="0.3")
    for axis_labels in (ax.get_xticklabels(), ax.get_yticklabels()):
        for p, lab in zip(labelled, axis_labels):
            if p in marked:
                lab.set_color(HIGHLIGHT_COLOR)
                lab.set_fontweight("bold")
    if marked:
        ticks = sorted(marked)
        ax.xaxis.remove_overlapping_locs = False  # keep red marks under labelled ticks too
        ax.yaxis.remove_overlapping_locs = False
        ax.set_xticks(ticks, minor=True)
        ax.set_yticks(ticks, minor=True)
        ax.tick_params(which="minor", length=7, width=2.5, color=HIGHLIGHT_COLOR)
        ax.tick_params(which="major", pad=6)  # labels clear of the red marks
        ax.xaxis.set_tick_params(which="minor", labelbottom=False)
        ax.yaxis.set_tick_params(which="minor", labelleft=False)
    else:
        ax.set_xticks([], minor=True)
        ax.set_yticks([], minor=True)


def group_ticks(ax, bounds, g_sorted, n):
    """Group names on the top axis, centred on each group's block."""
    centres, labels = [], []
    min_width = n / 45  # skip names that would not fit over their block
    for a, b in zip(bounds[:-1], bounds[1:]):
        if b - a >= min_width or len(bounds) <= 12:
            centres.append((a + b - 1) / 2)
            labels.append(f"g{int(g_sorted[a])}")
    top = ax.secondary_xaxis("top")
    top.set_xticks(centres, labels, fontsize=8 if len(centres) <= 16 else 6, color=GROUP_LINE_COLOR)
    top.tick_params(length=0, pad=2)
    top.set_xticks([], minor=True)


def short_names(names: list[str], width: int = 18) -> list[str]:
    """Tick labels: drop a domain suffix common to every name, shorten long
    names in the middle (their distinguishing end is kept)."""
    out = list(names)
    if len(out) > 1 and all("." in s for s in out):
        suffixes = {s[s.index("."):] for s in out}
        if len(suffixes) == 1:
            out = [s[: s.index(".")] for s in out]
    return [s if len(s) <= width else s[: width // 2 - 1] + "\u2026" + s[-(width // 2):] for s in out]


# ------------------------------------------------------------------ writing


def save_figure(fig, path: str | PathLike) -> Path:
    """Write the figure as every output is written (rankwise.util.files): checked, then a
    complete NAME.tmp.PID renamed over the file; a failed plot never leaves a
    half-written PNG, and a killed one leaves a temporary the next write removes."""
    from rankwise.util.files import prepare_output, write_through_temporary

    path = prepare_output(path)
    write_through_temporary(path, lambda fh: fig.savefig(fh, format="png", dpi=DPI))
    return path


__all__ = ["plot_model", "FIGSIZE", "DPI"]


def plot_speedup(comparisons, path: str | PathLike, title: str = "rankwise vs the default placement") -> Path:
    """Speed-up (default time / rankwise time) by message size, one line per
    comparison (rankwise.workflows.optimize.Comparison). Written atomically."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    path = png_target(path)
    fig = Figure(figsize=(7, 4.5), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    for c in comparisons:
        ax.plot(c.sizes, c.speedup, marker="o", label=c.label)
    ax.axhline(1.0, color="grey", lw=0.8, ls="--")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("speed-up")
    ax.set_title(title)
    ax.legend(fontsize="small")
    save_figure(fig, path)
    return path


def plot_rows(title: str, keys, before, after, unit: str, path: str | PathLike,
              labels: tuple[str, str] = ("default", "rankwise")) -> Path:
    """Paired bars (before, after) per row of a before/after table, log
    scale, speed-up written above each pair. Written atomically."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    path = png_target(path)
    before, after = np.asarray(before, float), np.asarray(after, float)
    x = np.arange(len(keys))
    fig = Figure(figsize=(max(6.0, 0.9 * len(keys) + 2), 4.5), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.bar(x - 0.2, before, 0.4, label=labels[0], color="#999999")
    ax.bar(x + 0.2, after, 0.4, label=labels[1], color="#1f77b4")
    for i in range(len(keys)):
        if after[i] > 0 and np.isfinite(before[i] / after[i]):
            ax.annotate(f"x{before[i] / after[i]:.2f}", (x[i], max(before[i], after[i])), ha="center",
                        va="bottom", fontsize="small")
    ax.set_yscale("log")
    ax.set_xticks(x, keys, rotation=30, ha="right", fontsize="small")
    ax.set_ylabel(f"time ({unit})")
    ax.set_title(title, fontsize="medium")
    ax.legend(fontsize="small")
    save_figure(fig, path)
    return path
