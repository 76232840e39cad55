"""Intel MPI native statistics (``I_MPI_STATS=1`` .. ``20``, or
``native:n-m``; file ``stats.txt`` or ``I_MPI_STATS_FILE``).

The file has one section per process of MPI_COMM_WORLD; each starts with
a line ``~~~~ Process P of N on node HOST lifetime = T usec`` and holds a
"Data Transfers" table (every level from 1 on: "the amount of data sent by
each process"), then, from level 2, "Communication Activity" tables of
volumes and calls per MPI operation:

    ~~~~ Process 1 of 4 on node nodeA lifetime = 812.25 usec

    Data Transfers
    Src     Dst     Amount(MB)      Transfers
    -----------------------------------------
    001 --> 000     1.953125e-03    2
    001 --> 002     0.000000e+00    0
    =========================================
    Totals          1.953125e-03    2

What is imported: every row ``SRC --> DST AMOUNT TRANSFERS`` of every
process's Data Transfers table is SRC sending TRANSFERS messages of
AMOUNT megabytes in total to DST. Intel's tools count a megabyte as 2^20
bytes (the Application Performance Snapshot guide's examples: 4 bytes are
3.8147e-06 MB), so bytes = round(AMOUNT x 1048576); AMOUNT is printed with
7 significant digits, so bytes are exact up to that precision.

What is not: the collective operations' volumes. The statistics give them
per process and per operation (and, at level 3, per communicator context
and message size), never per destination and without the root, so they
cannot be placed in a rank-to-rank matrix and are left out; the matrix
source says so.

Checks: N is the same in every section and agrees with --ranks; every
process 0..N-1 has exactly one section and one Data Transfers table; a
table's rows are its process's (SRC = P), destinations are in [0, N); the
Totals line matches the rows (a cut or edited table is refused). A file
cut before its last process, or in the middle of a table, is an error.

The IPM-style output (``I_MPI_STATS=ipm``, stats.ipm) holds per-process
summaries without destinations: it is recognised and refused with a hint.
"""

from __future__ import annotations

import re

from rankwise.util.errors import file_error
from rankwise.traffic.importers._common import (
    INT64_MAX,
    Triplets,
    job_size,
    parse_count,
    parse_float,
    parse_rank,
    read_lines,
    source_text,
)
from rankwise.traffic.matrix import CommMatrix
from rankwise.util.numbers import shown

NAME = "intel"
MB = 1 << 20  # Intel MPI's "MB"
NOTE = "point-to-point Data Transfers only; collective volumes have no destinations: not imported"

PROCESS_RE = re.compile(r"~+\s*Process\s+(\d+)\s+of\s+(\d+)\b.*")
# SRC and DST apart by an arrow or blanks (with both optional, a run of
# digits could be cut anywhere: quadratic on a long line, and ambiguous)
_ROW = re.compile(r"(\d+)(?:\s*(?:-->|->|=>)\s*|\s+)(\d+)\s+(\S+)\s+(\S+)")
_TOTALS = re.compile(r"Totals?(?:\s*:\s*|\s+)(\S+)\s+(\S+)", re.IGNORECASE)  # no two adjacent \s*: quadratic
_IPM_COMMAND = re.compile(r"#\s*command\s*:", re.IGNORECASE)


def looks_like(lines: list[str]) -> bool:
    """Native statistics or Intel's IPM summary (to refuse it clearly)."""
    for raw in lines[:400]:
        text = raw.strip()
        if PROCESS_RE.fullmatch(text) or text == "Data Transfers" or "MPI Communication Statistics" in text:
            return True
    return is_ipm(lines)


def is_ipm(lines: list[str]) -> bool:
    head = lines[:60]
    return (any(_IPM_COMMAND.match(line.strip()) for line in head)
            and any("mpi_tasks" in line for line in head))


def _rule(text: str, char: str) -> bool:
    return len(text) >= 3 and set(text) == {char}


