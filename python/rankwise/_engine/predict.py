"""ctypes declarations of the predictor (rankwise_predict.h): its network, collective options,
simulation results and functions; rankwise.predict calls them."""

from __future__ import annotations

import ctypes as C
from functools import lru_cache

from rankwise._engine import core as engine

i32p, i64p, f64p = C.POINTER(C.c_int32), C.POINTER(C.c_int64), C.POINTER(C.c_double)


class CCollOptions(C.Structure):
    _fields_ = [
        ("root", C.c_int32),
        ("segment", C.c_int64),
        ("radix", C.c_int32),
        ("gamma", C.c_double),
        ("eager_threshold", C.c_int64),
    ]


class CSimResult(C.Structure):
    _fields_ = [
        ("time", C.c_double),
        ("transfers", C.c_int64),
        ("events", C.c_int64),
        ("rate_updates", C.c_int64),
        ("rank_span", C.c_double),
    ]


class CPnetModelOptions(C.Structure):
    _fields_ = [
        ("fill_missing", C.c_int),
        ("node_caps", C.c_int),
        ("overheads", C.c_int),
        ("send_overhead", C.c_double),
        ("recv_overhead", C.c_double),
    ]


class CPnetView(C.Structure):
    _fields_ = [
        ("n_nodes", C.c_int32),
        ("alpha", f64p),
        ("beta", f64p),
        ("overhead", f64p),
        ("recv_overhead", f64p),
        ("inject", f64p),
        ("eject", f64p),
        ("knee", C.c_int64),
        ("alpha_large", f64p),
        ("beta_large", f64p),
        ("sharing", C.c_int),
        ("n_links", C.c_int32),
        ("duplex", f64p),
    ]


@lru_cache(maxsize=1)
def predict_lib() -> C.CDLL:
    """librankwise with the predictor's functions declared."""
    so = engine.matrix_lib()
    vp = C.c_void_p
    so.rw_pnet_create.argtypes = [C.c_int32, f64p, f64p, C.POINTER(vp)]
    so.rw_pnet_free.argtypes = [vp]
    so.rw_pnet_free.restype = None
    so.rw_pnet_set_overhead.argtypes = [vp, f64p]
    so.rw_pnet_set_recv_overhead.argtypes = [vp, f64p]
    so.rw_pnet_set_sharing.argtypes = [vp, C.c_int]
    so.rw_pnet_set_protocol.argtypes = [vp, C.c_int64, f64p, f64p]
    so.rw_pnet_set_node_caps.argtypes = [vp, f64p, f64p]
    so.rw_pnet_set_node_duplex.argtypes = [vp, f64p]
    so.rw_pnet_add_link.argtypes = [vp, C.c_double, C.c_int64, i32p, i32p, i32p]
    so.rw_pnet_add_link_shares.argtypes = [vp, C.c_double, C.c_int64, i32p, i32p, f64p, i32p]
    so.rw_pnet_link_shares.argtypes = [vp, C.c_int32, f64p]
    so.rw_pnet_set_placement.argtypes = [vp, C.c_int32, i32p]
    so.rw_pnet_model_options_default.restype = CPnetModelOptions
    so.rw_pnet_from_model.argtypes = [engine.ModelPtr, C.c_int32, i32p, i32p, C.POINTER(CPnetModelOptions),
                                      i64p, i32p, C.POINTER(vp)]
    so.rw_pnet_view_of.argtypes = [vp, C.POINTER(CPnetView)]
    so.rw_pnet_link.argtypes = [vp, C.c_int32, f64p, i64p, i32p, i32p]
    so.rw_pnet_link_confirmed.argtypes = [vp, C.c_int32]
    so.rw_pnet_set_link_confirmed.argtypes = [vp, C.c_int32, C.c_int]
    so.rw_pnet_take_overheads.argtypes = [vp, f64p, f64p]
    so.rw_sched_free.argtypes = [vp]
    so.rw_sched_free.restype = None
    so.rw_sched_collective.argtypes = [C.c_char_p, C.c_char_p, C.c_int32, C.c_double,
                                       C.POINTER(CCollOptions), C.POINTER(vp)]
    so.rw_sched_traffic.argtypes = [engine.MatrixPtr, C.c_double, C.POINTER(vp)]
    so.rw_sched_n_transfers.argtypes = [vp]
    so.rw_sched_n_transfers.restype = C.c_int64
    so.rw_simulate_from.argtypes = [vp, vp, C.c_int, f64p, C.POINTER(CSimResult), f64p]
    so.rw_collective_algorithms.argtypes = [C.c_char_p]
    so.rw_collective_algorithms.restype = C.c_char_p
    so.rw_coll_options_default.restype = CCollOptions
    for name, nargs in (("rw_hockney", 3), ("rw_loggp", 4)):
        getattr(so, name).argtypes = [C.c_double] * nargs
        getattr(so, name).restype = C.c_double
    so.rw_luo_bruck.argtypes = [C.c_int64, C.c_double, C.c_double, C.c_double]
    so.rw_luo_pairwise.argtypes = [C.c_int64, C.c_double, C.c_double, C.c_double]
    so.rw_luo_wait.argtypes = [C.c_int32, C.c_double]
    so.rw_luo_contention.argtypes = [C.c_int64, C.c_double, C.c_double, C.c_double, C.c_double,
                                     C.c_int32, C.c_int32, C.c_double, C.c_double]
    for name in ("rw_luo_bruck", "rw_luo_pairwise", "rw_luo_wait", "rw_luo_contention"):
        getattr(so, name).restype = C.c_double
    so.rw_sched_create.argtypes = [C.c_int32, C.POINTER(vp)]
    so.rw_sched_add.argtypes = [vp, C.c_int32, C.c_int32, C.c_double, C.c_double, C.c_int32,
                                C.POINTER(C.c_int64), C.POINTER(C.c_int64)]
    return so
