"""A collective's candidates scored by the predictor, Open MPI's own choice, trees predicted and
rules files read: the engine's collective tuning (rankwise_coll_tune.h, rankwise_coll_rules.h)."""

from __future__ import annotations

import ctypes as C
from dataclasses import dataclass
from os import fspath, PathLike

import numpy as np

from rankwise._engine import core as engine
from rankwise._engine.coll import CChoice, CDecision, COmpiChoice, CTree, CTuneOptions, tune_lib
from rankwise.util.errors import RankwiseError
from rankwise.predict.predictor import PredictNetwork

ROOTED_OPS = ("bcast", "reduce", "gather", "scatter")
# Without a root: the library's own algorithms are scored instead of trees.
ALL_OPS = ("allreduce", "allgather", "alltoall")
COLL_OPS = ROOTED_OPS + ALL_OPS


def _parents(tree: C.POINTER(CTree)) -> np.ndarray | None:
    if not tree:
        return None
    t = tree.contents
    return np.ctypeslib.as_array(t.parent, shape=(t.n_ranks,)).astype(np.int32)


def _children_order(tree: C.POINTER(CTree)) -> np.ndarray | None:
    """Ranks' children, concatenated in send order (with first_child, the
    tree's child order, which the rules file keeps by listing it)."""
    if not tree:
        return None
    t = tree.contents
    return np.ctypeslib.as_array(t.child, shape=(max(t.n_ranks - 1, 0),)).astype(np.int32)


@dataclass
class Candidate:
    algorithm: str  # "tree", the passthrough's algorithm name, or (allreduce, allgather) the library's
    source: str  # passthrough, binomial, eager, volume, chain, binary; allreduce, allgather: the library's name
    segment: int  # bytes, 0 = whole message
    time: float  # predicted seconds
    parents: np.ndarray | None  # parent per rank (-1 at the root), None when no tree
    children: np.ndarray | None  # the tree's children in send order, rank by rank


@dataclass
class Decision:
    op: str
    root: int
    nbytes: int
    candidates: list[Candidate]
    chosen: int  # index into candidates, 0 = pass through
    gain: float  # 1 - chosen / passthrough

    @property
    def passthrough(self) -> Candidate:
        return self.candidates[0]

    @property
    def binomial(self) -> Candidate:
        return self.candidates[1]

    @property
    def best(self) -> Candidate:
        """The fastest rankwise candidate (chosen or not)."""
        return min(self.candidates[1:], key=lambda c: c.time)

    @property
    def choice(self) -> Candidate:
        return self.candidates[self.chosen]


@dataclass
class TuneOptions:
    eager_limit: int = 65536
    gamma: float = 0.0
    min_gain: float = 0.05
    max_evals: int = 1000

    def to_c(self) -> CTuneOptions:
        o = tune_lib().rw_tune_options_default()
        o.eager_limit, o.gamma, o.min_gain, o.max_evals = (int(self.eager_limit), float(self.gamma),
                                                           float(self.min_gain), int(self.max_evals))
        return o


def trinary_order(network: PredictNetwork, node_of) -> np.ndarray:
    """The ranks in the order the library lays its triple trinary trees
    over this placement (rw_coll_trinary_order): what the predictor costs
    the trinary candidates in."""
    return _order(tune_lib().rw_coll_trinary_order, network, node_of)


def ring_order(network: PredictNetwork, node_of) -> np.ndarray:
    """The ranks in the order the multi-ring allgather's rings run through
    them over this placement (rw_coll_multiring_order): what the predictor
    costs the multi-ring in."""
    return _order(tune_lib().rw_coll_multiring_order, network, node_of)


def _order(make, network: PredictNetwork, node_of) -> np.ndarray:
    so = tune_lib()
    node_of = np.ascontiguousarray(node_of, dtype=np.int32)
    order = np.zeros(node_of.size, dtype=np.int32)
    net = network._to_c(node_of)
    try:
        engine.check(make(net, order.ctypes.data_as(C.POINTER(C.c_int32))))
    finally:
        so.rw_pnet_free(net)
    return order