def load(path, n_ranks: int | None = None, lines: list[str] | None = None) -> CommMatrix:
    lines = read_lines(path) if lines is None else lines
    if is_ipm(lines):
        raise file_error(path, None, "Intel MPI IPM summary (I_MPI_STATS=ipm): it has no per-destination "
                                     "volumes; rerun with I_MPI_STATS=1 (native statistics)")
    trip: Triplets | None = None
    job = None
    sections: dict[int, int] = {}  # process -> line of its section header
    tables: set[int] = set()
    current = None
    state = "out"  # out -> header -> rows -> totals -> out
    table_line = 0
    sum_mb, sum_n = 0.0, 0

    for no, raw in enumerate(lines, 1):
        text = raw.strip()
        section = PROCESS_RE.fullmatch(text)
        if section:
            if state != "out":
                raise _cut(path, no, current, table_line)
            p = parse_rank(path, no, section.group(1), "process")
            size = parse_count(path, no, section.group(2), "process count")
            if job is None:
                job = job_size(path, n_ranks, size, "the statistics are of", no)
                trip = Triplets(job)
            elif size != job:
                raise file_error(path, no, f"process {p} of {size}, but the first section says {job} ranks")
            if p >= job:
                raise file_error(path, no, f"process {p} is not in [0, {job})")
            if p in sections:
                raise file_error(path, no, f"a second section for process {p} (the first is at line "
                                           f"{sections[p]}): two runs in one file?")
            sections[p], current = no, p
            continue
        if state == "out":
            if text == "Data Transfers":
                if current is None:
                    raise file_error(path, no, "a Data Transfers table before any '~~~~ Process P of N' line")
                if current in tables:
                    raise file_error(path, no, f"a second Data Transfers table for process {current}")
                state, table_line, sum_mb, sum_n = "header", no, 0.0, 0
            continue
        if not text:
            continue
        if state == "header":
            if text.split()[:2] == ["Src", "Dst"]:
                continue
            if _rule(text, "-"):
                state = "rows"
                continue
            if not _ROW.fullmatch(text):
                raise file_error(path, no, "expected the 'Src Dst Amount(MB) Transfers' header of the "
                                           "Data Transfers table")
            state = "rows"
        if state == "rows":
            if _rule(text, "="):
                state = "totals"
                continue
            if _TOTALS.fullmatch(text):
                state = "totals"
            else:
                row = _ROW.fullmatch(text)
                if not row:
                    raise file_error(path, no, f"'{shown(text, 60)}' is not a row 'SRC --> DST AMOUNT(MB) TRANSFERS' "
                                               f"of the Data Transfers table of process {current}")
                src = parse_rank(path, no, row.group(1), "source process")
                dst = parse_rank(path, no, row.group(2), "destination process")
                if src != current:
                    raise file_error(path, no, f"a row from process {src} in the table of process {current}")
                mb = parse_float(path, no, row.group(3), "amount (MB)")
                transfers = parse_count(path, no, row.group(4), "transfer count")
                if mb * MB > INT64_MAX:  # 1e308 MB: no float to round, and no int64 to hold it
                    raise file_error(path, no, f"amount {shown(row.group(3))} MB does not fit in 64 bits of bytes")
                trip.add(path, no, src, dst, transfers, round(mb * MB))
                sum_mb += mb
                sum_n += transfers
                continue
        # state == "totals"
        totals = _TOTALS.fullmatch(text)
        if not totals:
            raise file_error(path, no, f"expected the Totals line of the Data Transfers table of process "
                                       f"{current}, got '{shown(text, 60)}'")
        total_mb = parse_float(path, no, totals.group(1), "total amount (MB)")
        total_n = parse_count(path, no, totals.group(2), "total transfer count")
        # Every amount has 7 significant digits: a relative error of 5e-7 each.
        if total_n != sum_n or abs(total_mb - sum_mb) > 2e-6 * (total_mb + sum_mb) + 1e-12:
            raise file_error(path, no, f"the Totals ({totals.group(1)} MB, {total_n} transfers) are not the "
                                       f"sum of the rows ({sum_mb:.6e} MB, {sum_n} transfers)")
        tables.add(current)
        state = "out"

    if state != "out":
        raise _cut(path, len(lines), current, table_line)
    if job is None:
        raise file_error(path, None, "no '~~~~ Process P of N' section: not Intel MPI native statistics "
                                     "(I_MPI_STATS=1 or more)")
    missing = [p for p in range(job) if p not in sections]
    if missing:
        raise file_error(path, len(lines), f"no section for process {missing[0]} of {job} "
                                           f"({len(missing)} missing): truncated file?")
    for p in range(job):
        if p not in tables:
            raise file_error(path, sections[p], f"process {p} has no Data Transfers table: truncated file, "
                                                "or statistics without point-to-point transfers")
    return trip.matrix(job, source_text("intel-mpi-stats", path, NOTE), path)


def _cut(path, no: int, process, table_line: int):
    return file_error(path, no, f"the Data Transfers table of process {process} (line {table_line}) ends "
                                "without its Totals line: truncated file?")
