"""Plain lists of rank pairs: ``SRC DST BYTES [MSGS]``, one pair per line.

The input of RMATT-style mappers and of anything a script can print, and
also what "sparse matrix text" (``i j value`` triplets) usually is:

    # src dst bytes msgs          <- comment
    0 1 4096 4
    1,0,4096,4                    <- commas work too
    2 3 1e6                       <- no MSGS column: one message per line

Ranks are 0-based. Fields are separated by blanks, tabs, commas or
semicolons; ``#`` starts a comment. The first non-comment line may be a
header naming the columns (in any order): src/source/from/sender/i,
dst/dest/destination/to/receiver/j, bytes/volume/size/amount/value/weight,
msgs/messages/count/calls/transfers. Every data line has the width of the
first. Without a MSGS column each line with bytes > 0 counts as one
message. A pair on several lines is summed.
"""

from __future__ import annotations

import numpy as np

from rankwise.util.errors import RankwiseError, file_error
from rankwise.traffic.importers._common import (
    INT64_MAX,
    MAX_RANKS,
    Triplets,
    job_size,
    parse_count,
    parse_rank,
    read_lines,
    source_text,
    split_fields,
    strip_comment,
)
from rankwise.traffic.matrix import CommMatrix
from rankwise.util.numbers import shown

NAME = "list"

COLUMN_NAMES = {
    "src": ("src", "source", "from", "sender", "i"),
    "dst": ("dst", "dest", "destination", "to", "receiver", "j"),
    "bytes": ("bytes", "volume", "size", "amount", "value", "weight"),
    "msgs": ("msgs", "messages", "count", "calls", "transfers", "n"),
}
ALIASES = {alias: key for key, aliases in COLUMN_NAMES.items() for alias in aliases}
KEYS = ("src", "dst", "bytes", "msgs")


def load(path, n_ranks: int | None = None, lines: list[str] | None = None) -> CommMatrix:
    lines = read_lines(path) if lines is None else lines
    fast = _fast(path, lines, n_ranks)
    if fast is not None:
        return fast
    trip = Triplets(n_ranks)
    columns = None  # index of each of KEYS in a line (msgs may be None)
    width = 0
    for no, raw in enumerate(lines, 1):
        text = strip_comment(raw)
        if not text:
            continue
        fields = split_fields(text)
        if columns is None:
            if not _numeric(fields[0]):
                columns, width = _header(path, no, fields), len(fields)
                continue
            if len(fields) not in (3, 4):
                raise file_error(path, no, f"expected 'SRC DST BYTES [MSGS]', got {len(fields)} fields")
            columns, width = (0, 1, 2, 3 if len(fields) == 4 else None), len(fields)
        if len(fields) != width:
            raise file_error(path, no, f"{len(fields)} fields where the first line has {width}")
        src = parse_rank(path, no, fields[columns[0]], "source rank")
        dst = parse_rank(path, no, fields[columns[1]], "destination rank")
        nbytes = parse_count(path, no, fields[columns[2]], "bytes")
        if columns[3] is None:
            msgs = 1 if nbytes > 0 else 0
        else:
            msgs = parse_count(path, no, fields[columns[3]], "message count")
        trip.add(path, no, src, dst, msgs, nbytes)
    found = trip.max_rank() + 1 if len(trip) else None
    if n_ranks is not None:
        found = None  # ranks were checked against --ranks line by line
    n = job_size(path, n_ranks, found, "the list reaches")
    note = "" if columns is None or columns[3] is not None else "one message per line"
    return trip.matrix(n, source_text(NAME, path, note), path)


_SEPARATORS = str.maketrans(",;", "  ")
_FAST_DIGITS = 18  # a value of up to 18 digits fits in int64


def _fast(path, lines: list[str], n_ranks: int | None) -> CommMatrix | None:
    """The common case at numpy speed (1.5 million lines in about a second):
    plain digits, every line of the same width, nothing out of range. None
    when anything is unusual; the line-by-line reader then takes over and
    names the line at fault."""
    body = [line.split("#", 1)[0] if "#" in line else line for line in lines]
    body = [line for line in body if line.strip()]
    if not body:
        return None
    first = body[0].translate(_SEPARATORS).split()
    columns = (0, 1, 2, 3 if len(first) == 4 else None)
    if not _numeric(first[0]):
        try:
            columns = _header(path, 0, first)
        except RankwiseError:
            return None
        body = body[1:]
    width = len(first)
    if width not in (3, 4) or not body:
        return None
    tokens = " ".join(body).translate(_SEPARATORS).split()
    if len(tokens) != width * len(body):
        return None
    joined = "".join(tokens)
    if not (joined.isascii() and joined.isdigit()) or max(map(len, tokens)) > _FAST_DIGITS:
        return None
    values = np.fromstring(" ".join(tokens), dtype=np.int64, sep=" ").reshape(len(body), width)
    src, dst, nbytes = (values[:, columns[k]] for k in range(3))
    msgs = values[:, columns[3]] if columns[3] is not None else (nbytes > 0).astype(np.int64)
    n = n_ranks if n_ranks is not None else int(max(src.max(), dst.max())) + 1
    if src.max() >= n or dst.max() >= n or n > MAX_RANKS:
        return None
    if sum(nbytes.tolist()) > INT64_MAX or sum(msgs.tolist()) > INT64_MAX:
        return None
    note = "" if columns[3] is not None else "one message per line"
    try:
        return CommMatrix(n, src, dst, msgs, nbytes, source=source_text(NAME, path, note))
    except RankwiseError:
        return None


def _numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _header(path, no: int, fields: list[str]) -> tuple:
    index: dict[str, int] = {}
    for k, name in enumerate(fields):
        key = ALIASES.get(name.lower())
        if key is None:
            known = ", ".join("/".join(v) for v in COLUMN_NAMES.values())
            raise file_error(path, no, f"unknown column '{shown(name)}' in the header line (known: {known})")
        if key in index:
            raise file_error(path, no, f"column '{key}' named twice in the header line")
        index[key] = k
    missing = [key for key in KEYS[:3] if key not in index]
    if missing:
        raise file_error(path, no, f"the header line has no '{missing[0]}' column")
    return tuple(index.get(key) for key in KEYS)
