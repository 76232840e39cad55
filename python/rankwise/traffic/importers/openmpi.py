"""Open MPI's communication monitoring (``--mca pml_monitoring_enable 1|2``,
components pml/coll/osc "monitoring", code in ompi/mca/common/monitoring).

With ``--mca pml_monitoring_enable_output 3 --mca pml_monitoring_filename
PREFIX`` every rank R writes ``PREFIX.R.prof`` at MPI_Finalize (phases
flushed through the ``pml_monitoring_flush`` MPI_T variable are written the
same way, ``NAME.R.prof``); output 1 or 2 prints the same lines on stdout
or stderr. Each rank lists what it sent, tab-separated:

    # POINT TO POINT
    E	1	0	4096 bytes	4 msgs sent	0,0,...,4,0      <- histogram of sizes (optional)
    I	1	0	96 bytes	12 msgs sent
    # OSC
    S	1	2	8192 bytes	1 msgs sent
    R	1	2	512 bytes	1 msgs sent
    # COLLECTIVES
    C	1	0	96 bytes	12 msgs sent
    D	MPI_COMM_WORLD	procs: 0,1,2,3
    O2A	1	0 bytes	0 msgs sent
    A2O	1	0 bytes	0 msgs sent
    A2A	1	96 bytes	12 msgs sent

A line ``KIND ME PEER B bytes M msgs sent`` is M messages of B bytes in
total between world ranks ME (whose file it is) and PEER:

- ``E``: messages of the PML with a tag >= 0: the application's
  point-to-point traffic with ``pml_monitoring_enable 2``; with ``1``
  every PML message (tags are not told apart), collectives included;
- ``I``: PML messages with a negative tag (``enable 2`` only): the
  point-to-point messages collective algorithms and the library itself
  send; collectives as they really cross the network;
- ``S``: one-sided data ME put or accumulated into PEER (ME -> PEER);
- ``R``: one-sided data ME got from PEER (PEER -> ME);
- ``C``: the coll component's own count of what ME's collectives sent to
  PEER; the same traffic as the I lines, counted one level higher.
- ``D`` and the ``O2A``/``A2O``/``A2A`` lines after it: per-communicator
  totals of one-to-all, all-to-one and all-to-all operations, without
  destinations.

By default E, I, S and R lines are imported (everything that crossed the
network, once); ``kinds`` chooses others ("E" alone: the application's
point-to-point only; "EC" instead of "EI": logical collective traffic).
D blocks are read (and checked) but never imported.

Inputs: a directory (every ``NAME.R.prof`` in it, all of one NAME), a glob
(``'prof/phase_1.*.prof'``), or one file (several ranks' lines concatenated,
e.g. aggregate_profile.pl's output or a captured stderr). When files are
named by rank: ranks are 0..R-1 with no gap, every line of a file is its
rank's, and no PEER is R or more (a missing last file would hide there).
A file must end with a line end, and its sections (``# POINT TO POINT``,
``# OSC``, ``# COLLECTIVES``, when present) must all be there: a cut file is
an error, not a smaller matrix.
"""

from __future__ import annotations

import glob as globmod
import re
from pathlib import Path

from rankwise.util.errors import UsageError, file_error
from rankwise.traffic.importers._common import (
    Triplets,
    ends_with_newline,
    job_size,
    parse_count,
    parse_rank,
    read_bytes,
    read_lines,
    source_text,
)
from rankwise.traffic.matrix import CommMatrix
from rankwise.util.numbers import shown

NAME = "openmpi"
DEFAULT_KINDS = "EISR"
KINDS = "EISRC"
SECTIONS = ("# POINT TO POINT", "# OSC", "# COLLECTIVES")

LINE_RE = re.compile(r"([EISRC])\s+(\d+)\s+(\d+)\s+(\d+)\s+bytes\s+(\d+)\s+msgs\s+sent(?:\s+([\d,]+))?\s*")
_AGG_RE = re.compile(r"(O2A|A2O|A2A)\s+(\d+)\s+(\d+)\s+bytes\s+(\d+)\s+msgs\s+sent\s*")
_D_PROCS = re.compile(r"[\d,\s]*")
RANK_FILE_RE = re.compile(r"(?P<stem>.+)\.(?P<rank>\d+)\.prof")


def looks_like(lines: list[str]) -> bool:
    for raw in lines[:200]:
        text = raw.strip()
        if text in SECTIONS or LINE_RE.fullmatch(text):
            return True
    return False


