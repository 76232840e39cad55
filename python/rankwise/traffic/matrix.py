"""The communication matrix in Python: who sends how much to whom.

A job of N ranks is described by a sparse directed matrix: entry (src, dst)
holds the messages and bytes rank src sends to rank dst. The C engine is the
one implementation of its invariants (entries sorted by (src, dst), unique,
never empty, totals within int64) and of the text file format (docs/reference/formats.md,
"Communication matrix"); this module holds the same entries as numpy COO
arrays and copies them across. ``.npz`` files are a numpy alternative.

Beside the traffic a matrix may hold the collective calls of the run
(``collectives``, rankwise.traffic.collective_calls.CollectiveCall), grouped by
communicator, operation, root and size: a profile records them, the
`collective` pattern makes its one call; the predictor costs them by what
their algorithm sends. The engine keeps them canonical too (rankwise.h,
rw_matrix_set_collectives).
"""

from __future__ import annotations

import ctypes as C
from os import PathLike, fspath
from pathlib import Path

import numpy as np

from rankwise._engine import core as engine
from rankwise.traffic.collective_calls import CollectiveCall
from rankwise.util.errors import RankwiseError
from rankwise.util.files import prepare_output, write_through_temporary
from rankwise.util.inputs import check_input
from rankwise.util.numbers import bounded_int, shown

NPZ_VERSION = 2  # the text format's version (RW_MATRIX_FORMAT_VERSION); 1 still reads
NPZ_FORMAT = f"rankwise-matrix {NPZ_VERSION}"
MATRIX_SUFFIXES = (".rwc", ".npz")  # what a verb's -o may name: the text format or numpy's
TEXT_MAX = 255  # bytes of source / pattern, as in the C struct
DENSE_MAX_RANKS = 8192  # to_dense(): 8192^2 int64 is already 512 MiB


