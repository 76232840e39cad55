"""Tables of the predictor (rankwise.predict.predictor): a collective's time per size
and algorithm beside the closed-form formulas (rankwise predict), an
application's traffic per placement (rankwise predict --matrix), and
predicted against simulated times (rankwise validate)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from rankwise.traffic.patterns import format_size
from rankwise.report.placement import format_time


@dataclass
class AlgorithmRow:
    """One size of one algorithm: seconds (None where it does not apply)."""

    size: int
    algorithm: str
    predicted: float | None
    hockney: float | None
    formulas: dict[str, float] = field(default_factory=dict)  # formula name -> seconds
    note: str = ""  # why there is no prediction
    preferred: bool = False


def _time(t: float | None) -> str:
    """Four significant digits, at most 8 characters: the tables stay within 80 columns."""
    if t is None:
        return "-"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if t >= scale or unit == "us":
            return f"{t / scale:.4g} {unit}"
    return "-"


def preferred_ranges(rows: Sequence[AlgorithmRow]) -> list[tuple[int, int, str]]:
    """(first size, last size, algorithm) runs of consecutive sizes with the same preferred algorithm."""
    runs: list[tuple[int, int, str]] = []
    for r in rows:
        if not r.preferred:
            continue
        if runs and runs[-1][2] == r.algorithm:
            runs[-1] = (runs[-1][0], r.size, r.algorithm)
        else:
            runs.append((r.size, r.size, r.algorithm))
    return runs


def print_collective(rows: Sequence[AlgorithmRow], title: str, console: Console) -> None:
    """Predicted time per size for every algorithm, Hockney's time of the
    same schedule and the closed forms that apply; '*' marks the fastest."""
    formulas = sorted({name for r in rows for name in r.formulas})
    table = Table(title=escape(title), title_justify="left", box=None, pad_edge=False, header_style="bold underline",
                  collapse_padding=True)
    table.add_column("size", justify="right", no_wrap=True)
    table.add_column("algorithm", no_wrap=True)
    for name in ["predicted", "Hockney", *formulas]:
        table.add_column(escape(name), justify="right", no_wrap=True)
    table.add_column("best", no_wrap=True)
    last = None
    for r in rows:
        first = r.size != last
        last = r.size
        cells = [format_size(r.size) if first else "", escape(r.algorithm),
                 _time(r.predicted) if r.predicted is not None else "n/a", _time(r.hockney)]
        cells += [_time(r.formulas.get(name)) for name in formulas]
        cells.append("*" if r.preferred else "")
        table.add_row(*cells, end_section=False)
    console.print(table)
    for alg, note in dict.fromkeys((r.algorithm, r.note) for r in rows if r.predicted is None):
        console.print(f"n/a: {escape(alg)}: {escape(note)}", highlight=False, soft_wrap=True)
    runs = preferred_ranges(rows)
    if runs:
        text = "; ".join(f"{format_size(a)}" + (f"-{format_size(b)}" if b != a else "") + f" {alg}"
                         for a, b, alg in runs)
        console.print(f"preferred: {escape(text)}", highlight=False)


def print_traffic(rows: Sequence[tuple[str, float, float]], title: str, console: Console) -> None:
    """One phase of an application's traffic per placement: (label, predicted s, Hockney s)."""
    table = Table(title=escape(title), title_justify="left", box=None, pad_edge=False, header_style="bold underline")
    table.add_column("placement")
    table.add_column("predicted", justify="right")
    table.add_column("Hockney", justify="right")
    table.add_column("vs first", justify="right")
    base = rows[0][1] if rows else 0.0
    for label, pred, hock in rows:
        table.add_row(escape(label), _time(pred), _time(hock),
                      f"x{base / pred:.2f}" if pred > 0 else "-")
    console.print(table)


def print_validation(rows, title: str, console: Console) -> None:
    """Predicted against simulated per algorithm and size (rankwise.predict.validate.Row),
    relative errors of the predictor and of Hockney, and their medians."""
    table = Table(title=escape(title), title_justify="left", box=None, pad_edge=False, header_style="bold underline")
    for name in ("algorithm", "size", "simulated", "predicted", "error", "Hockney", "Hockney error"):
        table.add_column(name, justify="left" if name == "algorithm" else "right")
    for r in rows:
        table.add_row(escape(r.algorithm), format_size(r.size), _time(r.simulated), _time(r.predicted),
                      f"{r.error:+.1%}", _time(r.hockney), f"{r.hockney_error:+.1%}")
    console.print(table)
    if rows:
        err = np.abs([r.error for r in rows])
        hock = np.abs([r.hockney_error for r in rows])
        console.print(f"|error| median {np.median(err):.1%}, max {err.max():.1%}; "
                      f"Hockney median {np.median(hock):.1%}, max {hock.max():.1%} ({len(rows)} cases)",
                      highlight=False)
