"""ctypes declarations of the engine's collective tuning (rankwise_coll_tune.h) and rules
reader (rankwise_coll_rules.h); rankwise.coll.selection calls them."""

from __future__ import annotations

import ctypes as C
from functools import lru_cache

NAME_MAX = 40  # RW_COLL_NAME_MAX


class CTree(C.Structure):
    _fields_ = [
        ("n_ranks", C.c_int32),
        ("root", C.c_int32),
        ("parent", C.POINTER(C.c_int32)),
        ("first_child", C.POINTER(C.c_int32)),
        ("child", C.POINTER(C.c_int32)),
    ]


class CTuneOptions(C.Structure):
    _fields_ = [
        ("eager_limit", C.c_int64),
        ("gamma", C.c_double),
        ("min_gain", C.c_double),
        ("max_evals", C.c_int32),
        ("start_tree", C.c_void_p),  # const rw_tree *: borrowed for the call
    ]


class CCandidate(C.Structure):
    _fields_ = [
        ("algorithm", C.c_char * NAME_MAX),
        ("source", C.c_char * NAME_MAX),
        ("segment", C.c_int64),
        ("time", C.c_double),
        ("tree", C.POINTER(CTree)),
    ]


class CDecision(C.Structure):
    _fields_ = [
        ("n_candidates", C.c_int32),
        ("candidates", C.POINTER(CCandidate)),
        ("chosen", C.c_int32),
        ("gain", C.c_double),
    ]


class CChoice(C.Structure):
    _fields_ = [
        ("algorithm", C.c_char_p),
        ("segment", C.c_int64),
        ("tree", C.POINTER(CTree)),
    ]


OMPI_MAX = 8  # RW_COLL_OMPI_MAX


class COmpiAlg(C.Structure):
    _fields_ = [
        ("name", C.c_char * NAME_MAX),
        ("id", C.c_int32),
        ("segment", C.c_int64),
        ("time", C.c_double),
    ]


class COmpiChoice(C.Structure):
    _fields_ = [
        ("n", C.c_int32),
        ("alg", COmpiAlg * OMPI_MAX),
        ("chosen", C.c_int32),
        ("gain", C.c_double),
    ]


@lru_cache(maxsize=1)
def tune_lib() -> C.CDLL:
    from rankwise._engine.predict import predict_lib  # the predictor's declarations first

    so = predict_lib()
    vp = C.c_void_p
    so.rw_tune_options_default.restype = CTuneOptions
    so.rw_coll_decide.argtypes = [vp, C.c_char_p, C.c_int32, C.c_double, C.POINTER(CTuneOptions),
                                  C.POINTER(C.POINTER(CDecision))]
    so.rw_coll_decision_free.argtypes = [C.POINTER(CDecision)]
    so.rw_coll_trinary_order.argtypes = [vp, C.POINTER(C.c_int32)]
    so.rw_coll_multiring_order.argtypes = [vp, C.POINTER(C.c_int32)]
    so.rw_coll_decision_free.restype = None
    so.rw_coll_ompi_algorithm.argtypes = [C.c_char_p, C.c_int32, C.c_double]
    so.rw_coll_ompi_algorithm.restype = C.c_char_p
    so.rw_coll_ompi_choose.argtypes = [vp, C.c_char_p, C.c_double, C.POINTER(CTuneOptions), C.POINTER(COmpiChoice)]
    so.rw_coll_ompi_collective_id.argtypes = [C.c_char_p]
    so.rw_coll_ompi_collective_id.restype = C.c_int32
    dp = C.POINTER(C.c_double)
    so.rw_verdict_keep.argtypes = [dp, C.c_int, dp, C.c_int, C.c_double]
    so.rw_verdict_keep.restype = C.c_int
    so.rw_coll_rules_read.argtypes = [C.c_char_p, C.POINTER(vp)]
    so.rw_coll_rules_free.argtypes = [vp]
    so.rw_coll_rules_free.restype = None
    so.rw_coll_rules_comm_size.argtypes = [vp]
    so.rw_coll_rules_comm_size.restype = C.c_int32
    so.rw_coll_rules_count.argtypes = [vp]
    so.rw_coll_rules_count.restype = C.c_int32
    so.rw_coll_rules_trinary_order.argtypes = [vp]
    so.rw_coll_rules_trinary_order.restype = C.POINTER(C.c_int32)
    so.rw_coll_rules_ring_order.argtypes = [vp]
    so.rw_coll_rules_ring_order.restype = C.POINTER(C.c_int32)
    so.rw_coll_rules_lookup.argtypes = [vp, C.c_char_p, C.c_int32, C.c_int32, C.c_int64, C.POINTER(CChoice)]
    i32p = C.POINTER(C.c_int32)
    so.rw_tree_from_parents.argtypes = [C.c_int32, C.c_int32, i32p, i32p, C.POINTER(C.POINTER(CTree))]
    so.rw_tree_free.argtypes = [C.POINTER(CTree)]
    so.rw_tree_free.restype = None
    so.rw_sched_tree.argtypes = [C.c_char_p, C.POINTER(CTree), C.c_double, C.c_int64, vp, C.POINTER(vp)]
    return so


def verdict_keep(choice, own, margin: float) -> bool:
    """The library's verdict (rw_verdict_keep, rankwise_coll_tune.h): every
    time of the choice below (1 - margin) times every time of the MPI's own."""
    import numpy as np

    c = np.ascontiguousarray(choice, dtype=np.float64)
    o = np.ascontiguousarray(own, dtype=np.float64)
    dp = C.POINTER(C.c_double)
    return bool(tune_lib().rw_verdict_keep(c.ctypes.data_as(dp), len(c), o.ctypes.data_as(dp), len(o), margin))