class CommMatrix:
    """Messages and bytes per ordered pair of ranks, as sorted COO arrays.

    ``src``/``dst`` (int32) are sorted by (src, dst) without repeats;
    ``msgs``/``bytes`` (int64) are the totals of each pair over the whole
    run. Pairs without traffic are absent; zero-byte messages count.
    ``pattern`` is the generator spec that made the matrix (empty when it
    was measured), ``source`` free text about where it comes from.
    ``collectives`` are the run's collective calls in canonical order
    (communicator, op, root, bytes; equal groups merged, a communicator
    of every rank in order written ranks=None); ``collectives_dropped``
    counts calls a profiler could not group (its table was full).
    """

    __slots__ = ("n_ranks", "src", "dst", "msgs", "bytes", "source", "pattern", "collectives",
                 "collectives_dropped")

    def __init__(self, n_ranks, src, dst, msgs, bytes, *, source: str = "", pattern: str = "",
                 collectives=(), collectives_dropped: int = 0):
        """Triplets in any order; repeated pairs are summed (by the C engine,
        which also refuses ranks outside [0, n_ranks) and negative volumes).
        collectives: CollectiveCall records, made canonical by the engine,
        which refuses a member outside [0, n_ranks) or twice in one
        communicator, a root outside its communicator."""
        _check_text("source", source)
        _check_text("pattern", pattern)
        n_ranks = _int_scalar("n_ranks", n_ranks)
        arrays = [
            _int_array(name, a, dt)
            for name, a, dt in (("src", src, np.int32), ("dst", dst, np.int32),
                                ("msgs", msgs, np.int64), ("bytes", bytes, np.int64))
        ]
        if len({a.size for a in arrays}) != 1:
            raise RankwiseError("src, dst, msgs and bytes must have the same length "
                                f"(got {', '.join(str(a.size) for a in arrays)})")
        ptr = _create_c(n_ranks, *arrays)
        try:
            _set_collectives_c(ptr, collectives, collectives_dropped)
            _fill_from_c(self, ptr)
        finally:
            engine.matrix_lib().rw_matrix_free(ptr)
        self.source, self.pattern = source, pattern

    # ------------------------------------------------------------ building
    @classmethod
    def from_dense(cls, bytes, msgs=None, *, source: str = "", pattern: str = "", collectives=(),
                   collectives_dropped: int = 0) -> "CommMatrix":
        """From an N x N array of bytes (and of message counts; by default
        one message wherever bytes > 0)."""
        volume = np.asarray(bytes)
        if volume.ndim != 2 or volume.shape[0] != volume.shape[1]:
            raise RankwiseError(f"a dense matrix must be square, got shape {volume.shape}")
        count = (volume > 0).astype(np.int64) if msgs is None else np.asarray(msgs)
        if count.shape != volume.shape:
            raise RankwiseError(f"msgs has shape {count.shape}, bytes {volume.shape}")
        src, dst = np.nonzero((volume != 0) | (count != 0))
        return cls(volume.shape[0], src, dst, count[src, dst], volume[src, dst],
                   source=source, pattern=pattern, collectives=collectives,
                   collectives_dropped=collectives_dropped)

    def to_dense(self, what: str = "bytes", max_ranks: int = DENSE_MAX_RANKS) -> np.ndarray:
        """N x N int64 array of "bytes" or "msgs" (for small N: it is N^2)."""
        if what not in ("bytes", "msgs"):
            raise RankwiseError(f"to_dense: '{what}' is not bytes or msgs")
        if self.n_ranks > max_ranks:
            raise RankwiseError(f"to_dense: {self.n_ranks} ranks is more than {max_ranks}; "
                                "use the sparse arrays")
        out = np.zeros((self.n_ranks, self.n_ranks), dtype=np.int64)
        out[self.src, self.dst] = getattr(self, what)
        return out

    def symmetrized(self) -> "CommMatrix":
        """The undirected traffic graph: (i, j) and (j, i) both hold the sum
        of both directions; traffic of a rank to itself is left out. The
        collective calls are kept (the ranks are the same)."""
        so = engine.matrix_lib()
        ptr = self._to_c()
        out = engine.MatrixPtr()
        try:
            engine.check(so.rw_matrix_symmetrize(ptr, C.byref(out)))
        finally:
            so.rw_matrix_free(ptr)
        try:
            return _from_c(out)
        finally:
            so.rw_matrix_free(out)

    # ---------------------------------------------------------- properties
    @property
    def nnz(self) -> int:
        return int(self.src.size)

    @property
    def total_msgs(self) -> int:
        return int(self.msgs.sum())

    @property
    def total_bytes(self) -> int:
        return int(self.bytes.sum())

    @property
    def row_start(self) -> np.ndarray:
        """CSR offsets: the entries of rank i are [row_start[i], row_start[i+1])."""
        return np.concatenate(([0], np.cumsum(np.bincount(self.src, minlength=self.n_ranks))))

    def out_degree(self) -> np.ndarray:
        """Distinct destinations per rank."""
        return np.bincount(self.src, minlength=self.n_ranks)

    def in_degree(self) -> np.ndarray:
        """Distinct sources per rank."""
        return np.bincount(self.dst, minlength=self.n_ranks)

    def sent_bytes(self) -> np.ndarray:
        """Bytes each rank sends (exact int64: bincount's float weights are not)."""
        out = np.zeros(self.n_ranks, dtype=np.int64)
        np.add.at(out, self.src, self.bytes)
        return out

    def received_bytes(self) -> np.ndarray:
        out = np.zeros(self.n_ranks, dtype=np.int64)
        np.add.at(out, self.dst, self.bytes)
        return out

    def get(self, src: int, dst: int) -> tuple[int, int]:
        """(msgs, bytes) from src to dst, (0, 0) without traffic."""
        if not (0 <= src < self.n_ranks and 0 <= dst < self.n_ranks):
            raise RankwiseError(f"rank pair {src} -> {dst} is not in a matrix of {self.n_ranks} ranks")
        # Sorted by (src, dst): find the row, then the column inside it.
        lo, hi = np.searchsorted(self.src, [src, src + 1])
        k = lo + int(np.searchsorted(self.dst[lo:hi], dst))
        if k < hi and self.dst[k] == dst:
            return int(self.msgs[k]), int(self.bytes[k])
        return 0, 0

    def __eq__(self, other) -> bool:
        if not isinstance(other, CommMatrix):
            return NotImplemented
        return (self.n_ranks == other.n_ranks and self.source == other.source
                and self.pattern == other.pattern and self.collectives == other.collectives
                and self.collectives_dropped == other.collectives_dropped
                and all(np.array_equal(getattr(self, a), getattr(other, a))
                        for a in ("src", "dst", "msgs", "bytes")))

    __hash__ = None  # mutable arrays

    def __repr__(self) -> str:
        what = f", pattern={self.pattern!r}" if self.pattern else ""
        if self.collectives:
            what += f", collectives={len(self.collectives)}"
        return f"CommMatrix(n_ranks={self.n_ranks}, nnz={self.nnz}, total_bytes={self.total_bytes}{what})"

    def require_traffic(self, where: str) -> "CommMatrix":
        """self, or an error when it holds no bytes at all: mapping needs
        traffic, and an all-zero profile is what an application that
        failed but exited 0 leaves behind."""
        if self.total_bytes == 0:
            raise RankwiseError(f"{where}: the matrix holds no traffic ({self.nnz} pairs, 0 bytes): "
                                "nothing to map (did the application fail?)", exit_code=1)
        return self

    # ----------------------------------------------------------------- I/O
    @classmethod
    def load(cls, path: str | PathLike) -> "CommMatrix":
        """Read a matrix: ``.npz`` with numpy, anything else as the text format (C engine)."""
        check_input(path)  # numpy and the C reader would block on a FIFO
        if _is_npz(path):
            return _load_npz(path)
        so = engine.matrix_lib()
        ptr = engine.MatrixPtr()
        engine.check(so.rw_matrix_read(fspath(path).encode(), C.byref(ptr)))
        try:
            return _from_c(ptr)
        finally:
            so.rw_matrix_free(ptr)

    def save(self, path: str | PathLike) -> None:
        """Write atomically: ``.npz`` with numpy, anything else as text (C engine)."""
        # Checked for both formats: a file must read back as what was saved.
        try:
            _check_text("source", self.source)
            _check_text("pattern", self.pattern)
        except RankwiseError as exc:
            raise RankwiseError(f"{fspath(path)}: cannot write: {exc}") from None
        path = prepare_output(path)  # a link: the file it points to
        if _is_npz(path):
            _save_npz(self, path)
            return
        so = engine.matrix_lib()
        ptr = self._to_c()
        try:
            engine.check(so.rw_matrix_write(ptr, fspath(path).encode()))
        finally:
            so.rw_matrix_free(ptr)

    # -------------------------------------------------------- C round trip
    def _to_c(self) -> engine.MatrixPtr:
        _check_text("source", self.source)  # attributes may have been changed since __init__
        _check_text("pattern", self.pattern)
        ptr = _create_c(self.n_ranks, self.src, self.dst, self.msgs, self.bytes)
        try:
            _set_collectives_c(ptr, self.collectives, self.collectives_dropped)
        except RankwiseError:
            engine.matrix_lib().rw_matrix_free(ptr)
            raise
        ptr.contents.source = self.source.encode()
        ptr.contents.pattern = self.pattern.encode()
        return ptr


