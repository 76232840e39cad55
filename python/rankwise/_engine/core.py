"""librankwise loaded and its core declared through ctypes (rankwise.h: model, matrix, names,
errors): the C engine stays the single implementation of the model file, fitting and grouping."""

from __future__ import annotations

import contextlib
import ctypes as C
from functools import lru_cache

from rankwise.util.errors import RankwiseError
from rankwise.util.paths import engine_library

# The engine's binary interface these declarations are written for (rankwise.h,
# RW_ABI_VERSION): structure layouts below and function signatures.
ABI_VERSION = 9
TEXT_MAX = 255  # bytes of a source, pattern or node name (RW_TEXT_MAX)


class Stat(C.Structure):
    _fields_ = [
        ("min", C.c_double),
        ("median", C.c_double),
        ("max", C.c_double),
        ("jitter", C.c_double),
        ("count", C.c_int32),
    ]


class ProbeSettings(C.Structure):
    _fields_ = [
        ("mode", C.c_int),
        ("repetitions", C.c_int32),
        ("rounds", C.c_int32),
        ("warmup", C.c_int32),
        ("timeout", C.c_double),
        ("time_budget", C.c_double),
    ]


class CLink(C.Structure):
    _fields_ = [
        ("name", C.c_char * 256),
        ("capacity", C.c_double),
        ("n_from", C.c_int32),
        ("n_to", C.c_int32),
        ("from_", C.POINTER(C.c_int32)),
        ("to", C.POINTER(C.c_int32)),
    ]


class CSpread(C.Structure):
    _fields_ = [
        ("name", C.c_char * 256),
        ("low", C.c_double),
        ("median", C.c_double),
        ("high", C.c_double),
        ("noise", C.c_double),
        ("times", C.c_int32),
    ]


class CHop(C.Structure):
    _fields_ = [("from_", C.c_int32), ("to", C.c_int32), ("capacity", C.c_double)]


class CModel(C.Structure):
    _fields_ = [
        ("n_nodes", C.c_int32),
        ("node_names", C.POINTER(C.c_char_p)),
        ("ranks_per_node", C.POINTER(C.c_int32)),
        ("n_sizes", C.c_int32),
        ("sizes", C.POINTER(C.c_int64)),
        ("settings", ProbeSettings),
        ("source", C.c_char * 256),
        ("created", C.c_double),
        ("duration", C.c_double),
        ("pair_stats", C.POINTER(Stat)),
        ("alpha", C.POINTER(C.c_double)),
        ("beta", C.POINTER(C.c_double)),
        ("measured_at", C.POINTER(C.c_double)),
        ("pair_state", C.POINTER(C.c_uint8)),
        ("intra_stats", C.POINTER(Stat)),
        ("intra_alpha", C.POINTER(C.c_double)),
        ("intra_beta", C.POINTER(C.c_double)),
        ("intra_state", C.POINTER(C.c_uint8)),
        ("overhead", C.POINTER(C.c_double)),
        ("inject", C.POINTER(C.c_double)),
        ("eject", C.POINTER(C.c_double)),
        ("knee", C.c_int64),
        ("alpha_large", C.POINTER(C.c_double)),
        ("beta_large", C.POINTER(C.c_double)),
        ("group_of", C.POINTER(C.c_int32)),
        ("n_links", C.c_int32),
        ("links", C.POINTER(CLink)),
        ("node_alpha", C.c_double * 4),  # inside the node, by level (format 3)
        ("node_beta", C.c_double * 4),
        ("recv_overhead", C.POINTER(C.c_double)),  # format 4
        ("n_spreads", C.c_int32),  # format 5
        ("spreads", C.POINTER(CSpread)),
        ("duplex", C.POINTER(C.c_double)),  # format 6
        ("n_hops", C.c_int32),  # format 7
        ("hops", C.POINTER(CHop)),
    ]


ModelPtr = C.POINTER(CModel)


