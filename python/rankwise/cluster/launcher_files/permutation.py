"""rankwise's plain placement: `RANK NODE SLOT` per line, every rank once."""

from __future__ import annotations

from os import PathLike

from rankwise.util.errors import file_error
from rankwise.cluster.launcher_files._text import MAX_RANK, count, from_rows, host, lines
from rankwise.cluster.placement import Placement
from rankwise.util.files import write_atomic

HEADER = "# rankwise placement: rank node slot"


def write(placement: Placement, path: str | PathLike, *, app: str | None = None, binding=None) -> None:
    # The slot is the core (logical index) the mapper chose: the binding adds nothing here.
    rows = zip(placement.hosts_in_rank_order(), placement.slot_of.tolist())
    write_atomic(path, HEADER + "\n" + "".join(f"{r} {h} {s}\n" for r, (h, s) in enumerate(rows)))


def read(path: str | PathLike) -> Placement:
    rows = []
    for number, text in lines(path):
        words = text.split()
        if len(words) != 3:
            raise file_error(path, number, f"expected 'RANK NODE SLOT', got '{text}'")
        rows.append((count(words[0], "rank", path, number, MAX_RANK), host(words[1], path, number),
                     count(words[2], "slot", path, number), number))
    return from_rows(path, rows)