def is_glob(text: str) -> bool:
    return any(c in text for c in "*?[")


def load(path, n_ranks: int | None = None, kinds: str | None = None) -> CommMatrix:
    """path: a directory, a glob, a file, or a list of files (what a shell
    makes of an unquoted glob)."""
    kinds = _check_kinds(kinds)
    if isinstance(path, (list, tuple)):
        if len(path) == 1:
            path = path[0]
        else:
            for name in path:
                if not Path(name).is_file():
                    raise file_error(name, None, "is not a file (several inputs must all be monitoring files)")
            files = _named(path[0], sorted(Path(name) for name in path))
            return _finish(files, n_ranks, kinds, f"{Path(path[0]).parent}/{len(path)} files")
    target = Path(path)
    if target.is_dir():
        files = _rank_files_in(target)
        where = f"{target}/{files[0][0].name.rsplit('.', 2)[0]}.*.prof"
    elif not target.exists() and is_glob(str(path)):
        names = sorted(globmod.glob(str(path)))
        if not names:
            raise file_error(path, None, "no file matches this pattern")
        files = _named(path, [Path(n) for n in names])
        where = str(path)
    else:
        files = [(target, None)]
        where = str(path)
        _refuse_lone_rank_file(target, n_ranks)

    return _finish(files, n_ranks, kinds, where)


def _finish(files: list[tuple[Path, int | None]], n_ranks: int | None, kinds: str, where: str) -> CommMatrix:
    ranked = files[0][1] is not None
    if ranked:  # a gap in the ranks is seen before reading anything
        missing = sorted(set(range(len(files))) - {r for _, r in files})
        if missing:
            stem = files[0][0].name.rsplit(".", 2)[0]
            raise file_error(files[0][0].parent / f"{stem}.{missing[0]}.prof", None,
                             f"missing: the files are of ranks 0-{files[-1][1]} with no file for rank "
                             f"{missing[0]}")
    trip = Triplets(n_ranks if not ranked else None)
    for file, rank in files:
        _read(file, rank, kinds, trip)

    if ranked:
        n = job_size(where, n_ranks, len(files), "found files for")
        trip.check_ranks(n, f" (the run has files for ranks 0-{n - 1} only: are files missing?)")
    else:
        # with --ranks, add() has checked every rank already
        found = trip.max_rank() + 1 if len(trip) and n_ranks is None else None
        n = job_size(where, n_ranks, found, "the lines reach")
    note = "+".join(kinds) + " lines"
    return trip.matrix(n, source_text("openmpi-monitoring", where, note), where)


def _check_kinds(kinds: str | None) -> str:
    if kinds is None:
        return DEFAULT_KINDS
    text = "".join(dict.fromkeys(kinds.upper().replace(",", "").replace(" ", "")))
    bad = [k for k in text if k not in KINDS]
    if bad or not text:
        raise UsageError(f"monitoring line kinds '{kinds}': choose among {', '.join(KINDS)} "
                            f"(default {DEFAULT_KINDS})")
    if "I" in text and "C" in text:
        raise UsageError(f"monitoring line kinds '{kinds}': I and C count the same collective bytes "
                            "twice (I below the PML, C above it); choose one")
    return text


def _rank_files_in(folder: Path) -> list[tuple[Path, int]]:
    groups: dict[str, list[Path]] = {}
    for file in sorted(folder.iterdir()):
        m = RANK_FILE_RE.fullmatch(file.name)
        if m and file.is_file():
            groups.setdefault(m["stem"], []).append(file)
    if not groups:
        raise file_error(folder, None, "no Open MPI monitoring files (NAME.RANK.prof) in this directory")
    if len(groups) > 1:
        names = ", ".join(f"{stem}.*.prof" for stem in sorted(groups))
        raise file_error(folder, None, f"holds the monitoring of several runs or phases ({names}): "
                                       f"give one, e.g. '{folder}/{sorted(groups)[0]}.*.prof'")
    return _named(folder, next(iter(groups.values())))


