"""MPI hostfiles: read what users give (Open MPI, MPICH, SMPI forms), write SMPI's one-line-per-rank form."""

from __future__ import annotations

from collections.abc import Sequence
from os import PathLike

from rankwise.util.errors import RankwiseError, file_error
from rankwise.util.files import write_atomic
from rankwise.util.inputs import read_input
from rankwise.util.numbers import OutOfRange, bounded_int, shown

Hosts = list[tuple[str, int]]

# Slots per host and in all: no job has more ranks than a matrix may hold
# (2^26), and the engine counts slots in 32-bit integers.
MAX_SLOTS = 1 << 26


def read_hostfile(path: str | PathLike) -> Hosts:
    """(host, slots) from an MPI hostfile.

    Accepted per line: 'host', 'host:N', 'host slots=N [max_slots=M]'; '#' starts a comment.
    A bare host repeated on several lines (one line per rank, as SMPI and MPICH
    machinefiles have it) adds one slot per line; a host listed twice where
    either line gives a slot count is an error.
    """
    try:
        text = read_input(path, "hostfile").decode()
    except UnicodeDecodeError:
        raise file_error(path, None, "hostfile is not text") from None

    hosts: Hosts = []
    first_line: dict[str, int] = {}
    explicit: dict[str, bool] = {}
    for lineno, raw in enumerate(text.splitlines(), 1):
        tokens = raw.split("#", 1)[0].split()
        if not tokens:
            continue
        name, colon, count = tokens[0].partition(":")
        if not name:
            raise file_error(path, lineno, f"missing host name in '{shown(tokens[0])}'")
        slots = _positive(count, "slot count", path, lineno) if colon else 1
        max_slots = None
        for tok in tokens[1:]:
            key, eq, value = tok.partition("=")
            if not eq or key not in ("slots", "max_slots", "max-slots"):
                raise file_error(path, lineno, f"unexpected '{shown(tok)}' (expected slots=N or max_slots=N)")
            if colon and key == "slots":
                raise file_error(path, lineno, f"slots given twice for host '{shown(name)}'")
            if key == "slots":
                slots = _positive(value, "slots", path, lineno)
            else:
                max_slots = _positive(value, "max_slots", path, lineno)
        if max_slots is not None and max_slots < slots:
            raise file_error(path, lineno, f"max_slots={max_slots} is below slots={slots}")
        counted = bool(colon) or any(t.startswith("slots=") for t in tokens[1:])
        if name in first_line:
            if counted or explicit[name]:
                raise file_error(
                    path, lineno, f"duplicate host '{shown(name)}' (first listed on line {first_line[name]}); use slots=N"
                )
            k = next(k for k, (h, _) in enumerate(hosts) if h == name)
            hosts[k] = (name, hosts[k][1] + 1)
            continue
        first_line[name] = lineno
        explicit[name] = counted
        hosts.append((name, slots))
    if not hosts:
        raise file_error(path, None, "no host in hostfile")
    if sum(slots for _, slots in hosts) > MAX_SLOTS:
        raise file_error(path, None, f"the hosts offer more than {MAX_SLOTS} slots in all")
    return hosts


def _positive(text: str, what: str, path: str | PathLike, line: int) -> int:
    try:
        value = bounded_int(text, MAX_SLOTS)
    except OutOfRange:
        if text.startswith("-"):
            raise file_error(path, line, f"{what} must be positive, got {shown(text)}") from None
        raise file_error(path, line, f"{what} {shown(text)} is more than {MAX_SLOTS}") from None
    except ValueError:
        raise file_error(path, line, f"{what} '{shown(text)}' is not an integer") from None
    if value <= 0:
        raise file_error(path, line, f"{what} must be positive, got {value}")
    return value


def write_hostfile(path: str | PathLike, hosts: Sequence[str]) -> None:
    """SMPI hostfile: one host name per line; SMPI gives rank k the k-th line."""
    for h in hosts:
        if not h or any(c.isspace() for c in h) or ":" in h or "#" in h:
            raise RankwiseError(f"cannot write host name {h!r} to a hostfile")
    write_atomic(path, "".join(f"{h}\n" for h in hosts))
