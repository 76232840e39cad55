"""Dense matrices as text: N lines of N numbers, row i = what rank i sends.

    # bytes                     <- comments and blank lines are skipped
    0     4096  0
    4096  0     512
    0     512   0
    # messages (optional second matrix, same shape)
    0 4 0
    4 0 1
    0 1 0

Numbers are separated by blanks, tabs, commas or semicolons (numpy's
savetxt, spreadsheets' CSV, Open MPI's profile2mat.pl all fit). Entry
(i, j) of the first matrix is the bytes rank i sends to rank j; of the
second, the messages. Without a second matrix every nonzero entry counts as
one message. The diagonal is kept (traffic of a rank to itself).

profile2mat.pl (Open MPI monitoring) writes ``NAME_size_KIND.mat`` and
``NAME_msg_KIND.mat``: given the first, the second is read from next to it
when it is there. Those matrices are symmetric: entry (i, j) is the mean
of the traffic i -> j and j -> i, rounded to a whole number.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from rankwise.util.errors import RankwiseError, file_error
from rankwise.traffic.importers._common import (
    INT64_MAX,
    job_size,
    parse_count,
    read_lines,
    source_text,
    split_fields,
    strip_comment,
)
from rankwise.traffic.matrix import CommMatrix

NAME = "dense"
_PROFILE2MAT = re.compile(r"(?P<stem>.*)_(?P<what>size|msg|avg)_(?P<kind>[A-Za-z0-9]+)\.mat")


def rows(path, lines: list[str]) -> list[tuple[int, list[str]]]:
    """(line number, fields) of every data line."""
    out = []
    for no, raw in enumerate(lines, 1):
        text = strip_comment(raw)
        if text:
            out.append((no, split_fields(text)))
    return out


def load(path, n_ranks: int | None = None, lines: list[str] | None = None) -> CommMatrix:
    name = Path(path).name
    p2m = _PROFILE2MAT.fullmatch(name)
    if p2m and p2m["what"] != "size":
        what = "message counts" if p2m["what"] == "msg" else "average message sizes"
        raise file_error(path, None, f"holds profile2mat's {what}; give the "
                                     f"{p2m['stem']}_size_{p2m['kind']}.mat file")
    data = rows(path, read_lines(path) if lines is None else lines)
    if not data:
        raise file_error(path, None, "no matrix in the file (only comments or blank lines)")
    first_no, first = data[0]
    n = len(first)
    n = job_size(path, n_ranks, n, "the matrix has", first_no)
    for no, fields in data:
        if len(fields) != n:
            raise file_error(path, no, f"a row of {len(fields)} numbers in a matrix of {n} columns")
    if len(data) < n:
        raise file_error(path, data[-1][0], f"{len(data)} rows for {n} columns: the matrix is cut short")
    if len(data) > 2 * n:
        raise file_error(path, data[2 * n][0], f"more rows than a bytes and a messages matrix of {n} x {n}")
    if n < len(data) < 2 * n:
        raise file_error(path, data[-1][0], f"the messages matrix has {len(data) - n} of its {n} rows: "
                                            "cut short")

    volume = _values(path, data[:n], "bytes")
    if len(data) == 2 * n:
        count = _values(path, data[n:], "message count")
        note = "bytes and messages matrices"
    else:
        count = None
        note = "one message per nonzero entry"
        sibling = Path(path).with_name(f"{p2m['stem']}_msg_{p2m['kind']}.mat") if p2m else None
        if sibling is not None and sibling.is_file():
            sib = rows(sibling, read_lines(sibling))
            for no, fields in sib:
                if len(fields) != n:
                    raise file_error(sibling, no, f"a row of {len(fields)} numbers, but {name} has {n} columns")
            if len(sib) != n:
                raise file_error(sibling, sib[-1][0] if sib else None,
                                 f"{len(sib)} rows, but {name} is a {n} x {n} matrix")
            count = _values(sibling, sib, "message count")
            note = f"messages from {sibling.name}"
    if p2m:
        note += "; profile2mat: each direction is the mean of both"
    try:
        return CommMatrix.from_dense(volume, count, source=source_text(NAME, path, note))
    except RankwiseError as exc:
        raise file_error(path, None, str(exc)) from None


def _values(path, data, what: str) -> np.ndarray:
    """The N x N int64 values, checked line by line (whole, >= 0, and a
    total that fits in 64 bits)."""
    total = 0
    out = []
    for no, fields in data:
        row = [parse_count(path, no, field, what) for field in fields]
        total += sum(row)
        if total > INT64_MAX:
            raise file_error(path, no, f"the total of the {what} exceeds 64 bits")
        out.append(row)
    return np.array(out, dtype=np.int64)
