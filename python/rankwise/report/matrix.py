"""What the verbs print about a communication matrix: the aligned summary of
`rankwise pattern show` (also after generating, profiling or showing) and the
one-line summary of `rankwise import`."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.markup import escape


def human_bytes(nbytes: float) -> str:
    for unit, scale in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= scale:
            return f"{nbytes / scale:.3g} {unit}"
    return f"{nbytes:.3g} B"


def _spread(values, fmt=lambda v: f"{v:g}") -> str:
    if values.size == 0:
        return "-"
    return f"min {fmt(values.min())}, mean {fmt(values.mean())}, max {fmt(values.max())}"


def show_summary(matrix, path: Path, console: Console) -> None:
    """What `pattern show` prints (also after generating): plain aligned
    lines, never cut to the terminal width, so that scripts can grep them."""
    import numpy as np

    n = matrix.n_ranks
    rows = [("file", str(path))]
    if matrix.pattern:
        rows.append(("pattern", matrix.pattern))
    if matrix.source:
        rows.append(("source", matrix.source))
    pairs = n * (n - 1)
    density = f" ({100 * matrix.nnz / pairs:.3g}% of ordered pairs)" if pairs else ""
    rows += [
        ("ranks", str(n)),
        ("nonzeros", f"{matrix.nnz}{density}"),
        ("messages", str(matrix.total_msgs)),
        ("bytes", f"{matrix.total_bytes} ({human_bytes(matrix.total_bytes)})"),
        ("out-degree", _spread(matrix.out_degree())),
        ("in-degree", _spread(matrix.in_degree())),
        ("sent per rank", _spread(matrix.sent_bytes(), human_bytes)),
    ]
    if matrix.nnz:
        k = int(np.argmax(matrix.bytes))
        rows.append(("heaviest pair", f"{matrix.src[k]} -> {matrix.dst[k]}: {matrix.msgs[k]} messages, "
                                      f"{human_bytes(matrix.bytes[k])}"))
    width = max(len(key) for key, _ in rows)
    for key, value in rows:
        console.print(f"[bold]{key:<{width}}[/bold]  {escape(value)}", highlight=False, soft_wrap=True)


def matrix_summary(matrix) -> dict:
    """What show_summary prints, as numbers (rankwise show --json)."""
    import numpy as np

    def spread(values) -> dict:
        v = np.asarray(values, dtype=float)
        return {"min": float(v.min()), "median": float(np.median(v)), "max": float(v.max())} if v.size else {}

    out = {"pattern": matrix.pattern or None, "source": matrix.source or None, "ranks": int(matrix.n_ranks),
           "nonzeros": int(matrix.nnz), "messages": int(matrix.total_msgs), "bytes": int(matrix.total_bytes),
           "out_degree": spread(matrix.out_degree()), "in_degree": spread(matrix.in_degree()),
           "sent_bytes_per_rank": spread(matrix.sent_bytes()), "heaviest_pair": None}
    if matrix.nnz:
        k = int(np.argmax(matrix.bytes))
        out["heaviest_pair"] = {"src": int(matrix.src[k]), "dst": int(matrix.dst[k]), "messages": int(matrix.msgs[k]),
                                "bytes": int(matrix.bytes[k])}
    return out


def summary_line(matrix, source, output) -> str:
    """One line: ranks, nonzeros, messages, total bytes, where from."""
    return (f"{output}: {matrix.n_ranks} ranks, {matrix.nnz} nonzeros, {matrix.total_msgs} messages, "
            f"{matrix.total_bytes} bytes ({human_bytes(matrix.total_bytes)}) from {source}"
            + (f" [{matrix.source}]" if matrix.source else ""))
