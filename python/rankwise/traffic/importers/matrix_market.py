"""Matrix Market files (``.mtx``): the exchange format of sparse-matrix
tools (SciPy's mmwrite, SuiteSparse, graph partitioners).

    %%MatrixMarket matrix coordinate integer general
    % comments start with %
    4 4 3                <- rows, columns, entries
    1 2 4096             <- row, column (1-based), value = bytes
    2 1 4096
    3 4 512

Header: ``%%MatrixMarket matrix FORMAT FIELD SYMMETRY`` (case-insensitive),
FORMAT ``coordinate`` (sparse: ROWS COLS ENTRIES, then ENTRIES lines
``I J VALUE``) or ``array`` (dense: ROWS COLS, then ROWS x COLS values,
column after column, one per line); FIELD ``integer`` or ``real`` (values
must be whole); SYMMETRY ``general``, or ``symmetric`` for coordinate
files (an entry (i, j) off the diagonal stands for both directions). The matrix must be square: its size
is the job's. Row i sends VALUE bytes to column j, as one message. Complex,
pattern (no values), skew-symmetric and hermitian matrices are refused.
"""

from __future__ import annotations

from rankwise.util.errors import file_error
from rankwise.traffic.importers._common import (
    Triplets,
    job_size,
    parse_count,
    parse_rank,
    read_lines,
    source_text,
)
from rankwise.traffic.matrix import CommMatrix
from rankwise.util.numbers import shown

NAME = "mtx"
BANNER = "%%matrixmarket"


def load(path, n_ranks: int | None = None, lines: list[str] | None = None) -> CommMatrix:
    lines = read_lines(path) if lines is None else lines
    if not lines or not lines[0].lower().startswith(BANNER):
        raise file_error(path, 1, "not a Matrix Market file (no '%%MatrixMarket' first line)")
    head = lines[0].split()
    if len(head) != 5 or head[1].lower() != "matrix":
        raise file_error(path, 1, "expected '%%MatrixMarket matrix FORMAT FIELD SYMMETRY'")
    fmt, field, symmetry = (h.lower() for h in head[2:])
    if fmt not in ("coordinate", "array"):
        raise file_error(path, 1, f"format '{shown(head[2])}' is not coordinate or array")
    if field not in ("integer", "real"):
        why = "has no values" if field == "pattern" else "is not integer or real"
        raise file_error(path, 1, f"field '{shown(head[3])}' {why}: bytes are needed")
    if symmetry not in ("general", "symmetric"):
        raise file_error(path, 1, f"symmetry '{shown(head[4])}' is not general or symmetric")
    if fmt == "array" and symmetry != "general":
        raise file_error(path, 1, "a symmetric array (half a dense matrix) is not supported: "
                                  "write it as coordinate or general")

    data = ((no, line.split()) for no, line in enumerate(lines[1:], 2)
            if line.strip() and not line.lstrip().startswith("%"))
    size = next(data, None)
    want = 3 if fmt == "coordinate" else 2
    if size is None:
        raise file_error(path, len(lines), "no size line: the file is cut short")
    size_no, fields = size
    if len(fields) != want:
        raise file_error(path, size_no, f"the size line should hold {want} numbers, it holds {len(fields)}")
    rows, cols = (parse_count(path, size_no, f, "matrix size") for f in fields[:2])
    if rows != cols:
        raise file_error(path, size_no, f"a {rows} x {cols} matrix is not square: rows and columns are "
                                        "the same ranks")
    n = job_size(path, n_ranks, rows, "the matrix has", size_no)
    entries = parse_count(path, size_no, fields[2], "entry count") if fmt == "coordinate" else n * n

    trip = Triplets(n)
    seen = 0
    last_no = size_no
    for no, fields in data:
        last_no = no
        if seen == entries:
            raise file_error(path, no, f"more entries than the {entries} the size line announces")
        if fmt == "coordinate":
            if len(fields) != 3:
                raise file_error(path, no, f"expected 'ROW COLUMN VALUE', got {len(fields)} fields")
            i = parse_rank(path, no, fields[0], "row", base=1)
            j = parse_rank(path, no, fields[1], "column", base=1)
            value = parse_count(path, no, fields[2], "value")
        else:
            if len(fields) != 1:
                raise file_error(path, no, f"expected one value per line, got {len(fields)}")
            j, i = divmod(seen, n)  # column after column
            value = parse_count(path, no, fields[0], "value")
        if i >= n or j >= n:
            raise file_error(path, no, f"entry ({i + 1}, {j + 1}) is outside the {n} x {n} matrix")
        msgs = 1 if value > 0 else 0
        trip.add(path, no, i, j, msgs, value)
        if symmetry == "symmetric" and i != j:
            trip.add(path, no, j, i, msgs, value)
        seen += 1
    if seen < entries:
        raise file_error(path, last_no, f"{seen} of the {entries} entries the size line announces: "
                                        "the file is cut short")
    note = "symmetric" if symmetry == "symmetric" else ""
    return trip.matrix(n, source_text(NAME, path, note), path)