def _create_c(n_ranks: int, src, dst, msgs, bytes) -> engine.MatrixPtr:
    src, dst = (np.ascontiguousarray(a, dtype=np.int32) for a in (src, dst))
    msgs, bytes = (np.ascontiguousarray(a, dtype=np.int64) for a in (msgs, bytes))
    if not -(2**31) <= n_ranks < 2**31:
        raise RankwiseError(f"a communication matrix needs 1 to 67108864 ranks (got {n_ranks})")
    i32p, i64p = C.POINTER(C.c_int32), C.POINTER(C.c_int64)
    ptr = engine.MatrixPtr()
    engine.check(engine.matrix_lib().rw_matrix_create(
        n_ranks, src.size, src.ctypes.data_as(i32p), dst.ctypes.data_as(i32p),
        msgs.ctypes.data_as(i64p), bytes.ctypes.data_as(i64p), C.byref(ptr)))
    return ptr


def _collective_arrays(collectives) -> tuple[list, list, list]:
    """(comm_start, comm_ranks, calls) for the engine: one communicator per
    distinct member tuple, -1 for ranks=None."""
    if isinstance(collectives, (str, bytes)) or not hasattr(collectives, "__iter__"):
        raise RankwiseError(f"collectives must be a list of CollectiveCall, got {type(collectives).__name__}")
    comm_of: dict[tuple[int, ...], int] = {}
    start, ranks, calls = [0], [], []
    for call in collectives:
        if not isinstance(call, CollectiveCall):
            raise RankwiseError(f"collectives must hold CollectiveCall records, got {type(call).__name__}")
        comm = -1
        if call.ranks is not None:
            members = tuple(_int_scalar("a communicator member", r) for r in call.ranks)
            if members not in comm_of:
                comm_of[members] = len(comm_of)
                ranks.extend(members)
                start.append(len(ranks))
            comm = comm_of[members]
        for name in ("bytes", "calls", "root"):
            value = _int_scalar(f"{call.op} {name}", getattr(call, name))
            if not 0 <= value < 2**63:
                raise RankwiseError(f"{call.op}: {name} {value} does not fit in 64 bits")
        if call.root >= 2**31:
            raise RankwiseError(f"{call.op}: root {call.root} is not a rank of its communicator")
        calls.append((engine.matrix_lib().rw_coll_op_from_name(call.op.encode()), comm, int(call.root),
                      int(call.bytes), int(call.calls)))
    return start, ranks, calls


