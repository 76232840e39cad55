"""What `rankwise coll predict` and `rankwise coll tune` print (and draw)."""

from __future__ import annotations

from os import PathLike
from typing import Sequence

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from rankwise.coll.selection import Candidate, Decision
from rankwise.traffic.patterns import format_size
from rankwise.report.placement import format_time


def _us(t: float) -> str:
    return f"{t * 1e6:.2f}"


def candidate_label(c: Candidate) -> str:
    """'passthrough (knomial)', 'eager', 'chain /64K' (a pipeline segment)."""
    if c.source == "passthrough":
        name = f"MPI: {c.algorithm}"
    else:
        name = c.source
    return name + (f" /{format_size(c.segment)}" if c.segment else "")


def _gain(ref: float, t: float) -> str:
    if not ref > 0:
        return "-"
    g = 1.0 - t / ref
    return f"{g * 100:+.1f}%"


def print_decisions(decisions: Sequence[Decision], title: str, console: Console) -> None:
    """Per size, every candidate's predicted time: the MPI's own algorithm,
    the binomial tree and the model's trees, each with its gain over the
    MPI's; '*' marks what runs (the MPI's own unless a tree is --min-gain
    faster). Then one line per size range: what runs and its gain."""
    console.print(title, highlight=False)
    table = Table(box=None, pad_edge=False, header_style="bold underline", collapse_padding=True)
    for name, just in (("size", "right"), ("algorithm", "left"), ("predicted", "right"), ("vs MPI", "right"),
                       ("runs", "left")):
        table.add_column(name, justify=just, no_wrap=True)
    for d in decisions:
        p = d.passthrough
        for i, c in enumerate(d.candidates):
            table.add_row(format_size(d.nbytes) if i == 0 else "", escape(candidate_label(c)), format_time(c.time),
                          "" if i == 0 else _gain(p.time, c.time), "*" if i == d.chosen else "",
                          end_section=i == len(d.candidates) - 1)
    console.print(table)
    runs = []
    for d in decisions:
        what = "MPI" if d.chosen == 0 else candidate_label(d.choice)
        if runs and runs[-1][2] == what:
            runs[-1][1] = d.nbytes
            runs[-1][3].append(d)
        else:
            runs.append([d.nbytes, d.nbytes, what, [d]])
    parts = []
    for lo, hi, what, ds in runs:
        span = format_size(lo) + (f"-{format_size(hi)}" if hi != lo else "")
        g_mpi = sum(d.gain for d in ds) / len(ds)
        g_bin = sum(1 - d.choice.time / d.binomial.time for d in ds if d.binomial.time > 0) / len(ds)
        base = candidate_label(ds[0].binomial)  # the first candidate: binomial, or pairwise (alltoall)
        parts.append(f"{span} {what} ({g_mpi * 100:+.1f}% vs MPI, {g_bin * 100:+.1f}% vs {base})")
    console.print("runs: " + escape("; ".join(parts)), highlight=False, soft_wrap=True)
    console.print("Predicted times (docs/concepts/collectives.md). MPI: Open MPI's tuned choice as SMPI's "
                  "ompi selector makes it; rankwise runs a tree only when predicted at least --min-gain "
                  "faster.", highlight=False)


def print_tune_summary(rules, title: str, console: Console) -> None:
    """One row per rule: the size class, what runs, Open MPI's choice, both
    predicted times (us) and the gains."""
    table = Table(title=title, box=box.SIMPLE_HEAVY, title_justify="left")
    for name, just in (("op", "left"), ("root", "right"), ("bytes", "left"), ("runs", "left"), ("us", "right"),
                       ("MPI", "left"), ("us", "right"), ("vs MPI", "right"), ("vs bin.", "right")):
        table.add_column(name, justify=just, no_wrap=True)
    for r in rules:
        d = r.decision
        hi = "" if r.hi >= (1 << 62) else format_size(r.hi + 1)
        table.add_row(r.op, "*" if r.root < 0 else str(r.root), f"{format_size(r.lo) if r.lo else '0'}-{hi}",
                      "MPI" if d.chosen == 0 else escape(candidate_label(d.choice)), _us(d.choice.time),
                      escape(d.passthrough.algorithm), _us(d.passthrough.time),
                      _gain(d.passthrough.time, d.choice.time), _gain(d.binomial.time, d.choice.time))
    console.print(table)
    console.print("Predicted times in us; bytes: from the class's size up to the next.", highlight=False)


