"""What every importer shares: reading a text file, checking numbers, and
collecting (src, dst, msgs, bytes) triplets that become a CommMatrix only
once the whole input has been read (an error anywhere means no matrix).

Every error names the file and, where there is one, the line:
``path:line: message`` (rankwise.util.errors.file_error)."""

from __future__ import annotations

import math
import re
import zlib
from bisect import bisect_right
from os import PathLike, fspath
from pathlib import Path

import numpy as np

from rankwise.util.errors import RankwiseError, UsageError, file_error
from rankwise.util.inputs import read_input
from rankwise.traffic.matrix import TEXT_MAX, CommMatrix
from rankwise.util.numbers import bounded_int, shown

INT64_MAX = 2**63 - 1
MAX_RANKS = 1 << 26  # RW_MATRIX_MAX_RANKS of the engine
GZIP_MAGIC = b"\x1f\x8b"
# What a compressed input may expand to: the text of a 1,000-rank job's full traffic (a million
# rows) is below it; a few hundred KB expanding to GBs (a gzip bomb, a damaged file) is refused
# while it is read, before its lines cost ~30 times their bytes in memory.
MAX_DECOMPRESSED = 128 << 20


class TooLarge(RankwiseError):
    """An input past what rankwise reads: its own cause, whatever was being tried."""


def decompress(path, data: bytes) -> bytes:
    """gzip `data` (one member or several, as `cat a.gz b.gz` makes) expanded, refused past
    MAX_DECOMPRESSED bytes or when damaged: one error naming the file."""
    out, size = [], 0
    try:
        while data:
            d = zlib.decompressobj(16 + zlib.MAX_WBITS)
            chunk = d.decompress(data, MAX_DECOMPRESSED + 1 - size)
            while True:
                size += len(chunk)
                if size > MAX_DECOMPRESSED:
                    raise TooLarge(str(file_error(path, None, f"expands to more than {MAX_DECOMPRESSED >> 20} "
                                                              "MiB uncompressed: not an input rankwise reads")))
                out.append(chunk)
                if not d.unconsumed_tail:
                    break
                chunk = d.decompress(d.unconsumed_tail, MAX_DECOMPRESSED + 1 - size)
            if not d.eof:
                raise EOFError("compressed file ended before the end-of-stream marker was reached")
            data = d.unused_data.lstrip(b"\x00")  # members may be padded with zeros
    except (OSError, EOFError, zlib.error) as exc:
        raise file_error(path, None, f"cannot decompress: {exc} (truncated .gz file?)") from None
    return b"".join(out)


# ------------------------------------------------------------------ files
def read_lines(path: str | PathLike, data: bytes | None = None) -> list[str]:
    """The lines of a text file (UTF-8, or gzip-compressed UTF-8), without
    their line ends. A file that is not text is refused, not guessed at.
    `data`: its bytes when already read (a pipe can be read only once)."""
    data = read_bytes(path) if data is None else data
    if data[:2] == GZIP_MAGIC:
        data = decompress(path, data)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise file_error(path, None, f"not a text file (byte {exc.start} is not UTF-8)") from None
    if "\x00" in text:
        raise file_error(path, None, "not a text file (it holds NUL bytes)")
    # Lines end at \n (CRLF accepted), as editors and 'grep -n' count them:
    # str.splitlines would also cut at form feeds and Unicode separators.
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def read_bytes(path: str | PathLike) -> bytes:
    return read_input(path)  # regular files and pipes; never blocks on a FIFO


def ends_with_newline(path: str | PathLike, data: bytes | None = None) -> bool:
    """Whether the (decompressed) file's last byte is a line end; an empty
    file counts as complete."""
    data = read_bytes(path) if data is None else data
    if data[:2] == GZIP_MAGIC:
        try:
            data = decompress(path, data)
        except RankwiseError:
            return False
    return not data or data.endswith((b"\n", b"\r"))


