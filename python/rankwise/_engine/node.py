"""ctypes declarations of the node functions (rankwise_node.h): a node's topology, its costs
by level, the placement of its ranks on cores; rankwise.model.node calls them."""

from __future__ import annotations

import ctypes as C
from functools import lru_cache

from rankwise._engine import core as engine
from rankwise.util.errors import RankwiseError

i32p, i64p, f64p = C.POINTER(C.c_int32), C.POINTER(C.c_int64), C.POINTER(C.c_double)


class CNodeDevice(C.Structure):
    _fields_ = [
        ("name", C.c_char * 64),
        ("kind", C.c_char * 16),
        ("pci", C.c_char * 32),
        ("package", C.c_int32),
        ("domain", C.c_int32),
    ]


class CNodeTopology(C.Structure):
    _fields_ = [
        ("n_packages", C.c_int32),
        ("n_domains", C.c_int32),
        ("n_caches", C.c_int32),
        ("n_cores", C.c_int32),
        ("n_pus", C.c_int32),
        ("package_of", i32p),
        ("domain_of", i32p),
        ("cache_of", i32p),
        ("core_in_package", i32p),
        ("cpu_of", i32p),
        ("pus_of", i32p),
        ("cache_level", i32p),
        ("cache_cores", i32p),
        ("cache_bytes", i64p),
        ("domain_bytes", i64p),
        ("source", C.c_char * 256),
        ("n_devices", C.c_int32),
        ("devices", C.POINTER(CNodeDevice)),
    ]


class CNodeCosts(C.Structure):
    _fields_ = [("alpha", C.c_double * 4), ("beta", C.c_double * 4)]


TopologyPtr = C.POINTER(CNodeTopology)


@lru_cache(maxsize=1)
def lib() -> C.CDLL:
    """librankwise with the node functions declared."""
    so = engine.matrix_lib()
    if not hasattr(so, "rw_node_topology_load"):
        raise RankwiseError("the C engine has no node topology functions: rebuild and reinstall rankwise (make build)")
    so.rw_node_topology_load.argtypes = [C.c_char_p, C.c_char_p, C.POINTER(TopologyPtr)]
    so.rw_node_topology_free.argtypes = [TopologyPtr]
    so.rw_node_topology_free.restype = None
    so.rw_node_topology_export.argtypes = [C.c_char_p, C.c_char_p, C.c_char_p]
    so.rw_node_costs_default.restype = CNodeCosts
    so.rw_node_costs_check.argtypes = [C.POINTER(CNodeCosts)]
    so.rw_node_level_name.argtypes = [C.c_int]
    so.rw_node_level_name.restype = C.c_char_p
    so.rw_node_level_from_name.argtypes = [C.c_char_p]
    args = [engine.MatrixPtr, C.c_int32, i32p, TopologyPtr, C.POINTER(CNodeCosts)]
    so.rw_node_place.argtypes = args + [i32p]
    so.rw_node_place_cost.argtypes = args + [i32p, f64p]
    so.rw_node_domain_cut.argtypes = [engine.MatrixPtr, C.c_int32, i32p, TopologyPtr, i32p, i64p, i64p]
    return so
