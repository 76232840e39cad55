"""Open MPI rankfile: one line per rank, `rank R=HOST slot=S`.

    mpirun -np N --rankfile FILE ./app                 (Open MPI 4.x)
    mpirun -np N --map-by rankfile:file=FILE ./app     (Open MPI 5.x)

Open MPI's slot list also takes `SOCKET:CORE`, ranges and lists (`1:0-2`,
`0-3`, `0:0,1`); we write one logical core per rank and read any of the
forms, keeping the first core named as the rank's slot (for `SOCKET:CORE`
that is the core's index within its socket)."""

from __future__ import annotations

import re
from os import PathLike

from rankwise.cluster.core_binding import CoreBinding
from rankwise.util.errors import RankwiseError, file_error
from rankwise.cluster.launcher_files._text import MAX_RANK, count, from_rows, host, lines
from rankwise.cluster.placement import Placement
from rankwise.util.files import write_atomic

LINE = re.compile(r"rank\s+(\d+)\s*=\s*(\S+)\s+slots?\s*=\s*(\S+)")
_ITEM = r"(?:(\d+):)?(\d+)(?:-\d+)?"
SLOT = re.compile(rf"{_ITEM}(?:,(?:\d+:)?\d+(?:-\d+)?)*")
# What Open MPI's rankfile lexer reads as one host: a name starting with a
# letter, a word without dots, or an IPv4 address. Its keywords are not hosts.
_LEXED_HOST = re.compile(r"[A-Za-z][A-Za-z0-9_.-]*|[A-Za-z0-9_-]+|\d{1,3}(?:\.\d{1,3}){3}")
_KEYWORDS = {"rank", "slot", "slots", "username", "user-name", "user_name"}


def render(placement: Placement, binding: CoreBinding | None = None) -> str:
    """One line per rank; with a binding, the core as PACKAGE:CORE (the core's
    logical index within its package), which Open MPI binds the rank to."""
    if binding is not None:
        slots = [f"{p}:{c}" for p, c in zip(binding.package_of.tolist(), binding.core_in_package.tolist())]
    else:
        slots = [str(s) for s in placement.slot_of.tolist()]
    return "".join(f"rank {r}={placement.nodes[v]} slot={s}\n"
                   for r, (v, s) in enumerate(zip(placement.node_of.tolist(), slots)))


def write(placement: Placement, path: str | PathLike, *, app: str | None = None,
          binding: CoreBinding | None = None) -> None:
    for h in placement.used_nodes():
        if not _LEXED_HOST.fullmatch(h) or h in _KEYWORDS:
            raise RankwiseError(f"host name '{h}' cannot be written to an Open MPI rankfile")
    write_atomic(path, "# Open MPI rankfile written by rankwise: mpirun --rankfile\n" + render(placement, binding))


def read(path: str | PathLike) -> Placement:
    rows = []
    for number, text in lines(path):
        m = LINE.fullmatch(text)
        if not m:
            raise file_error(path, number, f"expected 'rank N=HOST slot=S', got '{text}'")
        s = SLOT.fullmatch(m.group(3))
        if not s:
            raise file_error(path, number, f"slot '{m.group(3)}' is not CORE, SOCKET:CORE, a range or a list")
        rows.append((count(m.group(1), "rank", path, number, MAX_RANK), host(m.group(2), path, number),
                     count(s.group(2), "slot", path, number), number))
    return from_rows(path, rows)
