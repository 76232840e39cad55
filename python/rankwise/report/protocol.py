"""What `rankwise show` says of the MPI library's protocol knee and the nodes' send overhead
(docs/concepts/model.md, "Overhead and protocol knee")."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from rankwise.model.model import MEASURED, Model


@dataclass
class ProtocolSummary:
    knee: int  # first size of the large-message protocol, bytes; 0 = none found
    small_alpha_us: float  # median over measured pairs below the knee (all sizes without one)
    small_bandwidth_gbps: float
    large_alpha_us: float  # the same at and above the knee (NaN without one)
    large_bandwidth_gbps: float
    overhead_us: tuple[float, float, float] | None  # min, median, max over nodes that have one
    overhead_max_node: str | None  # the node with the highest send overhead
    recv_overhead_us: tuple[float, float, float] | None = None  # the same for the receive overhead


def _median(values: np.ndarray) -> float:
    values = values[np.isfinite(values)]
    return float(np.median(values)) if values.size else math.nan


def summarize_protocol(model: Model) -> ProtocolSummary | None:
    """None when the model has neither a knee nor a measured overhead (a format 1 model)."""
    o = np.asarray(model.overhead, dtype=float)
    has_o = np.isfinite(o)
    if model.knee <= 0 and not has_o.any():
        return None
    pairs = (model.state == MEASURED) & ~np.eye(model.n_nodes, dtype=bool)
    with np.errstate(divide="ignore", invalid="ignore"):
        large_bw = np.where(model.beta_large > 0, 1.0 / model.beta_large, math.nan)
    overhead = None
    worst = None
    if has_o.any():
        v = o[has_o] * 1e6
        overhead = (float(v.min()), float(np.median(v)), float(v.max()))
        worst = model.names[int(np.flatnonzero(has_o)[np.argmax(o[has_o])])]
    r = np.asarray(model.recv_overhead, dtype=float) if model.recv_overhead is not None else np.array([])
    v = r[np.isfinite(r)] * 1e6
    recv = (float(v.min()), float(np.median(v)), float(v.max())) if v.size else None
    return ProtocolSummary(
        knee=int(model.knee),
        small_alpha_us=_median(model.alpha[pairs]) * 1e6,
        small_bandwidth_gbps=_median(model.bandwidth[pairs]) / 1e9,
        large_alpha_us=_median(model.alpha_large[pairs]) * 1e6,
        large_bandwidth_gbps=_median(large_bw[pairs]) / 1e9,
        overhead_us=overhead,
        overhead_max_node=worst,
        recv_overhead_us=recv,
    )


def render_protocol(p: ProtocolSummary, console, size_text) -> None:
    from rich.markup import escape  # node names come from the model file

    if p.knee > 0:
        console.print(f"Protocol knee at {size_text(p.knee)}: below it alpha {p.small_alpha_us:.3g} us, "
                      f"{p.small_bandwidth_gbps:.3g} GB/s; from it alpha {p.large_alpha_us:.3g} us, "
                      f"{p.large_bandwidth_gbps:.3g} GB/s (medians over pairs)", highlight=False)
    else:
        console.print("Protocol knee: none (one line fits every round-trip curve)", highlight=False)
    if p.overhead_us is not None:
        lo, mid, hi = p.overhead_us
        line = f"Send overhead o: {lo:.3g} / {mid:.3g} / {hi:.3g} us (min / median / max)"
        if hi > 1.3 * mid and p.overhead_max_node:
            line += f", highest on {escape(p.overhead_max_node)}"
        console.print(line, highlight=False)
    if p.recv_overhead_us is not None:
        lo, mid, hi = p.recv_overhead_us
        console.print(f"Receive overhead: {lo:.3g} / {mid:.3g} / {hi:.3g} us (min / median / max)",
                      highlight=False)