def _set_collectives_c(ptr: engine.MatrixPtr, collectives, dropped) -> None:
    dropped = _int_scalar("collectives_dropped", dropped)
    if not 0 <= dropped < 2**63:
        raise RankwiseError(f"collectives_dropped must be in [0, 2**63), got {dropped}")
    start, ranks, calls = _collective_arrays(collectives)
    if not calls and not dropped:
        return
    if any(not -(2**31) <= r < 2**31 for r in ranks):
        bad = next(r for r in ranks if not -(2**31) <= r < 2**31)
        raise RankwiseError(f"communicator member {bad} is not a rank of the matrix")
    c_start = np.asarray(start, dtype=np.int64)
    c_ranks = np.asarray(ranks if ranks else [0], dtype=np.int32)
    c_calls = (engine.CCollCall * max(len(calls), 1))(*(engine.CCollCall(*c) for c in calls))
    engine.check(engine.matrix_lib().rw_matrix_set_collectives(
        ptr, len(start) - 1, c_start.ctypes.data_as(C.POINTER(C.c_int64)),
        c_ranks.ctypes.data_as(C.POINTER(C.c_int32)), len(calls), c_calls, dropped))


def _collectives_from_c(m: engine.CMatrix) -> list[CollectiveCall]:
    so = engine.matrix_lib()
    comms = []
    if m.n_comms:
        start = np.ctypeslib.as_array(m.comm_start, shape=(m.n_comms + 1,))
        members = np.ctypeslib.as_array(m.comm_ranks, shape=(int(start[-1]),))
        comms = [tuple(int(r) for r in members[start[c]:start[c + 1]]) for c in range(m.n_comms)]
    out = []
    for k in range(m.n_colls):
        x = m.colls[k]
        out.append(CollectiveCall(so.rw_coll_op_name(x.op).decode(), int(x.bytes), int(x.calls), int(x.root),
                                  None if x.comm < 0 else comms[x.comm]))
    return out


def _fill_from_c(obj: CommMatrix, ptr: engine.MatrixPtr) -> None:
    m = ptr.contents
    n, nnz = m.n_ranks, m.nnz
    row_start = np.ctypeslib.as_array(m.row_start, shape=(n + 1,))
    obj.n_ranks = int(n)
    obj.src = np.repeat(np.arange(n, dtype=np.int32), np.diff(row_start))
    copy = lambda p, dt: (np.ctypeslib.as_array(p, shape=(nnz,)).copy() if nnz  # noqa: E731
                          else np.empty(0, dtype=dt))
    obj.dst = copy(m.dst, np.int32)
    obj.msgs = copy(m.msgs, np.int64)
    obj.bytes = copy(m.bytes, np.int64)
    obj.source = m.source.decode(errors="replace")
    obj.pattern = m.pattern.decode(errors="replace")
    obj.collectives = _collectives_from_c(m)
    obj.collectives_dropped = int(m.colls_dropped)


def _from_c(ptr: engine.MatrixPtr) -> CommMatrix:
    """A CommMatrix holding a copy of a C matrix (already canonical: no second pass)."""
    obj = CommMatrix.__new__(CommMatrix)
    _fill_from_c(obj, ptr)
    return obj