def _named(origin, files: list[Path]) -> list[tuple[Path, int | None]]:
    """Files with the rank their name gives, sorted by rank; or, when the
    names give no ranks, the files as they are (each may hold any rank)."""
    ranks = [RANK_FILE_RE.fullmatch(f.name) for f in files]
    if all(ranks):
        stems = {m["stem"] for m in ranks}
        if len(stems) > 1:
            raise file_error(origin, None, f"mixes the files of several runs or phases "
                                           f"({', '.join(sorted(stems))})")
        out = sorted(((f, int(m["rank"])) for f, m in zip(files, ranks)), key=lambda fr: fr[1])
        for (f1, r1), (f2, r2) in zip(out, out[1:]):
            if r1 == r2:
                raise file_error(f2, None, f"a second file for rank {r2} (with {f1.name})")
        return out
    return [(f, None) for f in files]


def _refuse_lone_rank_file(file: Path, n_ranks: int | None) -> None:
    """One rank's file alone is a fraction of the job's traffic: refused
    when its siblings are next to it."""
    m = RANK_FILE_RE.fullmatch(file.name)
    if not m or not file.is_file():
        return
    siblings = [f for f in file.parent.glob(f"{globmod.escape(m['stem'])}.*.prof")
                if RANK_FILE_RE.fullmatch(f.name) and f != file]
    if siblings:
        raise file_error(file, None, f"is rank {m['rank']}'s file only, next to {len(siblings)} others: give "
                                     f"the directory or '{file.parent}/{m['stem']}.*.prof'")


def _read(file: Path, rank: int | None, kinds: str, trip: Triplets) -> None:
    data = read_bytes(file)
    lines = read_lines(file, data)
    if lines and not ends_with_newline(file, data):
        raise file_error(file, len(lines), "the last line has no line end: truncated file?")
    sections: list[str] = []  # section headers seen in the current block
    block_line = 0
    pending_d = 0  # O2A/A2O/A2A lines still due after a D line
    d_line = 0
    for no, raw in enumerate(lines, 1):
        text = raw.strip()
        if not text:
            continue
        if pending_d:
            agg = _AGG_RE.fullmatch(text)
            want = ("O2A", "A2O", "A2A")[3 - pending_d]
            if not agg or agg.group(1) != want:
                raise file_error(file, no, f"expected the {want} line of the D block at line {d_line}")
            _check_sender(file, no, rank, parse_rank(file, no, agg.group(2)))
            pending_d -= 1
            continue
        if text.startswith("#"):
            if text in SECTIONS:
                k = SECTIONS.index(text)
                if k == 0:
                    _check_sections(file, no - 1, sections, block_line)
                    sections, block_line = [text], no
                elif sections != list(SECTIONS[:k]):
                    raise file_error(file, no, f"'{shown(text)}' out of order (after "
                                               f"{', '.join(sections) or 'nothing'})")
                else:
                    sections.append(text)
            continue
        m = LINE_RE.fullmatch(text)
        if m:
            kind = m.group(1)
            me, peer = parse_rank(file, no, m.group(2)), parse_rank(file, no, m.group(3), "peer rank")
            nbytes, msgs = parse_count(file, no, m.group(4), "bytes"), parse_count(file, no, m.group(5), "messages")
            _check_sender(file, no, rank, me)
            if kind in kinds:
                src, dst = (peer, me) if kind == "R" else (me, peer)
                trip.add(file, no, src, dst, msgs, nbytes)
            continue
        if _is_d_line(text):
            pending_d, d_line = 3, no
            continue
        raise file_error(file, no, f"'{shown(text, 60)}' is not an Open MPI monitoring line "
                                   "('E|I|S|R|C ME PEER B bytes M msgs sent')")
    if pending_d:
        raise file_error(file, len(lines), f"the D block at line {d_line} is cut short: truncated file?")
    _check_sections(file, len(lines), sections, block_line)


def _is_d_line(text: str) -> bool:
    """'D COMM procs: 0,1,2' (split by hand: a lazy regex over the
    communicator name is quadratic on a long line of blanks)."""
    head, found, procs = text.rpartition("procs:")
    return bool(found) and text[:1] == "D" and text[1:2].isspace() and bool(_D_PROCS.fullmatch(procs))


def _check_sender(file: Path, no: int, rank: int | None, me: int) -> None:
    if rank is not None and me != rank:
        raise file_error(file, no, f"a line of rank {me} in the file of rank {rank}")


def _check_sections(file: Path, no: int, sections: list[str], block_line: int) -> None:
    if sections and len(sections) < len(SECTIONS):
        raise file_error(file, no, f"the output begun at line {block_line} has no "
                                   f"'{SECTIONS[len(sections)]}' section: truncated file?")