def strip_comment(line: str, marks: str = "#") -> str:
    """The line without a comment (from the first mark to the end) and
    without surrounding blanks."""
    for mark in marks:
        cut = line.find(mark)
        if cut >= 0:
            line = line[:cut]
    return line.strip()


_SPLIT = re.compile(r"[\s,;]+")


def split_fields(text: str) -> list[str]:
    """Fields separated by blanks, tabs, commas or semicolons (CSV without quotes)."""
    return [f for f in _SPLIT.split(text.strip()) if f]


def short_name(path: str | PathLike) -> str:
    return Path(fspath(path)).name or fspath(path)


def source_text(kind: str, path: str | PathLike, note: str = "") -> str:
    """'kind:file (note)', cut to the 255 bytes a matrix source holds."""
    text = f"{kind}:{short_name(path)}" + (f" ({note})" if note else "")
    text = " ".join(text.split())
    while len(text.encode()) > TEXT_MAX:
        text = text[:-1]
    return text.strip()


# ---------------------------------------------------------------- numbers
_INT_RE = re.compile(r"[+]?\d+")
_SIGNED_RE = re.compile(r"[+-]?\d+")  # a rank: '-1' is a number below 0, refused as such


def parse_rank(path, line: int, text: str, what: str = "rank", base: int = 0) -> int:
    """A rank written as decimal digits (base 1 for Matrix Market), as a
    0-based int."""
    if not _SIGNED_RE.fullmatch(text):
        raise file_error(path, line, f"{what} '{shown(text)}' is not a whole number")
    try:
        value = bounded_int(text, MAX_RANKS + base) - base
    except ValueError:
        value = MAX_RANKS  # refused just below, without converting thousands of digits
    if value < 0:
        raise file_error(path, line, f"{what} {shown(text)} is below {base}")
    if value >= MAX_RANKS:
        raise file_error(path, line, f"{what} {shown(text)} is beyond the {MAX_RANKS} ranks a matrix may hold")
    return value


def parse_count(path, line: int, text: str, what: str) -> int:
    """A volume: a whole number >= 0 that fits in 64 bits. Written as
    digits, or as a number with a fraction or exponent whose value is whole
    ('1e6', '2048.0'): tools that write floats are common."""
    if _INT_RE.fullmatch(text):
        try:
            return bounded_int(text, INT64_MAX)
        except ValueError:
            raise file_error(path, line, f"{what} {shown(text)} does not fit in 64 bits") from None
    value = parse_float(path, line, text, what)
    if value != math.floor(value):
        raise file_error(path, line, f"{what} {shown(text)} is not a whole number")
    if value > INT64_MAX:
        raise file_error(path, line, f"{what} {shown(text)} does not fit in 64 bits")
    return int(value)


def parse_float(path, line: int, text: str, what: str) -> float:
    """A finite number >= 0 (NaN, infinities and negative volumes are refused)."""
    try:
        value = float(text)
    except ValueError:
        raise file_error(path, line, f"{what} '{shown(text)}' is not a number") from None
    if math.isnan(value):
        raise file_error(path, line, f"{what} is NaN")
    if math.isinf(value):
        raise file_error(path, line, f"{what} is infinite")
    if value < 0:
        raise file_error(path, line, f"{what} {shown(text)} is negative")
    return value


def check_ranks_option(n_ranks) -> int | None:
    """--ranks N as given by a caller: None, or a whole number in [1, 2^26]."""
    if n_ranks is None:
        return None
    if isinstance(n_ranks, str) and _INT_RE.fullmatch(n_ranks.strip()):
        try:
            value = bounded_int(n_ranks.strip(), MAX_RANKS)
        except ValueError:
            raise RankwiseError(f"--ranks must be in [1, {MAX_RANKS}], got {shown(n_ranks.strip())}") from None
    elif isinstance(n_ranks, (int, np.integer)) and not isinstance(n_ranks, bool):
        value = int(n_ranks)
    else:
        raise UsageError(f"--ranks must be a whole number, got {n_ranks!r}")
    if not 1 <= value <= MAX_RANKS:
        raise UsageError(f"--ranks must be in [1, {MAX_RANKS}], got {value}")
    return value


