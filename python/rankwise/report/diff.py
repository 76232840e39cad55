"""The summary `rankwise diff` (and `rankwise watch`) print of a ModelDiff."""

from __future__ import annotations

from rich import box
from rich.markup import escape
from rich.table import Table

from rankwise.model.diff import ModelDiff
from rankwise.report.model import compress_names


def _times(ratio: float) -> str:
    if ratio != ratio:  # NaN
        return "-"
    return f"{ratio:.2f}x slower" if ratio >= 1 else f"{1 / ratio:.2f}x faster"


def _size(nbytes: int) -> str:
    for unit, shift in (("MiB", 20), ("KiB", 10)):
        if nbytes >= 1 << shift and nbytes % (1 << shift) == 0:
            return f"{nbytes >> shift} {unit}"
    return f"{nbytes} B"


def headline(diff: ModelDiff) -> str:
    """One line: how many pairs changed and what explains them."""
    parts = [f"{int(diff.changed.sum())} of {int(diff.compared.sum())} compared pairs changed"]
    if diff.links:
        parts.append("links " + ", ".join(link.name for link in diff.links))
    nodes = sorted({c.name for c in diff.nodes}, key=diff.names.index)
    if nodes:
        parts.append("nodes " + compress_names(nodes))
    if diff.groups:
        parts.append(f"{len(diff.groups)} group(s) regrouped")
    if diff.newly_missing:
        parts.append(f"{len(diff.newly_missing)} pair(s) no longer answer")
    return "; ".join(parts)


def render(diff: ModelDiff, console, top: int = 10) -> None:
    console.print(f"[bold]rankwise diff[/bold]  {len(diff.names)} nodes in both, "
                  f"sizes {', '.join(_size(s) for s in diff.sizes) or '-'}; a change is a median "
                  f"{diff.threshold:.0%} away, outside the other model's range of samples", highlight=False)
    if diff.added:
        console.print(f"  nodes added: {escape(compress_names(diff.added))}", highlight=False)
    if diff.removed:
        console.print(f"  nodes removed: {escape(compress_names(diff.removed))}", highlight=False)
    console.print(f"  {escape(headline(diff))}", highlight=False)
    if not diff.any_change:
        console.print("  [green]no change beyond the measured noise[/green]")
        return
    if diff.links:
        t = Table(title="Shared links that changed", title_justify="left", box=box.SIMPLE_HEAD)
        for col, just in (("link", "left"), ("pairs changed", "right"), ("change", "right"), ("capacity", "right")):
            t.add_column(col, justify=just)
        for link in diff.links:
            cap = "-" if link.capacity_ratio != link.capacity_ratio else f"x{link.capacity_ratio:.2f}"
            t.add_row(escape(link.name), f"{link.changed}/{link.pairs}", _times(link.ratio), cap)
        console.print(t)
    if diff.nodes:
        t = Table(title="Nodes that changed (their own link, NIC or overhead)", title_justify="left",
                  box=box.SIMPLE_HEAD)
        for col, just in (("node", "left"), ("what", "left"), ("pairs changed", "right"), ("change", "right")):
            t.add_column(col, justify=just)
        for c in diff.nodes:
            t.add_row(escape(c.name), c.what, f"{c.changed}/{c.pairs}" if c.what == "pairs" else "-", _times(c.ratio))
        console.print(t)
    if diff.groups:
        t = Table(title="Groups that changed", title_justify="left", box=box.SIMPLE_HEAD)
        t.add_column("before")
        t.add_column("after")
        for gc in diff.groups:
            t.add_row(escape(compress_names(list(gc.before))),
                      escape(" | ".join(compress_names(list(p)) for p in gc.after)))
        console.print(t)
    if diff.pairs:
        t = Table(title=f"Most changed pairs ({min(top, len(diff.pairs))} of {len(diff.pairs)}; "
                        f"{diff.unexplained} explained by no link or node)", title_justify="left", box=box.SIMPLE_HEAD)
        for col, just in (("pair", "left"), ("change", "right"), ("at size", "right")):
            t.add_column(col, justify=just)
        for p in diff.pairs[:top]:
            t.add_row(escape(f"{p.src} -> {p.dst}"), _times(p.ratio), _size(p.size))
        console.print(t)
    for what, pairs in (("no longer answer", diff.newly_missing), ("answer again", diff.recovered)):
        if pairs:
            shown = ", ".join(f"{a} -> {b}" for a, b in pairs[:6]) + (", ..." if len(pairs) > 6 else "")
            console.print(f"  pairs that {what}: {escape(shown)}", highlight=False)
