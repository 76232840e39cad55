"""Reading a launcher file: lines without comments, with their numbers; host
names and rank rows checked with the line that holds them."""

from __future__ import annotations

from collections.abc import Iterator
from os import PathLike
from rankwise.util.errors import file_error
from rankwise.util.inputs import read_input
from rankwise.util.numbers import bounded_int, shown
from rankwise.cluster.placement import Placement, host_problem


def lines(path: str | PathLike, comment: str = "#") -> Iterator[tuple[int, str]]:
    """(line number, text) of the non-empty lines, comments removed."""
    try:
        text = read_input(path).decode()  # a FIFO or a directory is refused, never waited on
    except UnicodeDecodeError:
        raise file_error(path, None, "not a text file") from None
    for number, raw in enumerate(text.splitlines(), 1):
        body = raw.split(comment, 1)[0].strip() if comment else raw.strip()
        if body:
            yield number, body


MAX_COUNT = 1 << 16  # ranks or a core index on one host: beyond any node's cores
MAX_RANK = (1 << 26) - 1  # a rank of the largest job a matrix may describe


def count(text: str, what: str, path, line: int, maximum: int = MAX_COUNT) -> int:
    if not (text.isascii() and text.isdigit()):
        raise file_error(path, line, f"{what} '{shown(text)}' is not a non-negative integer")
    try:
        return bounded_int(text, maximum)
    except ValueError:
        raise file_error(path, line, f"{what} {shown(text)} is more than {maximum}") from None


def host(text: str, path, line: int) -> str:
    """A host name read from a file, refused with its line when no launcher file can carry it."""
    problem = host_problem(text)
    if problem:
        raise file_error(path, line, f"bad host name '{text}': {problem}")
    return text


def from_rows(path, rows: list[tuple[int, str, int, int]]) -> Placement:
    """A placement from (rank, host, slot, line) rows: ranks 0..n-1 once each,
    no two on the same core. Errors name the line that breaks the rule."""
    by_rank: dict[int, tuple[str, int, int]] = {}
    holder: dict[tuple[str, int], int] = {}
    for rank, name, slot, line in rows:
        if rank in by_rank:
            raise file_error(path, line, f"rank {rank} is given twice (first on line {by_rank[rank][2]})")
        if (name, slot) in holder:
            raise file_error(path, line, f"rank {rank} shares slot {slot} of {name} with rank {holder[name, slot]}")
        by_rank[rank] = (name, slot, line)
        holder[name, slot] = rank
    if not by_rank:
        raise file_error(path, None, "no rank in the file")
    missing = sorted(set(range(len(by_rank))) - set(by_rank))
    if missing:
        raise file_error(path, None, f"rank {missing[0]} is missing (ranks must be 0..{len(by_rank) - 1})")
    base = Placement.from_hosts([by_rank[r][0] for r in range(len(by_rank))])
    return Placement(base.nodes, base.node_of, [by_rank[r][1] for r in range(len(by_rank))])