# --------------------------------------------------------------- triplets
class Triplets:
    """Traffic read so far: parallel lists of src, dst, msgs, bytes, plus
    the file and line each came from, so that an out-of-range rank found
    only at the end (when the job size comes from the data) still names its
    line.

    ``n_ranks`` is the job size when known before reading; add() then checks
    ranks at once. Totals are summed exactly as Python ints: a file whose
    volumes overflow 64 bits is refused at the line where they do."""

    def __init__(self, n_ranks: int | None = None):
        self.n_ranks = n_ranks
        self.src: list[int] = []
        self.dst: list[int] = []
        self.msgs: list[int] = []
        self.bytes: list[int] = []
        self.lines: list[int] = []
        self._files: list[tuple[int, object]] = []  # (first entry, path) per run of one file
        self.total_msgs = 0
        self.total_bytes = 0

    def add(self, path, line: int, src: int, dst: int, msgs: int, nbytes: int) -> None:
        if self.n_ranks is not None:
            if src >= self.n_ranks:
                raise file_error(path, line, f"source rank {src} is not in [0, {self.n_ranks})")
            if dst >= self.n_ranks:
                raise file_error(path, line, f"destination rank {dst} is not in [0, {self.n_ranks})")
        if msgs == 0 and nbytes == 0:
            return  # adds nothing (the matrix format says the same)
        self.total_msgs += msgs
        self.total_bytes += nbytes
        if self.total_msgs > INT64_MAX or self.total_bytes > INT64_MAX:
            raise file_error(path, line, "the total volume exceeds 64 bits")
        if not self._files or self._files[-1][1] is not path:
            self._files.append((len(self.src), path))
        self.src.append(src)
        self.dst.append(dst)
        self.msgs.append(msgs)
        self.bytes.append(nbytes)
        self.lines.append(line)

    def __len__(self) -> int:
        return len(self.src)

    def where(self, k: int) -> tuple[object, int]:
        """(path, line) of entry k."""
        starts = [start for start, _ in self._files]
        return self._files[bisect_right(starts, k) - 1][1], self.lines[k]

    def max_rank(self) -> int:
        return max(max(self.src, default=-1), max(self.dst, default=-1))

    def check_ranks(self, n_ranks: int, hint: str = "") -> None:
        """Every rank below n_ranks, or an error at the first line that is not."""
        src, dst = np.asarray(self.src, dtype=np.int64), np.asarray(self.dst, dtype=np.int64)
        bad = np.flatnonzero((src >= n_ranks) | (dst >= n_ranks))
        if bad.size:
            k = int(bad[0])
            what, rank = ("source", self.src[k]) if self.src[k] >= n_ranks else ("destination", self.dst[k])
            path, line = self.where(k)
            raise file_error(path, line, f"{what} rank {rank} is not in [0, {n_ranks}){hint}")

    def matrix(self, n_ranks: int, source: str, path) -> CommMatrix:
        """The CommMatrix (repeated pairs summed by the engine)."""
        self.check_ranks(n_ranks)
        try:
            return CommMatrix(n_ranks, np.asarray(self.src, dtype=np.int32),
                              np.asarray(self.dst, dtype=np.int32),
                              np.asarray(self.msgs, dtype=np.int64),
                              np.asarray(self.bytes, dtype=np.int64), source=source)
        except RankwiseError as exc:
            raise file_error(path, None, str(exc)) from None


def job_size(path, given: int | None, found: int | None, what: str, line: int | None = None) -> int:
    """The job size: what the file says (found) and --ranks (given) must agree."""
    if found is not None and given is not None and found != given:
        raise file_error(path, line, f"{what} {found} ranks, but --ranks says {given}")
    size = found if found is not None else given
    if size is None:
        raise file_error(path, line, "no traffic and no job size: give --ranks N")
    if not 1 <= size <= MAX_RANKS:
        raise file_error(path, line, f"a job of {size} ranks is not in [1, {MAX_RANKS}]")
    return size
