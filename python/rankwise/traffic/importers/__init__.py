"""Importers: an application's traffic from what MPI tools write, as one
CommMatrix (rankwise.traffic.matrix).

    from rankwise.traffic.importers import load_comm
    m = load_comm("stats.txt")                    # format told by content
    m = load_comm("prof/", n_ranks=64)            # Open MPI monitoring files
    m = load_comm("pairs.csv", format="list")

One module per format; docs/reference/formats.md ("Importers") describes each input
precisely. Every importer reads its whole input before building the
matrix, so an error anywhere (rank out of range, negative or NaN volume,
truncated file, foreign file) is one ``path:line: message`` RankwiseError
and never a partial matrix. A rank pair given several times is summed.
"""

from __future__ import annotations

from os import PathLike, fspath
from pathlib import Path

from rankwise.util.errors import RankwiseError, UsageError, file_error
from rankwise.traffic.importers import dense, intel, matrix_market, native, openmpi, plain
from rankwise.traffic.importers._common import TooLarge, check_ranks_option, read_bytes, read_lines
from rankwise.traffic.matrix import CommMatrix

# name -> one-line description (the order is the one shown to users)
FORMATS: dict[str, str] = {
    "intel": "Intel MPI native statistics (I_MPI_STATS, stats.txt)",
    "openmpi": "Open MPI monitoring (pml_monitoring_enable, NAME.RANK.prof files: a directory, "
               "a glob or one file)",
    "list": "lines 'SRC DST BYTES [MSGS]' (also 'i j value' triplets; blanks or commas)",
    "dense": "N lines of N numbers (bytes), optionally N more (messages)",
    "mtx": "Matrix Market (%%MatrixMarket matrix coordinate|array ...), 1-based",
    "npz": "rankwise .npz matrix",
    "rwc": "rankwise text matrix (rankwise-matrix 1 or 2)",
}
ALIASES = {
    "intel-mpi": "intel", "impi": "intel", "i_mpi_stats": "intel", "stats": "intel",
    "ompi": "openmpi", "open-mpi": "openmpi", "monitoring": "openmpi", "prof": "openmpi",
    "triplets": "list", "sparse": "list", "csv": "list", "pairs": "list",
    "matrix": "dense", "mat": "dense",
    "matrix-market": "mtx", "matrixmarket": "mtx", "mm": "mtx",
    "text": "rwc",
}

__all__ = ["FORMATS", "load_comm", "detect_format", "format_name"]


def format_name(format: str) -> str:
    """The canonical name of a format (or "auto"); unknown names are refused
    with the list of known ones."""
    key = str(format).strip().lower()
    if key == "auto" or key in FORMATS:
        return key
    if key in ALIASES:
        return ALIASES[key]
    raise UsageError(f"unknown format '{format}'; known formats: {_known()}")


def load_comm(path: str | PathLike | list, format: str = "auto", *, n_ranks: int | None = None,
              kinds: str | None = None) -> CommMatrix:
    """Read a communication matrix from any supported input (a path; or a
    list of paths: Open MPI monitoring files, as a shell expands a glob).

    ``format`` is "auto" (told by content, then by name) or one of FORMATS
    (or an alias); ``n_ranks`` is the job size when known (--ranks): ranks
    outside [0, n_ranks) are errors, and a file that states its size must
    agree. ``kinds`` chooses the Open MPI monitoring lines to import
    (default "EISR"; openmpi only). Raises RankwiseError
    ``path[:line]: message`` on anything wrong."""
    fmt = format_name(format)
    n = check_ranks_option(n_ranks)
    if isinstance(path, (list, tuple)):
        if len(path) == 1:
            path = path[0]
        elif fmt in ("auto", "openmpi"):
            # several files (an unquoted glob): only monitoring output comes in pieces
            return openmpi.load(list(path), n, kinds)
        else:
            raise UsageError(f"several inputs are only read as Open MPI monitoring files, not as '{fmt}'")
    lines = None
    if fmt == "auto":
        fmt, lines = _detect(path)
    if kinds is not None and fmt != "openmpi":
        raise UsageError(f"--kinds applies to Open MPI monitoring files, not to '{fmt}' input")
    if fmt == "openmpi":
        return openmpi.load(path, n, kinds)
    if fmt == "npz":
        return native.load_npz(path, n)
    if fmt == "rwc":
        return native.load_rwc(path, n)
    if Path(path).is_dir():
        raise file_error(path, None, "is a directory (only Open MPI monitoring input may be one)")
    module = {"intel": intel, "list": plain, "dense": dense, "mtx": matrix_market}[fmt]
    return module.load(path, n, lines)


def detect_format(path: str | PathLike) -> str:
    """The format load_comm(path) would read (RankwiseError when it cannot tell)."""
    return _detect(path)[0]


def _known() -> str:
    return ", ".join(FORMATS)


def _detect(path) -> tuple[str, list[str] | None]:
    target = Path(path)
    if target.is_dir():
        return "openmpi", None
    if not target.exists():
        if openmpi.is_glob(fspath(path)):
            return "openmpi", None
        raise file_error(path, None, "cannot open: No such file or directory")
    data = read_bytes(path)
    if data[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        return "npz", None
    try:
        lines = read_lines(path, data)
    except TooLarge:
        raise
    except RankwiseError as exc:
        raise RankwiseError(f"{exc}: cannot tell its format (known: {_known()})") from None
    first = next((line.strip() for line in lines if line.strip()), "")
    if first.startswith("rankwise-matrix"):
        return "rwc", None
    if first.lower().startswith(matrix_market.BANNER):
        return "mtx", lines
    if intel.looks_like(lines):
        return "intel", lines
    if openmpi.looks_like(lines):
        return "openmpi", None
    suffixes = [s.lower() for s in target.suffixes]
    ext = suffixes[-2] if suffixes[-1:] == [".gz"] and len(suffixes) > 1 else (suffixes[-1] if suffixes else "")
    by_name = {".mat": "dense", ".dense": "dense", ".mtx": "mtx", ".prof": "openmpi", ".rwc": "rwc",
               ".npz": "npz"}
    if ext in by_name:
        return by_name[ext], lines if by_name[ext] in ("dense", "mtx") else None
    return _numeric_layout(path, lines), lines


def _numeric_layout(path, lines: list[str]) -> str:
    """list or dense, from the shape of the numbers (the first few data
    lines are enough: only files of up to 8 lines can be ambiguous)."""
    data = []
    for no, raw in enumerate(lines, 1):
        text = raw.split("#", 1)[0].strip()
        if text:
            data.append((no, dense.split_fields(text)))
            if len(data) > 8:
                break
    if not data:
        raise file_error(path, None, f"no data (only comments or blank lines): cannot tell its format "
                                     f"(known: {_known()})")
    no, fields = data[0]
    if not _numbers(fields):
        if 3 <= len(fields) <= 4 and all(f.lower() in plain.ALIASES for f in fields):
            return "list"  # a header line naming the columns
        raise file_error(path, no, f"cannot tell the format of this file (known: {_known()}); "
                                   "give --format")
    width, rows = len(fields), len(data)
    if width in (3, 4):
        if rows in (width, 2 * width) and all(len(f) == width for _, f in data):
            raise file_error(path, None, f"{rows} lines of {width} numbers: a {width} x {width} dense matrix "
                                         "or a list of 'SRC DST BYTES [MSGS]'? give --format dense or list")
        return "list"
    return "dense"


def _numbers(fields: list[str]) -> bool:
    try:
        for f in fields:
            float(f)
    except ValueError:
        return False
    return bool(fields)