@lru_cache(maxsize=1)
def lib() -> C.CDLL:
    """Load librankwise once and declare the signatures used from Python."""
    path = engine_library()
    so = C.CDLL(str(path))
    try:
        abi = so.rw_abi_version
    except AttributeError:
        abi = None
    found = abi() if abi is not None else None
    if found != ABI_VERSION:
        raise RankwiseError(
            f"{path}: the C engine has ABI version {found if found is not None else '(none)'}, "
            f"this Python package needs {ABI_VERSION}: rebuild and reinstall rankwise "
            "(make build) so that both come from the same sources")
    so.rw_last_error.restype = C.c_char_p
    so.rw_version.restype = C.c_char_p
    for kind in ("status", "pair_state", "probe_mode"):
        getattr(so, f"rw_{kind}_name").restype = C.c_char_p
        getattr(so, f"rw_{kind}_name").argtypes = [C.c_int]
        getattr(so, f"rw_{kind}_from_name").argtypes = [C.c_char_p]
    so.rw_model_create.argtypes = [
        C.c_int,
        C.POINTER(C.c_char_p),
        C.POINTER(C.c_int32),
        C.c_int,
        C.POINTER(C.c_int64),
        C.POINTER(ModelPtr),
    ]
    so.rw_model_free.argtypes = [ModelPtr]
    so.rw_model_free.restype = None
    so.rw_model_read.argtypes = [C.c_char_p, C.POINTER(ModelPtr)]
    so.rw_model_write.argtypes = [ModelPtr, C.c_char_p]
    so.rw_model_fit_pair.argtypes = [ModelPtr, C.c_int]
    so.rw_model_fit_intra.argtypes = [ModelPtr, C.c_int]
    so.rw_model_fit_knee.argtypes = [ModelPtr]
    so.rw_model_merge.argtypes = [ModelPtr, ModelPtr]
    so.rw_model_groups.argtypes = [ModelPtr, C.POINTER(C.c_int32)]
    so.rw_model_latency_noisy.argtypes = [ModelPtr]
    so.rw_model_add_link.argtypes = [ModelPtr, C.c_char_p, C.c_double, C.c_int32, C.POINTER(C.c_int32),
                                     C.c_int32, C.POINTER(C.c_int32)]
    so.rw_model_add_hop.argtypes = [ModelPtr, C.c_int32, C.c_int32, C.c_double]
    so.rw_model_add_spread.argtypes = [ModelPtr, C.c_char_p, C.c_double, C.c_double, C.c_double, C.c_double,
                                       C.c_int32]
    so.rw_fit_hockney.argtypes = [
        C.POINTER(C.c_double),
        C.POINTER(C.c_double),
        C.c_int,
        C.POINTER(C.c_double),
        C.POINTER(C.c_double),
    ]
    f64p = C.POINTER(C.c_double)
    so.rw_drift_strengths.argtypes = [C.c_int64] + [f64p] * 6 + [C.c_double, f64p]
    so.rw_drift_beyond.argtypes = [C.c_double, C.c_double]
    so.rw_drift_beyond.restype = C.c_int
    return so


def drift_strengths(lo_a, med_a, hi_a, lo_b, med_b, hi_b, threshold: float):
    """Per figure |log(after / before)| where the round trips changed beyond
    their spread and threshold (rw_drift_strengths, rankwise.h), else -1."""
    import numpy as np

    arrays = [np.ascontiguousarray(x, dtype=np.float64) for x in (lo_a, med_a, hi_a, lo_b, med_b, hi_b)]
    out = np.empty(arrays[0].shape, dtype=np.float64)
    f64p = C.POINTER(C.c_double)
    check(lib().rw_drift_strengths(out.size, *(x.ctypes.data_as(f64p) for x in arrays), float(threshold),
                                   out.ctypes.data_as(f64p)))
    return out


def drift_beyond(ratio: float, threshold: float) -> bool:
    """A figure measured once (no spread) changed by this ratio (rw_drift_beyond)."""
    return bool(lib().rw_drift_beyond(float(ratio), float(threshold)))


def enum_value(kind: str, name: str, so: C.CDLL | None = None) -> int:
    """Value of the engine's enumeration `kind` (rw_<kind>_from_name) for
    `name`: positions are never copied into Python."""
    so = so or lib()
    value = getattr(so, f"rw_{kind}_from_name")(name.encode())
    if value < 0:
        raise RankwiseError(f"the C engine knows no {kind.replace('_', ' ')} '{name}'")
    return value


