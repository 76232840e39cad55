"""rankwise's plain placement: `RANK NODE SLOT` per line, every rank once."""

from __future__ import annotations

from os import PathLike

from rankwise.errors import file_error
from rankwise.launchers._text import count, lines
from rankwise.placement import Placement
from rankwise.sim.platform_file import write_atomic

HEADER = "# rankwise placement: rank node slot"


def write(placement: Placement, path: str | PathLike, *, app: str | None = None) -> None:
    rows = zip(placement.hosts_in_rank_order(), placement.slot_of.tolist())
    write_atomic(path, HEADER + "\n" + "".join(f"{r} {h} {s}\n" for r, (h, s) in enumerate(rows)))


def read(path: str | PathLike) -> Placement:
    ranks: dict[int, tuple[str, int]] = {}
    for number, text in lines(path):
        words = text.split()
        if len(words) != 3:
            raise file_error(path, number, f"expected 'RANK NODE SLOT', got '{text}'")
        rank = count(words[0], "rank", path, number)
        if rank in ranks:
            raise file_error(path, number, f"rank {rank} is given twice")
        ranks[rank] = (words[1], count(words[2], "slot", path, number))
    if not ranks:
        raise file_error(path, None, "no rank in the placement")
    missing = sorted(set(range(len(ranks))) - set(ranks))
    if missing:
        raise file_error(path, None, f"rank {missing[0]} is missing (ranks must be 0..{len(ranks) - 1})")
    base = Placement.from_hosts([ranks[r][0] for r in range(len(ranks))])
    return Placement(base.nodes, base.node_of, [ranks[r][1] for r in range(len(ranks))])
