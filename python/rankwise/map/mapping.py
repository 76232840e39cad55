"""Placing ranks on the measured network: Python face of the C mapping engine
(engine/include/rankwise_map.h). The engine does the work; this module
builds its inputs (the allocation's network, the traffic, the options) and
turns its answer into a Placement."""

from __future__ import annotations

import ctypes as C
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from rankwise._engine import core as engine
from rankwise._engine import map as map_engine
from rankwise._engine.map import CMapOptions, CMapResult, NetworkPtr, i32p
from rankwise.util.errors import RankwiseError, UsageError
from rankwise.traffic.matrix import CommMatrix
from rankwise.model.model import Model

# The names users give; their values come from the engine by name
# (rw_algorithm_from_name, ...), checked when the library is loaded.
ALGORITHMS = ("auto", "block", "greedy", "refine", "anneal", "exhaustive", "stencil", "torus", "multilevel")
OBJECTIVES = ("time", "bottleneck", "hop-bytes")
SELECTIONS = ("first", "greedy", "weighted", "all")
# hop-bytes is the time objective on a network of hop counts (Network.tree).
_ENGINE_OBJECTIVE = {"time": "time", "bottleneck": "bottleneck", "hop-bytes": "time"}


@lru_cache(maxsize=1)
def map_lib() -> C.CDLL:
    """librankwise with the mapping functions declared, every name offered to users checked."""
    so = map_engine.lib()
    # Every name offered to users must be one the engine knows.
    if engine.enum_names("algorithm", so) != ALGORITHMS:
        raise RankwiseError(f"the C engine's algorithms {engine.enum_names('algorithm', so)} are not "
                            f"this package's {ALGORITHMS}: rebuild and reinstall rankwise (make build)")
    for name in set(_ENGINE_OBJECTIVE.values()):
        engine.enum_value("objective", name, so)
    for name in SELECTIONS:
        engine.enum_value("node_selection", name, so)
    return so


_FILL_HINT = ", or allow filling missing pairs"


def _missing_hint(message: str, fill_missing: bool) -> str:
    """The engine's 'allow filling missing pairs' as the option that does it,
    or, when filling was asked for, why it could not help."""
    if _FILL_HINT not in message:
        return message
    if not fill_missing:
        return message.replace(_FILL_HINT, ", or give --allow-missing to cost them as the slowest measured pair")
    return message.replace(_FILL_HINT, "; --allow-missing cannot fill it: the model measured no pair between nodes")


def model_allocation(model: Model, hosts: Sequence[tuple[str, int]] | None):
    """(hosts, their model indices, their slots) of an allocation on a model; hosts=None: every
    node of the model, slots = the ranks it probed with."""
    if hosts is None:
        hosts = [(name, int(k)) for name, k in zip(model.names, model.ranks_per_node)]
    index = []
    for name, _ in hosts:
        k = model.names.index(name) if name in model.names else -1
        if k < 0:
            raise RankwiseError(f"node '{name}' of the allocation is not in the model "
                                f"(it has {model.n_nodes} nodes: probe it first)")
        index.append(k)
    idx = np.asarray(index, dtype=np.int32)
    slots = np.asarray([s for _, s in hosts], dtype=np.int32)
    return list(hosts), idx, slots