def print_ompi_summary(rows, title: str, console: Console) -> None:
    """One row per size class: Open MPI's algorithm the rules file names
    (or its fixed decision), its predicted time (us) and the gain over the
    fixed decision's."""
    table = Table(title=title, box=box.SIMPLE_HEAVY, title_justify="left")
    for name, just in (("op", "left"), ("bytes", "left"), ("runs", "left"), ("us", "right"),
                       ("fixed decision", "left"), ("vs fixed", "right")):
        table.add_column(name, justify=just, no_wrap=name not in ("runs", "fixed decision"), overflow="fold")
    for r in rows:
        c = r.choice
        hi = "" if r.hi >= (1 << 62) else format_size(r.hi + 1)
        table.add_row(r.op, f"{format_size(r.lo) if r.lo else '0'}-{hi}", "fixed" if c.chosen == 0 else c.choice.name,
                      _us(c.choice.time), c.fixed.name, _gain(c.fixed.time, c.choice.time))
    console.print(table)
    console.print("Predicted times in us; bytes per rank as rankwise counts them, from the class's size up to the "
                  "next; rooted operations from rank 0.", highlight=False)


def print_ompi_verification(checked, console: Console) -> None:
    """Per row the rules file named an algorithm for: what the runs measured
    without and with it, and whether it stays."""
    if not checked:
        console.print("the predictor named none of Open MPI's algorithms: nothing to verify")
        return
    table = Table(title="verified: Open MPI's fixed decision against the file, us (min-max over runs)",
                  box=box.SIMPLE_HEAVY, title_justify="left")
    for name, just in (("op", "left"), ("bytes", "right"), ("runs", "left"), ("fixed decision", "right"),
                       ("with the file", "right"), ("gain", "right"), ("predicted", "right"), ("kept", "left")):
        table.add_column(name, justify=just, no_wrap=True)
    for v in checked:
        c = v.row.choice
        table.add_row(v.row.op, format_size(c.nbytes), c.choice.name,
                      f"{min(v.fixed_us):.2f}-{max(v.fixed_us):.2f}", f"{min(v.rules_us):.2f}-{max(v.rules_us):.2f}",
                      f"{v.gain * 100:+.1f} %", f"{c.gain * 100:+.1f} %", "yes" if v.kept else "no: fixed decision")
    console.print(table)


def plot_decisions(decisions: Sequence[Decision], path: str | PathLike, title: str):
    """Predicted time per size of every candidate (log-log), choices marked."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from rankwise.report.plots import png_target, save_figure

    path = png_target(path)
    fig = Figure(figsize=(7, 4.5))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(111)
    series: dict[str, list[tuple[int, float]]] = {}
    for d in decisions:
        seen = {}
        for c in d.candidates:
            key = "MPI's own" if c.source == "passthrough" else c.source
            if key not in seen or c.time < seen[key]:
                seen[key] = c.time
        for key, t in seen.items():
            series.setdefault(key, []).append((d.nbytes, t))
    for key, pts in series.items():
        xs, ys = zip(*pts)
        ax.plot(xs, [y * 1e6 for y in ys], marker="o", markersize=3, label=key,
                linewidth=2.2 if key == "MPI's own" else 1.2)
    ax.scatter([d.nbytes for d in decisions], [d.choice.time * 1e6 for d in decisions], s=60, facecolors="none",
               edgecolors="black", label="choice", zorder=5)
    # log-log, unless a value cannot be (one rank: every time 0; a size of 0 bytes)
    if all(d.nbytes > 0 for d in decisions):
        ax.set_xscale("log", base=2)
    if all(t > 0 for pts in series.values() for _, t in pts) and all(d.choice.time > 0 for d in decisions):
        ax.set_yscale("log")
    ax.set_xlabel("bytes")
    ax.set_ylabel("predicted time (us)")
    ax.set_title(title)
    ax.legend(fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    save_figure(fig, path)
    return path