def enum_names(kind: str, so: C.CDLL | None = None) -> tuple[str, ...]:
    """Every name of the engine's enumeration `kind`, in value order."""
    so = so or lib()
    get, names = getattr(so, f"rw_{kind}_name"), []
    while (name := get(len(names))) is not None:
        names.append(name.decode())
    return tuple(names)


@lru_cache(maxsize=None)
def status_ok() -> int:
    return enum_value("status", "ok")


def check(status: int) -> None:
    """Raise the engine's one-line message when a call failed."""
    if status != status_ok():
        raise RankwiseError(lib().rw_last_error().decode(errors="replace"))


def version() -> str:
    return lib().rw_version().decode()


# ---------------------------------------------------------------------------
# Communication matrix (engine/src/matrix.c, matrix_io.c): declared apart
# from lib() so the model's declarations stay as they are; both share one CDLL.


class CCollCall(C.Structure):
    """rw_coll_call: a group of collective calls (op crosses by name)."""
    _fields_ = [("op", C.c_int32), ("comm", C.c_int32), ("root", C.c_int32),
                ("bytes", C.c_int64), ("calls", C.c_int64)]


class CMatrix(C.Structure):
    _fields_ = [
        ("n_ranks", C.c_int32),
        ("nnz", C.c_int64),
        ("row_start", C.POINTER(C.c_int64)),
        ("dst", C.POINTER(C.c_int32)),
        ("msgs", C.POINTER(C.c_int64)),
        ("bytes", C.POINTER(C.c_int64)),
        ("source", C.c_char * 256),
        ("pattern", C.c_char * 256),
        ("n_comms", C.c_int32),
        ("comm_start", C.POINTER(C.c_int64)),
        ("comm_ranks", C.POINTER(C.c_int32)),
        ("n_colls", C.c_int64),
        ("colls", C.POINTER(CCollCall)),
        ("colls_dropped", C.c_int64),
    ]


MatrixPtr = C.POINTER(CMatrix)


@lru_cache(maxsize=1)
def matrix_lib() -> C.CDLL:
    """librankwise with the communication-matrix functions declared."""
    so = lib()
    i32p, i64p = C.POINTER(C.c_int32), C.POINTER(C.c_int64)
    so.rw_matrix_create.argtypes = [C.c_int32, C.c_int64, i32p, i32p, i64p, i64p, C.POINTER(MatrixPtr)]
    so.rw_matrix_free.argtypes = [MatrixPtr]
    so.rw_matrix_free.restype = None
    so.rw_matrix_read.argtypes = [C.c_char_p, C.POINTER(MatrixPtr)]
    so.rw_matrix_write.argtypes = [MatrixPtr, C.c_char_p]
    so.rw_matrix_symmetrize.argtypes = [MatrixPtr, C.POINTER(MatrixPtr)]
    so.rw_matrix_set_collectives.argtypes = [MatrixPtr, C.c_int32, i64p, i32p, C.c_int64,
                                             C.POINTER(CCollCall), C.c_int64]
    so.rw_coll_op_name.argtypes = [C.c_int]
    so.rw_coll_op_name.restype = C.c_char_p
    so.rw_coll_op_from_name.argtypes = [C.c_char_p]
    return so


@lru_cache(maxsize=1)
def collective_ops() -> tuple[str, ...]:
    """The collective operations the engine knows, in its order (rw_coll_op_name)."""
    so, names = matrix_lib(), []
    while (name := so.rw_coll_op_name(len(names))) is not None:
        names.append(name.decode())
    return tuple(names)


@contextlib.contextmanager
def interruptible():
    """Inside: SIGINT and SIGTERM end the process at once, as they would any program. Python runs
    its handlers only between bytecodes, so a prediction minutes long inside the engine would
    ignore them; for pure computation (no file being written, no job launched) the default
    action loses nothing. Outside (and in other threads): the handlers as they were."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    saved = {}
    for signum in (signal.SIGINT, signal.SIGTERM):
        current = signal.getsignal(signum)
        if current is not signal.SIG_IGN:  # nohup and background jobs keep ignoring them
            saved[signum] = current
            signal.signal(signum, signal.SIG_DFL)
    try:
        yield
    finally:
        for signum, handler in saved.items():
            signal.signal(signum, handler)