@dataclass
class Network:
    """The allocation a job may use: node names, slots, and the cost of a
    message between any two of them (alpha + bytes * beta; diagonal =
    intra-node). Built from a measured model, or from a static topology."""

    names: list[str]
    slots: np.ndarray  # int32
    alpha: np.ndarray  # n x n seconds
    beta: np.ndarray  # n x n seconds per byte
    filled: int = 0  # pairs the model lacked, filled with its slowest figures

    def __post_init__(self):
        n = len(self.names)
        self.slots = np.asarray(self.slots, dtype=np.int32)
        self.alpha = np.ascontiguousarray(self.alpha, dtype=np.float64)
        self.beta = np.ascontiguousarray(self.beta, dtype=np.float64)
        if len(set(self.names)) != n:
            dup = next(h for h in self.names if self.names.count(h) > 1)
            raise RankwiseError(f"node '{dup}' is listed twice in the allocation")
        if self.slots.shape != (n,) or self.alpha.shape != (n, n) or self.beta.shape != (n, n):
            raise RankwiseError("network arrays do not match its node count")

    @property
    def n_nodes(self) -> int:
        return len(self.names)

    @property
    def total_slots(self) -> int:
        return int(self.slots.sum())

    @classmethod
    def from_model(cls, model: Model, hosts: Sequence[tuple[str, int]] | None = None, *,
                   fill_missing: bool = False) -> "Network":
        """The allocation's nodes (host, slots) as the model measured them;
        hosts=None: every node of the model, slots = the ranks it probed with."""
        hosts, idx, slots = model_allocation(model, hosts)
        so = map_lib()
        mptr = model._to_c()
        net = NetworkPtr()
        filled = C.c_int64(0)
        try:
            engine.check(so.rw_network_from_model(mptr, len(hosts), idx.ctypes.data_as(i32p),
                                                  slots.ctypes.data_as(i32p), int(fill_missing),
                                                  C.byref(filled), C.byref(net)))
        except RankwiseError as exc:
            raise RankwiseError(_missing_hint(str(exc), fill_missing)) from None
        finally:
            engine.lib().rw_model_free(mptr)
        try:
            n = len(hosts)
            c = net.contents
            alpha = np.ctypeslib.as_array(c.alpha, shape=(n, n)).copy()
            beta = np.ctypeslib.as_array(c.beta, shape=(n, n)).copy()
        finally:
            so.rw_network_free(net)
        return cls([h for h, _ in hosts], slots, alpha, beta, filled=int(filled.value))

    @classmethod
    def tree(cls, hosts: Sequence[tuple[str, int]], rack_size: int) -> "Network":
        """Hop counts of a two-level tree (hop-bytes when nothing is measured):
        0 inside a node, 2 through a rack switch, 4 across racks; racks are
        runs of rack_size nodes in allocation order."""
        if rack_size < 1:
            raise UsageError(f"--rack-size must be >= 1, got {rack_size}")
        n = len(hosts)
        rack = np.arange(n) // rack_size
        hops = np.where(rack[:, None] == rack[None, :], 2.0, 4.0)
        np.fill_diagonal(hops, 0.0)
        return cls([h for h, _ in hosts], [s for _, s in hosts], np.zeros((n, n)), hops)

    def _to_c(self) -> NetworkPtr:
        so = map_lib()
        ptr = NetworkPtr()
        engine.check(so.rw_network_create(self.n_nodes, self.slots.ctypes.data_as(i32p), C.byref(ptr)))
        n = self.n_nodes
        np.ctypeslib.as_array(ptr.contents.alpha, shape=(n, n))[:] = self.alpha
        np.ctypeslib.as_array(ptr.contents.beta, shape=(n, n))[:] = self.beta
        return ptr

    def hierarchy(self, nbytes: float = 0.0, max_levels: int = 8) -> tuple[np.ndarray, np.ndarray]:
        """(group_of[levels, nodes], order): groups of close nodes found from
        the numbers (level 0 = each node alone, last = all)."""
        so = map_lib()
        n = self.n_nodes
        groups = np.zeros((max_levels, n), dtype=np.int32)
        order = np.zeros(n, dtype=np.int32)
        ptr = self._to_c()
        try:
            levels = so.rw_network_hierarchy(ptr, float(nbytes), max_levels,
                                             groups.ctypes.data_as(i32p), order.ctypes.data_as(i32p))
        finally:
            so.rw_network_free(ptr)
        if levels < 0:
            raise RankwiseError(so.rw_last_error().decode(errors="replace"))
        return groups[:levels].copy(), order


@dataclass
class MapResult:
    """Where each rank goes, and what the engine predicts for it."""

    network: Network
    node_of: np.ndarray
    slot_of: np.ndarray
    objective: str
    algorithm: str
    cost: float
    block_cost: float
    start_cost: float
    seconds: float
    n_selected: int

    @property
    def used_nodes(self) -> list[str]:
        seen = dict.fromkeys(int(v) for v in self.node_of)
        return [self.network.names[v] for v in seen]

    @property
    def gain(self) -> float:
        """block cost / cost: how many times cheaper than the default placement."""
        return self.block_cost / self.cost if self.cost > 0 else float("inf") if self.block_cost > 0 else 1.0


def _objective_code(objective: str) -> int:
    if objective not in OBJECTIVES:
        raise UsageError(f"unknown objective '{objective}' (choose from {', '.join(OBJECTIVES)})")
    return engine.enum_value("objective", _ENGINE_OBJECTIVE[objective], map_lib())


