"""Before / after tables of a placement: what the engine predicts for the
default block placement and for rankwise's (rankwise map, optimize), and
what the runs measured (rankwise optimize, demo)."""

from __future__ import annotations

import numpy as np
from rich.console import Console
from rich.markup import escape
from rich.table import Table


def format_time(t: float) -> str:
    if t >= 1:
        return f"{t:.3f} s"
    if t >= 1e-3:
        return f"{t * 1e3:.3f} ms"
    return f"{t * 1e6:.2f} us"


def print_prediction(traffic, network, result, objective: str, console: Console) -> None:
    """The predictions for the default block placement and for the result:
    the predictor's time (what decided, when result.objective is
    'predicted', rankwise.map.decision), the search's sum objectives (every
    message alone, in sequence; the slowest rank), and the share of bytes
    that crosses nodes."""
    from rankwise.map.mapping import cut, placement_cost

    block = np.concatenate([np.full(s, i, np.int32) for i, s in enumerate(network.slots)])[: traffic.n_ranks]
    table = Table(title=f"{traffic.n_ranks} ranks on {result.n_selected} of {network.n_nodes} nodes "
                        f"({result.algorithm}, {result.seconds:.2f} s)", title_justify="left")
    table.add_column("predicted")
    table.add_column("default (block)", justify="right")
    table.add_column("rankwise", justify="right")
    table.add_column("gain", justify="right")
    if result.objective == "predicted":
        table.add_row("time (predictor, decides)", format_time(result.block_cost), format_time(result.cost),
                      f"x{result.gain:.2f}")
    rows = [("hop-bytes", "time")] if objective == "hop-bytes" else [("total time (sum)", "time"),
                                                                     ("slowest rank (sum)", "bottleneck")]
    for label, obj in rows:
        before = placement_cost(traffic, network, block, obj)
        after = placement_cost(traffic, network, result.node_of, obj)
        show = (lambda v: f"{v:.4g}") if obj == "time" and objective == "hop-bytes" else format_time
        table.add_row(label, show(before), show(after), f"x{before / after:.2f}" if after > 0 else "-")
    cb, tb = cut(traffic, block)
    ca, _ = cut(traffic, result.node_of)
    if tb > 0:
        table.add_row("bytes across nodes", f"{100 * cb / tb:.1f} %", f"{100 * ca / tb:.1f} %",
                      f"x{cb / ca:.2f}" if ca > 0 else "-")
    console.print(table)


def print_comparison(cmp, console: Console, title: str | None = None, errors: bool = False) -> None:
    """The before / after table; with the predictor's speed-up per row when
    known, and (errors) how far it is from the measured one."""
    from rankwise.traffic.patterns import format_size

    table = Table(title=escape(title or cmp.label), title_justify="left")  # the user's command line
    whole = cmp.unit == "s"
    predicted = getattr(cmp, "predicted", None)
    table.add_column("run" if whole else "size", justify="right")
    table.add_column(f"default ({cmp.unit})", justify="right")
    table.add_column(f"rankwise ({cmp.unit})", justify="right")
    table.add_column("speed-up", justify="right")
    if predicted is not None:
        table.add_column("predicted", justify="right")
        if errors:
            table.add_column("pred / meas", justify="right")
    for i, (size, before, after, speedup) in enumerate(cmp.rows()):
        colour = "green" if speedup >= 1.05 else "red" if speedup < 0.98 else ""
        shown = f"[{colour}]x{speedup:.2f}[/]" if colour else f"x{speedup:.2f}"
        cells = ["whole" if whole else format_size(size), f"{before:.6g}", f"{after:.6g}", shown]
        if predicted is not None:
            cells.append(f"x{predicted[i]:.2f}")
            if errors:
                e = predicted[i] / speedup - 1 if speedup > 0 else float("nan")
                cells.append(f"{e:+.1%}" if e == e else "-")
        table.add_row(*cells)
    console.print(table)
    for line in cmp.failures:
        console.print(f"[red]failed:[/] {escape(line)}", highlight=False)


PREDICTION_TOLERANCE = 0.20  # issue 21: the predicted speed-up within 20 % of the measured one


def print_prediction_check(cmp, console: Console, source: str, whole: bool = False) -> None:
    """One line: in how many rows the predicted speed-up (from the model
    `source`) is within PREDICTION_TOLERANCE of the measured one, and the worst."""
    from rankwise.traffic.patterns import format_size

    err = cmp.prediction_errors()
    known = np.flatnonzero(np.isfinite(err))
    if known.size == 0:
        return
    worst = known[np.argmax(np.abs(err[known]))]
    close = int(np.sum(np.abs(err[known]) <= PREDICTION_TOLERANCE))
    where = "whole run" if cmp.unit == "s" else format_size(int(cmp.sizes[worst]))
    text = (f"predicted (from {source}) vs measured speed-up: within {PREDICTION_TOLERANCE:.0%} in {close}/"
            f"{known.size} rows, median |error| {np.median(np.abs(err[known])):.1%}, worst {err[worst]:+.1%} "
            f"({where})")
    if whole:
        text += "; every row is predicted from the profiled traffic as a whole (no per-size pattern)"
    console.print(escape(text), highlight=False, soft_wrap=True)
