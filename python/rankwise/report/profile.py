"""What `rankwise profile` prints after a run: the matrix summary, then where MPI time went."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape

from rankwise.report.matrix import show_summary


def show_profile(result, console: Console) -> None:
    """The matrix summary of `rankwise pattern show`, then where MPI time went."""
    show_summary(result.matrix, result.output, console)
    total = result.summary.total
    classes = (("t_p2p", "point-to-point"), ("t_coll", "collectives"), ("t_wait", "wait/test"),
               ("t_other", "other"))
    mpi = total.get("mpi_time", 0.0)
    n = max(result.summary.n_ranks, 1)
    share = f" ({100 * mpi / (n * result.summary.elapsed):.3g}% of the run)" if result.summary.elapsed > 0 else ""
    parts = ", ".join(f"{label} {total.get(key, 0.0) / n:.3g} s" for key, label in classes)
    rows = [
        ("collective share", f"{100 * total.get('coll_bytes', 0) / max(total.get('sent_bytes', 0), 1):.3g}% of bytes"),
        ("MPI time per rank", f"{mpi / n:.3g} s{share}: {parts}"),
        ("summary", str(result.summary_file)),
    ]
    width = 17
    for key, value in rows:
        console.print(f"[bold]{key:<{width}}[/bold]  {escape(value)}", highlight=False, soft_wrap=True)