def grid_of(matrix: CommMatrix) -> tuple[tuple[int, int, int], bool] | None:
    """Process grid (x fastest) and periodicity of a matrix made by a grid
    pattern (stencil2d/3d, ring), from the spec it records; None otherwise."""
    from rankwise.traffic.patterns import parse_pattern_spec

    if not matrix.pattern:
        return None
    try:
        spec = parse_pattern_spec(matrix.pattern)
    except RankwiseError:
        return None
    p = spec.params
    if spec.name in ("stencil3d", "stencil2d") and "grid" in p:
        # Patterns number ranks as MPI_Cart_create does (last coordinate
        # fastest); the engine wants the fastest first.
        dims = tuple(reversed(p["grid"])) + (1,) * (3 - len(p["grid"]))
        return dims, bool(p.get("periodic", False))
    if spec.name == "ring" and "ranks" in p:
        return (p["ranks"], 1, 1), True
    return None


def map_ranks(matrix: CommMatrix, network: Network, *, algorithm: str = "auto", objective: str = "time",
              selection: str = "weighted", seed: int = 1, time_limit: float = 0.0,
              grid: tuple[int, int, int] | None = None, periodic: bool | None = None,
              use_pattern: bool = True, min_gain: float = 0.02) -> MapResult:
    """Place matrix.n_ranks ranks on the network (see rankwise_map.h).
    The process grid comes from `grid`, else from the matrix's pattern
    (unless use_pattern is False: the bare-matrix case). The result replaces
    the default block placement only when predicted at least min_gain
    faster."""
    if algorithm not in ALGORITHMS:
        raise UsageError(f"unknown algorithm '{algorithm}' (choose from {', '.join(ALGORITHMS)})")
    if selection not in SELECTIONS:
        raise RankwiseError(f"unknown node selection '{selection}' (choose from {', '.join(SELECTIONS)})")
    so = map_lib()
    opts = CMapOptions()
    opts.algorithm = engine.enum_value("algorithm", algorithm, so)
    opts.objective = _objective_code(objective)
    opts.selection = engine.enum_value("node_selection", selection, so)
    opts.seed = int(seed) & (2**64 - 1)
    opts.time_limit = float(time_limit)
    opts.min_gain = float(min_gain)
    found = grid_of(matrix) if (grid is None and use_pattern) else None
    if grid is None and found is not None:
        grid, pattern_periodic = found
        periodic = pattern_periodic if periodic is None else periodic
    if grid is not None:
        opts.grid[:] = list(grid) + [1] * (3 - len(grid))
    opts.periodic = int(bool(periodic))

    mptr = matrix._to_c()
    nptr = network._to_c()
    res = CMapResult()
    try:
        engine.check(so.rw_map(mptr, nptr, C.byref(opts), C.byref(res)))
        try:
            n = res.n_ranks
            node_of = np.ctypeslib.as_array(res.node_of, shape=(n,)).copy()
            slot_of = np.ctypeslib.as_array(res.slot_of, shape=(n,)).copy()
            ran = so.rw_algorithm_name(res.algorithm).decode()
            return MapResult(network, node_of, slot_of, objective, ran, res.cost,
                             res.block_cost, res.start_cost, res.seconds, res.n_selected)
        finally:
            so.rw_map_result_free(C.byref(res))
    finally:
        so.rw_network_free(nptr)
        so.rw_matrix_free(mptr)


def placement_cost(matrix: CommMatrix, network: Network, node_of, objective: str = "time") -> float:
    """The objective of any placement (node indices into the network)."""
    node_of = np.ascontiguousarray(node_of, dtype=np.int32)
    if node_of.shape != (matrix.n_ranks,):
        raise RankwiseError(f"a placement of {node_of.size} ranks for a matrix of {matrix.n_ranks}")
    so = map_lib()
    mptr, nptr = matrix._to_c(), network._to_c()
    out = C.c_double()
    try:
        engine.check(so.rw_map_cost(mptr, nptr, _objective_code(objective), node_of.ctypes.data_as(i32p),
                                    C.byref(out)))
    finally:
        so.rw_network_free(nptr)
        so.rw_matrix_free(mptr)
    return float(out.value)


def cut(matrix: CommMatrix, node_of, *, by: str = "bytes") -> tuple[int, int]:
    """(traffic between ranks on different nodes, all traffic), in bytes or msgs."""
    node_of = np.ascontiguousarray(node_of, dtype=np.int32)
    if node_of.shape != (matrix.n_ranks,):
        raise RankwiseError(f"a placement of {node_of.size} ranks for a matrix of {matrix.n_ranks}")
    so = map_lib()
    mptr = matrix._to_c()
    c, t = C.c_int64(), C.c_int64()
    try:
        engine.check(so.rw_map_cut(mptr, node_of.ctypes.data_as(i32p), int(by == "msgs"), C.byref(c), C.byref(t)))
    finally:
        so.rw_matrix_free(mptr)
    return int(c.value), int(t.value)
