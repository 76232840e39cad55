"""Open MPI rankfile: one line per rank, `rank R=HOST slot=S`.

    mpirun -np N --rankfile FILE ./app                 (Open MPI 4.x)
    mpirun -np N --map-by rankfile:file=FILE ./app     (Open MPI 5.x)

Open MPI's slot list also takes `SOCKET:CORE` and ranges (`1:0-2`, `0-3`);
we write one logical core per rank and read any of the forms, keeping the
first core named as the rank's slot."""

from __future__ import annotations

import re
from os import PathLike

from rankwise.errors import file_error
from rankwise.launchers._text import lines
from rankwise.placement import Placement
from rankwise.sim.platform_file import write_atomic

LINE = re.compile(r"rank\s+(\d+)\s*=\s*(\S+)\s+slot\s*=\s*(\S+)")
SLOT = re.compile(r"(?:(\d+):)?(\d+)(?:-\d+)?(?:,\S*)?")


def render(placement: Placement) -> str:
    return "".join(f"rank {r}={placement.nodes[v]} slot={s}\n"
                   for r, (v, s) in enumerate(zip(placement.node_of.tolist(), placement.slot_of.tolist())))


def write(placement: Placement, path: str | PathLike, *, app: str | None = None) -> None:
    write_atomic(path, "# Open MPI rankfile written by rankwise: mpirun --rankfile\n" + render(placement))


def read(path: str | PathLike) -> Placement:
    ranks: dict[int, tuple[str, int]] = {}
    for number, text in lines(path):
        m = LINE.fullmatch(text)
        if not m:
            raise file_error(path, number, f"expected 'rank N=HOST slot=S', got '{text}'")
        rank, host, slot = int(m.group(1)), m.group(2), m.group(3)
        s = SLOT.fullmatch(slot)
        if not s:
            raise file_error(path, number, f"slot '{slot}' is not CORE, SOCKET:CORE or a range")
        if rank in ranks:
            raise file_error(path, number, f"rank {rank} is given twice")
        ranks[rank] = (host, int(s.group(2)))
    if not ranks:
        raise file_error(path, None, "no rank in rankfile")
    missing = sorted(set(range(len(ranks))) - set(ranks))
    if missing:
        raise file_error(path, None, f"rank {missing[0]} is missing (ranks must be 0..{len(ranks) - 1})")
    hosts = [ranks[r][0] for r in range(len(ranks))]
    base = Placement.from_hosts(hosts)
    return Placement(base.nodes, base.node_of, [ranks[r][1] for r in range(len(ranks))])