def ompi_algorithm(op: str, comm_size: int, nbytes: float) -> str:
    """Open MPI's tuned choice as SMPI's `ompi` selector makes it."""
    name = tune_lib().rw_coll_ompi_algorithm(op.encode(), int(comm_size), float(nbytes))
    if name is None:
        raise RankwiseError(f"unknown collective '{op}' (known: {', '.join(COLL_OPS)})")
    return name.decode()


@dataclass
class OmpiAlgorithm:
    name: str  # as ompi_algorithm names it
    id: int  # Open MPI 4.1's coll/tuned number; 0: its fixed decision
    segment: int  # bytes; 0 = whole message
    time: float  # predicted seconds


@dataclass
class OmpiChoice:
    op: str
    nbytes: int
    algorithms: list[OmpiAlgorithm]  # [0]: the fixed decision
    chosen: int  # index into algorithms: 0 keeps the fixed decision
    gain: float  # 1 - chosen / fixed decision

    @property
    def fixed(self) -> OmpiAlgorithm:
        return self.algorithms[0]

    @property
    def choice(self) -> OmpiAlgorithm:
        return self.algorithms[self.chosen]


def ompi_choose(network: PredictNetwork, node_of, op: str, nbytes: int,
                options: TuneOptions | None = None) -> OmpiChoice:
    """The fastest of Open MPI's own algorithms that its rules file can name
    for one call (rooted ones from rank 0), against its fixed decision
    (rw_coll_ompi_choose)."""
    so = tune_lib()
    node_of = np.ascontiguousarray(node_of, dtype=np.int32)
    opt = (options or TuneOptions()).to_c()
    out = COmpiChoice()
    net = network._to_c(node_of)
    try:
        engine.check(so.rw_coll_ompi_choose(net, op.encode(), float(nbytes), C.byref(opt), C.byref(out)))
    finally:
        so.rw_pnet_free(net)
    algs = [OmpiAlgorithm(a.name.decode(), int(a.id), int(a.segment), float(a.time)) for a in out.alg[:out.n]]
    return OmpiChoice(op, int(nbytes), algs, int(out.chosen), float(out.gain))


def ompi_collective_id(op: str) -> int:
    """Open MPI's number of op in its rules file (coll_base_functions.h)."""
    cid = tune_lib().rw_coll_ompi_collective_id(op.encode())
    if cid < 0:
        raise RankwiseError(f"unknown collective '{op}' (known: {', '.join(COLL_OPS)})")
    return int(cid)


def predict_tree(network: PredictNetwork, node_of, op: str, parents, order, nbytes: float, *,
                 segment: int = 0, eager_threshold: int = 65536) -> float:
    """Predicted seconds of op (bcast, reduce, gather, scatter) along the
    tree of `parents` (-1 at the root), siblings sent to in increasing
    `order` (rw_sched_tree: a reduce receives them in the reverse order)."""
    from rankwise.predict.predictor import rank_nodes, collective_options, simulate_schedule

    so = tune_lib()
    node_of = rank_nodes(network, node_of)
    par = np.ascontiguousarray(parents, dtype=np.int32)
    ordr = np.ascontiguousarray(order, dtype=np.int32)
    roots = np.flatnonzero(par == -1)
    if par.size != node_of.size or ordr.size != par.size or roots.size != 1:
        raise RankwiseError(f"a tree needs one parent and one order per rank ({node_of.size}) and one root")
    i32p = C.POINTER(C.c_int32)
    tree = C.POINTER(CTree)()
    engine.check(so.rw_tree_from_parents(par.size, int(roots[0]), par.ctypes.data_as(i32p),
                                         ordr.ctypes.data_as(i32p), C.byref(tree)))
    sched = C.c_void_p()
    try:
        opt = collective_options(int(roots[0]), int(segment), 4, 0.0, int(eager_threshold))
        engine.check(so.rw_sched_tree(op.encode(), tree, float(nbytes), int(segment), C.byref(opt), C.byref(sched)))
        return simulate_schedule(network, node_of, sched, True).time
    finally:
        so.rw_sched_free(sched)
        so.rw_tree_free(tree)