# --------------------------------------------------------------- checking
def _check_text(name: str, text: str) -> None:
    """The engine's text rule (docs/reference/formats.md, "Texts"): what the C reader
    refuses is never written, so every file read back equals what was saved."""
    if not isinstance(text, str):
        raise RankwiseError(f"matrix {name} must be text, got {type(text).__name__}")
    try:
        raw = text.encode()
    except UnicodeEncodeError:
        raise RankwiseError(f"matrix {name} is not valid UTF-8 text") from None
    bad = next((c for c in text if ord(c) < 0x20 or ord(c) == 0x7F), None)
    if bad is not None:
        what = "line break" if bad in "\r\n" else "control character"
        raise RankwiseError(f"matrix {name} holds a {what} (0x{ord(bad):02x})")
    if len(raw) > TEXT_MAX:
        raise RankwiseError(f"matrix {name} is longer than {TEXT_MAX} bytes: {text[:40]}...")
    if text != text.strip(" "):
        # The file format trims the text: refuse what would not read back the same.
        raise RankwiseError(f"matrix {name} '{text}' starts or ends with blanks")


def _int_scalar(name: str, value) -> int:
    try:
        as_int = int(value)
    except (TypeError, ValueError):
        raise RankwiseError(f"{name} must be an integer, got {value!r}") from None
    if as_int != value:
        raise RankwiseError(f"{name} must be an integer, got {value!r}")
    return as_int


def _int_array(name: str, values, dtype) -> np.ndarray:
    """A 1-D array of dtype holding exactly the given integers (no silent
    wrap-around of 2**32 to 0, no truncation of 1.5 to 1)."""
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise RankwiseError(f"{name} must be a 1-D array, got shape {arr.shape}")
    if arr.dtype == dtype:
        return arr
    if (arr.size and arr.dtype.kind not in "iuf") or (arr.dtype.kind == "f" and not np.isfinite(arr).all()):
        raise RankwiseError(f"{name} must hold integers, got {arr.dtype}")
    with np.errstate(invalid="ignore"):  # out-of-range floats: caught just below
        cast = arr.astype(dtype)
    if arr.size and not np.array_equal(cast, arr):
        bad = arr[cast != arr][0].item()
        raise RankwiseError(f"{name}: {bad} is not an integer that fits in {np.dtype(dtype).name}")
    return cast


# -------------------------------------------------------------------- npz
def _is_npz(path) -> bool:
    return Path(path).suffix.lower() == ".npz"


def _save_npz(m: CommMatrix, path) -> None:
    """Uncompressed (zlib would cost seconds on millions of entries); atomic
    like the engine's writer: a complete 'path.tmp.PID' renamed over path."""
    start, ranks, calls = _collective_arrays(m.collectives)
    calls = np.asarray(calls, dtype=np.int64).reshape(-1, 5)
    names = [c.op for c in m.collectives]
    write_through_temporary(Path(path), lambda f: np.savez(
        f, format=np.array(NPZ_FORMAT), n_ranks=np.int64(m.n_ranks), src=m.src, dst=m.dst, msgs=m.msgs,
        bytes=m.bytes, source=np.array(m.source), pattern=np.array(m.pattern),
        coll_op=np.array(names, dtype="U16"), coll_comm=calls[:, 1].astype(np.int32),
        coll_root=calls[:, 2].astype(np.int32), coll_bytes=calls[:, 3], coll_calls=calls[:, 4],
        comm_start=np.asarray(start, dtype=np.int64), comm_ranks=np.asarray(ranks, dtype=np.int32),
        coll_dropped=np.int64(m.collectives_dropped)))


