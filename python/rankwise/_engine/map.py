"""ctypes declarations of the mapping engine (rankwise_map.h): its network, options and result;
rankwise.map.mapping calls them."""

from __future__ import annotations

import ctypes as C
from functools import lru_cache

from rankwise._engine import core as engine

i32p, i64p, f64p = C.POINTER(C.c_int32), C.POINTER(C.c_int64), C.POINTER(C.c_double)


class CNetwork(C.Structure):
    _fields_ = [("n_nodes", C.c_int32), ("slots", i32p), ("alpha", f64p), ("beta", f64p)]


class CMapOptions(C.Structure):
    _fields_ = [
        ("algorithm", C.c_int),
        ("objective", C.c_int),
        ("selection", C.c_int),
        ("seed", C.c_uint64),
        ("time_limit", C.c_double),
        ("grid", C.c_int32 * 3),
        ("periodic", C.c_int32),
        ("verbose", C.c_int32),
        ("min_gain", C.c_double),
        ("node", C.c_void_p),  # const rw_node_topology * (None: slots in rank order)
        ("node_costs", C.c_void_p),
    ]


class CMapResult(C.Structure):
    _fields_ = [
        ("n_ranks", C.c_int32),
        ("node_of", i32p),
        ("slot_of", i32p),
        ("cost", C.c_double),
        ("block_cost", C.c_double),
        ("start_cost", C.c_double),
        ("seconds", C.c_double),
        ("algorithm", C.c_int),
        ("n_selected", C.c_int32),
        ("grid_detected", C.c_int32),
    ]


NetworkPtr = C.POINTER(CNetwork)


@lru_cache(maxsize=1)
def lib() -> C.CDLL:
    """librankwise with the mapping functions declared."""
    so = engine.matrix_lib()
    so.rw_network_create.argtypes = [C.c_int32, i32p, C.POINTER(NetworkPtr)]
    so.rw_network_free.argtypes = [NetworkPtr]
    so.rw_network_free.restype = None
    so.rw_network_from_model.argtypes = [engine.ModelPtr, C.c_int32, i32p, i32p, C.c_int, i64p,
                                         C.POINTER(NetworkPtr)]
    so.rw_map.argtypes = [engine.MatrixPtr, NetworkPtr, C.POINTER(CMapOptions), C.POINTER(CMapResult)]
    so.rw_map_result_free.argtypes = [C.POINTER(CMapResult)]
    so.rw_map_result_free.restype = None
    so.rw_map_cost.argtypes = [engine.MatrixPtr, NetworkPtr, C.c_int, i32p, f64p]
    so.rw_map_cut.argtypes = [engine.MatrixPtr, i32p, C.c_int, i64p, i64p]
    so.rw_network_hierarchy.argtypes = [NetworkPtr, C.c_double, C.c_int32, i32p, i32p]
    so.rw_network_hierarchy.restype = C.c_int
    so.rw_decision_bar.argtypes = [C.c_double, C.c_int]
    so.rw_decision_bar.restype = C.c_double
    for kind in ("algorithm", "objective", "node_selection"):
        getattr(so, f"rw_{kind}_name").restype = C.c_char_p
        getattr(so, f"rw_{kind}_name").argtypes = [C.c_int]
        getattr(so, f"rw_{kind}_from_name").argtypes = [C.c_char_p]
    return so