def decide(network: PredictNetwork, node_of, op: str, nbytes: int, root: int = 0,
           options: TuneOptions | None = None, start: tuple | None = None) -> Decision:
    """Score the passthrough, rankwise's binomial and the model's trees for
    one call and choose (rw_coll_decide). start: (parents, order) of a tree
    over the ranks from root that the eager search starts from as well, e.g.
    the one chosen for the next smaller size."""
    so = tune_lib()
    node_of = np.ascontiguousarray(node_of, dtype=np.int32)
    opt = (options or TuneOptions()).to_c()
    tree = C.POINTER(CTree)()
    if start is not None:
        par = np.ascontiguousarray(start[0], dtype=np.int32)
        ordr = np.ascontiguousarray(start[1], dtype=np.int32)
        if par.size != node_of.size or ordr.size != par.size:
            raise RankwiseError(f"a start tree needs one parent and one order per rank ({node_of.size})")
        i32p = C.POINTER(C.c_int32)
        engine.check(so.rw_tree_from_parents(par.size, int(root), par.ctypes.data_as(i32p),
                                             ordr.ctypes.data_as(i32p), C.byref(tree)))
        opt.start_tree = C.cast(tree, C.c_void_p)
    net = network._to_c(node_of)
    out = C.POINTER(CDecision)()
    try:
        engine.check(so.rw_coll_decide(net, op.encode(), int(root), float(nbytes), C.byref(opt), C.byref(out)))
    finally:
        so.rw_pnet_free(net)
        if tree:
            so.rw_tree_free(tree)
    try:
        d = out.contents
        cands = []
        for i in range(d.n_candidates):
            c = d.candidates[i]
            cands.append(Candidate(c.algorithm.decode(), c.source.decode(), int(c.segment), float(c.time),
                                   _parents(c.tree), _children_order(c.tree)))
        return Decision(op, int(root), int(nbytes), cands, int(d.chosen), float(d.gain))
    finally:
        so.rw_coll_decision_free(out)


@dataclass
class Choice:
    algorithm: str
    segment: int
    parents: np.ndarray | None
    children: np.ndarray | None


class Rules:
    """A rules file read by the engine (the reader the library uses)."""

    def __init__(self, path: str | PathLike):
        self._so = tune_lib()
        self._ptr = C.c_void_p()
        engine.check(self._so.rw_coll_rules_read(fspath(path).encode(), C.byref(self._ptr)))

    def close(self) -> None:
        if self._ptr:
            self._so.rw_coll_rules_free(self._ptr)
            self._ptr = C.c_void_p()

    def __del__(self):
        self.close()

    @property
    def comm_size(self) -> int:
        return int(self._so.rw_coll_rules_comm_size(self._ptr))

    def __len__(self) -> int:
        return int(self._so.rw_coll_rules_count(self._ptr))

    @property
    def trinary_order(self) -> np.ndarray | None:
        """The trinary-order line's ranks, or None without one."""
        p = self._so.rw_coll_rules_trinary_order(self._ptr)
        return np.ctypeslib.as_array(p, shape=(self.comm_size,)).astype(np.int32) if p else None

    @property
    def ring_order(self) -> np.ndarray | None:
        """The ring-order line's ranks, or None without one."""
        p = self._so.rw_coll_rules_ring_order(self._ptr)
        return np.ctypeslib.as_array(p, shape=(self.comm_size,)).astype(np.int32) if p else None

    def lookup(self, op: str, comm_size: int, root: int, nbytes: int) -> Choice:
        c = CChoice()
        engine.check(self._so.rw_coll_rules_lookup(self._ptr, op.encode(), int(comm_size), int(root),
                                                   int(nbytes), C.byref(c)))
        return Choice(c.algorithm.decode(), int(c.segment), _parents(c.tree), _children_order(c.tree))