def _load_npz(path) -> CommMatrix:
    try:
        with np.load(path, allow_pickle=False) as z:
            data = {k: z[k] for k in z.files}
    except FileNotFoundError:
        raise RankwiseError(f"{path}: cannot open: No such file or directory") from None
    except PermissionError:
        raise RankwiseError(f"{path}: cannot open: Permission denied") from None
    except EOFError:  # numpy's answer to an empty file
        raise RankwiseError(f"{path}: not a numpy .npz file (the file is empty)") from None
    except Exception as exc:  # noqa: BLE001 - numpy and zipfile raise many kinds on a damaged archive
        raise RankwiseError(f"{path}: not a numpy .npz file ({type(exc).__name__}: {_first_line(exc)})") from None
    if not isinstance(data, dict):
        raise RankwiseError(f"{path}: a single numpy array (.npy), not a rankwise .npz matrix")
    odd = next((k for k, v in data.items() if not isinstance(v, np.ndarray)), None)
    if odd is not None:  # numpy hands a member that is not a .npy back as its raw bytes
        raise RankwiseError(f"{path}: member '{shown(odd)}' is not a numpy array (.npy): not a rankwise .npz matrix")
    fmt = _npz_text(path, data, "format")
    kind, _, version = fmt.partition(" ")
    try:
        number = bounded_int(version, 1 << 31) if kind == "rankwise-matrix" else None
    except ValueError:
        number = None if not version.isascii() or not version.isdigit() else 1 << 31
    if number is None:
        raise RankwiseError(f"{path}: not a rankwise communication matrix (no 'format' entry "
                            f"'{NPZ_FORMAT}')")
    if number > NPZ_VERSION:
        raise RankwiseError(f"{path}: matrix format version {shown(version)} is newer than this rankwise "
                            f"({NPZ_VERSION})")
    missing = [k for k in ("n_ranks", "src", "dst", "msgs", "bytes") if k not in data]
    if missing:
        raise RankwiseError(f"{path}: no '{missing[0]}' array")
    n_ranks = data["n_ranks"]
    if n_ranks.shape != () or n_ranks.dtype.kind not in "iu":
        raise RankwiseError(f"{path}: 'n_ranks' must be one integer, got {n_ranks.dtype} of shape {n_ranks.shape}")
    try:
        calls, dropped = _npz_collectives(data, number)
        return CommMatrix(n_ranks.item(), data["src"], data["dst"], data["msgs"],
                          data["bytes"], source=_npz_text(path, data, "source"),
                          pattern=_npz_text(path, data, "pattern"), collectives=calls,
                          collectives_dropped=dropped)
    except RankwiseError as exc:
        raise RankwiseError(f"{path}: {exc}") from None


_NPZ_COLL = ("coll_op", "coll_comm", "coll_root", "coll_bytes", "coll_calls", "comm_start", "comm_ranks",
             "coll_dropped")


def _npz_collectives(data: dict, version: int) -> tuple[list[CollectiveCall], int]:
    """The collective calls of an .npz (version 2; none in version 1)."""
    present = [k for k in _NPZ_COLL if k in data]
    if version < 2:
        if present:
            raise RankwiseError(f"'{present[0]}' needs matrix format version 2 (the file says {version})")
        return [], 0
    if not present:
        return [], 0
    missing = [k for k in _NPZ_COLL if k not in data]
    if missing:
        raise RankwiseError(f"no '{missing[0]}' array (the collective calls are incomplete)")
    ops = data["coll_op"]
    if ops.ndim != 1 or (ops.size and ops.dtype.kind != "U"):
        raise RankwiseError(f"'coll_op' must be a list of names, got {ops.dtype} of shape {ops.shape}")
    comm, root, nbytes, calls = (_int_array(k, data[k], np.int64)
                                 for k in ("coll_comm", "coll_root", "coll_bytes", "coll_calls"))
    if len({ops.size, comm.size, root.size, nbytes.size, calls.size}) != 1:
        raise RankwiseError("coll_op, coll_comm, coll_root, coll_bytes and coll_calls must have the same length")
    start = _int_array("comm_start", data["comm_start"], np.int64)
    ranks = _int_array("comm_ranks", data["comm_ranks"], np.int64)
    if (start.size == 0 or start[0] != 0 or (np.diff(start) < 0).any() or start[-1] != ranks.size):
        raise RankwiseError("'comm_start' must rise from 0 to the length of 'comm_ranks'")
    dropped = data["coll_dropped"]
    if dropped.shape != () or dropped.dtype.kind not in "iu":
        raise RankwiseError(f"'coll_dropped' must be one integer, got {dropped.dtype} of shape {dropped.shape}")
    comms = [tuple(int(r) for r in ranks[start[c]:start[c + 1]]) for c in range(start.size - 1)]
    out = []
    for k in range(ops.size):
        c = int(comm[k])
        if not -1 <= c < len(comms):
            raise RankwiseError(f"collective call {k} ({ops[k]}): communicator {c} is not in [-1, {len(comms)})")
        out.append(CollectiveCall(str(ops[k]), int(nbytes[k]), int(calls[k]), int(root[k]),
                                  None if c < 0 else comms[c]))
    return out, dropped.item()


def _npz_text(path, data: dict, key: str) -> str:
    """A text entry of an .npz: one string (absent: empty)."""
    value = data.get(key)
    if value is None:
        return ""
    if value.shape != () or value.dtype.kind != "U":
        raise RankwiseError(f"{path}: '{key}' must be one string, got {value.dtype} of shape {value.shape}")
    return str(value)


def _first_line(exc: BaseException) -> str:
    return shown(str(exc).splitlines()[0] if str(exc) else "damaged", 80)
