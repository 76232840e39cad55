"""What a communication will cost: Python binding of the engine's predictor
(engine/include/rankwise_predict.h, docs/concepts/prediction.md).

A `PredictNetwork` holds the figures the predictor reasons on (per node pair
alpha and beta, optional per-node send overhead and injection/ejection caps,
shared links); `predict_collective` and `predict_traffic` simulate a
collective algorithm's or an application's transfers on it for a placement
(rank -> node index). Build a network from a measured model
(`PredictNetwork.from_model`) or from a generated platform's ground truth
(`PredictNetwork.from_ground_truth`).
"""

from __future__ import annotations

import ctypes as C
import json
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import Sequence

import numpy as np

from rankwise._engine import core as engine
from rankwise.util.errors import RankwiseError
from rankwise.traffic.matrix import CommMatrix
from rankwise.model.model import Model

from rankwise._engine.predict import CCollOptions, CPnetView, CSimResult, f64p, i32p, predict_lib

OPERATIONS = engine.collective_ops()

# SMPI 3.32 names of the algorithms the schedules follow (--cfg=smpi/OP:NAME).
SMPI_ALGORITHM = {
    ("alltoall", "pair"): "pair",
    ("alltoall", "ring"): "ring",
    ("alltoall", "bruck"): "bruck",
    ("alltoall", "linear"): "basic_linear",
    ("bcast", "binomial"): "binomial_tree",
    ("bcast", "flat"): "flattree",
    ("bcast", "knomial_isend"): "mvapich2_knomial_intra_node",  # the ompi selector's "knomial"
    ("bcast", "chain"): "NTSL",
    ("bcast", "scatter_allgather"): "scatter_LR_allgather",
    ("bcast", "scatter_rdb_allgather"): "scatter_rdb_allgather",
    ("reduce", "binomial"): "binomial",
    ("allreduce", "rdb"): "rdb",
    ("allreduce", "ring"): "lr",
    ("allreduce", "rabenseifner"): "rab_rdb",
    ("allgather", "ring"): "ring",
    ("allgather", "rdb"): "rdb",
    ("allgather", "neighborexchange"): "ompi_neighborexchange",
    ("allgather", "bruck"): "bruck",
    ("gather", "binomial"): "ompi_binomial",
    ("gather", "linear"): "ompi_basic_linear",
    ("scatter", "binomial"): "ompi_binomial",
    ("scatter", "linear"): "ompi_basic_linear",
}


def algorithms(op: str) -> list[str]:
    """Algorithms the predictor knows for a collective ([] for an unknown one)."""
    text = predict_lib().rw_collective_algorithms(op.encode()).decode()
    return text.split(",") if text else []


@dataclass
class SharedLink:
    """A resource crossed by every flow between the listed node pairs (by
    share[k] of pair k's flow where given: a flow spread over a direct
    network's shortest routes)."""

    name: str
    capacity: float  # bytes/s
    pairs: np.ndarray  # (k, 2) int32 node indices, src -> dst
    confirmed: bool = True  # the model confirms its capacity (rw_pnet_link_confirmed)
    share: np.ndarray | None = None  # (k,) in (0, 1]; None: all of every flow


SHARING = {"latency": 0, "equal": 1}  # rw_sharing_rule


@dataclass
class PredictNetwork:
    """Figures of the nodes a job runs on: alpha (s) and beta (s/byte) per
    ordered pair, intra-node on the diagonal; optional per-node send and
    receive overheads (s, charged to eager messages on the rank's CPU, as
    SMPI's smpi/os and smpi/or), injection/ejection caps (bytes/s, 0 =
    none), duplex caps (bytes/s a node sends and receives in all, 0 = none:
    the directions apart); shared links."""

    names: list[str]
    alpha: np.ndarray
    beta: np.ndarray
    overhead: np.ndarray | None = None
    recv_overhead: np.ndarray | None = None
    inject: np.ndarray | None = None
    eject: np.ndarray | None = None
    links: list[SharedLink] = field(default_factory=list)
    duplex: np.ndarray | None = None
    # The protocol knee (bytes, 0 = none): a message of at least knee bytes costs the pair's
    # alpha_large/beta_large (NaN: its alpha/beta), the model's fit at and above the knee.
    knee: int = 0
    alpha_large: np.ndarray | None = None
    beta_large: np.ndarray | None = None
    # How flows share a NIC or link: "latency" (in inverse proportion to their latency, as
    # SimGrid's CM02 weighs them) or "equal" (max-min fair, as a real fabric shares them).
    sharing: str = "latency"

    def __post_init__(self):
        if self.sharing not in SHARING:
            raise RankwiseError(f"network: sharing must be one of {', '.join(SHARING)}, got {self.sharing!r}")
        n = len(self.names)
        self.alpha = np.ascontiguousarray(self.alpha, dtype=np.float64)
        self.beta = np.ascontiguousarray(self.beta, dtype=np.float64)
        if self.alpha.shape != (n, n) or self.beta.shape != (n, n):
            raise RankwiseError(f"network: alpha and beta must be {n} x {n}")
        for name in ("overhead", "recv_overhead", "inject", "eject", "duplex"):
            v = getattr(self, name)
            if v is not None:
                v = np.ascontiguousarray(v, dtype=np.float64)
                if v.shape != (n,):
                    raise RankwiseError(f"network: {name} needs one value per node ({n})")
                setattr(self, name, v)
        for name in ("alpha_large", "beta_large"):
            v = getattr(self, name)
            if v is not None:
                v = np.ascontiguousarray(v, dtype=np.float64)
                if v.shape != (n, n):
                    raise RankwiseError(f"network: {name} must be {n} x {n}")
                setattr(self, name, v)

    @property
    def n_nodes(self) -> int:
        return len(self.names)

    def with_overheads(self, send: float, recv: float) -> "PredictNetwork":
        """A copy whose every node has these send and receive overheads (s):
        the figures of a simulated cluster run with
        rankwise.sim.smpi.overhead_settings(send, recv)."""
        from dataclasses import replace

        if not (np.isfinite(send) and np.isfinite(recv) and send >= 0 and recv >= 0):
            raise RankwiseError(f"overheads must be finite and >= 0 seconds, got {send}, {recv}")
        n = self.n_nodes
        return replace(self, overhead=np.full(n, float(send)), recv_overhead=np.full(n, float(recv)))

    # ------------------------------------------------------------ builders
    @classmethod
    def from_ground_truth(cls, platform_dir: str | PathLike) -> "PredictNetwork":
        """The network a generated platform (rankwise.sim.platform) really is:
        route latencies and bottleneck bandwidths from ground_truth.json, each
        node's link as its injection and ejection cap (full duplex; also its
        duplex cap when the spec shares a node's link between directions), and each
        rack uplink as two shared links (out of the rack, into it); on a torus or
        dragonfly every router link's direction is a shared link over the pairs
        the ground truth lists for it."""
        path = Path(platform_dir) / "ground_truth.json"
        try:
            gt = json.loads(path.read_text())
        except (OSError, ValueError) as e:
            raise RankwiseError(f"{path}: cannot read the ground truth ({e})") from None
        names = list(gt["nodes"])
        n = len(names)
        alpha = np.asarray(gt["alpha"], dtype=np.float64)
        beta = 1.0 / np.asarray(gt["bandwidth"], dtype=np.float64)
        rack = np.asarray(gt["rack_of_node"], dtype=np.int64)
        node_bw = np.zeros(n)
        links = []
        several_nics = gt.get("spec", {}).get("nics", 1) > 1  # then each NIC carries only some pairs
        for link in gt["links"]:
            bw = float(link["configured"]["bandwidth"])
            if "pairs" in link:  # a torus or dragonfly: the routes crossing it are listed
                # A node's NICs (several on a torus) add up to its injection cap.
                if link["kind"] == "node":
                    node_bw[int(link["index"])] += bw
                for way, pairs in link["pairs"].items():
                    if pairs and (link["kind"] != "node" or several_nics):
                        links.append(SharedLink(f"{link['name']}:{way}", bw, np.asarray(pairs, dtype=np.int32)))
            elif link["kind"] == "node":
                node_bw[int(link["index"])] = bw
            else:
                r = int(link["index"])
                inside = np.flatnonzero(rack == r)
                outside = np.flatnonzero(rack != r)
                if inside.size and outside.size:
                    out_pairs = np.array([(i, j) for i in inside for j in outside], dtype=np.int32)
                    links.append(SharedLink(f"{link['name']}:up", bw, out_pairs))
                    links.append(SharedLink(f"{link['name']}:down", bw, out_pairs[:, ::-1].copy()))
        shared = bool(gt.get("spec", {}).get("shared_nics", False))
        return cls(names, alpha, beta, inject=node_bw, eject=node_bw.copy(), links=links,
                   duplex=node_bw.copy() if shared else None)

    def with_measured_overheads(self, send: np.ndarray, recv: np.ndarray) -> "PredictNetwork":
        """A copy with these per-node send and receive overheads (s), taken out of alpha: a
        probe's ping-pong alpha already holds its message's send and receive overheads, which the
        predictor charges apart (an eager message costs o + alpha + the receiver's overhead), so
        alpha[i, j] becomes alpha[i, j] - send[i] - recv[j] (at least 0). Under SMPI this assumes
        the probe's nonblocking send paid the blocking send's overhead (smpi/ois = smpi/os), as
        on a real MPI and in rankwise's collective settings."""
        from dataclasses import replace

        n = self.n_nodes
        send = np.broadcast_to(np.asarray(send, dtype=np.float64), (n,)).copy()
        recv = np.broadcast_to(np.asarray(recv, dtype=np.float64), (n,)).copy()
        if not (np.isfinite(send).all() and np.isfinite(recv).all() and (send >= 0).all() and (recv >= 0).all()):
            raise RankwiseError("overheads must be finite and >= 0 seconds")
        so = predict_lib()
        ptr = self._to_c(np.arange(n, dtype=np.int32))
        try:  # the engine's rule (rw_pnet_take_overheads), as from_model(overheads=True)
            engine.check(so.rw_pnet_take_overheads(ptr, send.ctypes.data_as(f64p), recv.ctypes.data_as(f64p)))
            v = CPnetView()
            engine.check(so.rw_pnet_view_of(ptr, C.byref(v)))
            alpha = np.ctypeslib.as_array(v.alpha, shape=(n, n)).copy()
        finally:
            so.rw_pnet_free(ptr)
        return replace(self, alpha=alpha, overhead=send, recv_overhead=recv)

    @classmethod
    def from_model(cls, model: Model, hosts: Sequence[tuple[str, int]] | None = None, *,
                   node_caps: bool = True, fill_missing: bool = False,
                   overheads: bool = False, send_overhead: float | None = None,
                   recv_overhead: float | None = None) -> "PredictNetwork":
        """The allocation's nodes as the model measured them, by the engine's one rule
        (rw_pnet_from_model, engine/include/rankwise_predict.h), which the collectives
        library's RANKWISE_MODEL decisions follow too: alpha, beta per pair as the mapper
        reads them (rankwise.map.mapping.Network.from_model). With node_caps each node's
        injection (ejection) cap is the model's nic figure (the stress test's,
        docs/concepts/model.md), else the best bandwidth it showed as a sender (receiver)
        to any other node: concurrent flows through one NIC then share it. The model's
        shared links (rack uplinks) become SharedLinks over the allocation's pairs that
        cross them. With overheads, the per-node send and receive overheads (send_overhead /
        recv_overhead for every node when given, else the model's, the median of the others
        where a node has none), taken out of alpha as with_measured_overheads does."""
        from rankwise.map.mapping import _missing_hint, model_allocation

        hosts, idx, slots = model_allocation(model, hosts)
        so = predict_lib()
        opt = so.rw_pnet_model_options_default()
        opt.fill_missing, opt.node_caps, opt.overheads = int(fill_missing), int(node_caps), int(overheads)
        for name, value in (("send_overhead", send_overhead), ("recv_overhead", recv_overhead)):
            if value is not None:
                setattr(opt, name, float(value))
        model_link = np.zeros(max(len(model.links) + len(model.hops), 1), dtype=np.int32)
        mptr = model._to_c()
        ptr = C.c_void_p()
        try:
            engine.check(so.rw_pnet_from_model(mptr, len(hosts), idx.ctypes.data_as(i32p),
                                               slots.ctypes.data_as(i32p), C.byref(opt), None,
                                               model_link.ctypes.data_as(i32p), C.byref(ptr)))
        except RankwiseError as exc:
            raise RankwiseError(_missing_hint(str(exc), fill_missing)) from None
        finally:
            engine.lib().rw_model_free(mptr)
        try:
            return cls._from_c(ptr, [h for h, _ in hosts], lambda k: _model_link_name(model, int(model_link[k])))
        finally:
            so.rw_pnet_free(ptr)

    @classmethod
    def _from_c(cls, ptr: C.c_void_p, names: list[str], link_name) -> "PredictNetwork":
        """The figures of an engine network; link_name(k): its link k's name."""
        so = predict_lib()
        v = CPnetView()
        engine.check(so.rw_pnet_view_of(ptr, C.byref(v)))
        n = v.n_nodes

        def vec(p, shape):
            return None if not p else np.ctypeslib.as_array(p, shape=shape).copy()

        links = []
        for k in range(v.n_links):
            cap, count = C.c_double(), C.c_int64()
            engine.check(so.rw_pnet_link(ptr, k, C.byref(cap), C.byref(count), None, None))
            pairs = np.zeros((count.value, 2), dtype=np.int32)
            src, dst = np.zeros(count.value, np.int32), np.zeros(count.value, np.int32)
            engine.check(so.rw_pnet_link(ptr, k, None, None, src.ctypes.data_as(i32p), dst.ctypes.data_as(i32p)))
            pairs[:, 0], pairs[:, 1] = src, dst
            share = np.ones(count.value, dtype=np.float64)
            if count.value:
                engine.check(so.rw_pnet_link_shares(ptr, k, share.ctypes.data_as(f64p)))
            links.append(SharedLink(link_name(k), cap.value, pairs, so.rw_pnet_link_confirmed(ptr, k) == 1,
                                    None if (share == 1.0).all() else share))
        sharing = {code: name for name, code in SHARING.items()}[v.sharing]
        return cls(names, vec(v.alpha, (n, n)), vec(v.beta, (n, n)), overhead=vec(v.overhead, (n,)),
                   recv_overhead=vec(v.recv_overhead, (n,)), inject=vec(v.inject, (n,)), eject=vec(v.eject, (n,)),
                   links=links, knee=int(v.knee), alpha_large=vec(v.alpha_large, (n, n)),
                   beta_large=vec(v.beta_large, (n, n)), sharing=sharing, duplex=vec(v.duplex, (n,)))

    # ------------------------------------------------------------ C side
    def _to_c(self, node_of: np.ndarray) -> C.c_void_p:
        so = predict_lib()
        ptr = C.c_void_p()
        engine.check(so.rw_pnet_create(self.n_nodes, self.alpha.ctypes.data_as(f64p),
                                       self.beta.ctypes.data_as(f64p), C.byref(ptr)))
        try:
            if self.overhead is not None:
                engine.check(so.rw_pnet_set_overhead(ptr, self.overhead.ctypes.data_as(f64p)))
            if self.recv_overhead is not None:
                engine.check(so.rw_pnet_set_recv_overhead(ptr, self.recv_overhead.ctypes.data_as(f64p)))
            engine.check(so.rw_pnet_set_sharing(ptr, SHARING[self.sharing]))
            if self.knee > 0 and self.alpha_large is not None and self.beta_large is not None:
                engine.check(so.rw_pnet_set_protocol(ptr, int(self.knee), self.alpha_large.ctypes.data_as(f64p),
                                                     self.beta_large.ctypes.data_as(f64p)))
            if self.inject is not None or self.eject is not None:
                inj = None if self.inject is None else self.inject.ctypes.data_as(f64p)
                ej = None if self.eject is None else self.eject.ctypes.data_as(f64p)
                engine.check(so.rw_pnet_set_node_caps(ptr, inj, ej))
            if self.duplex is not None:
                engine.check(so.rw_pnet_set_node_duplex(ptr, self.duplex.ctypes.data_as(f64p)))
            for link in self.links:
                pairs = np.ascontiguousarray(link.pairs, dtype=np.int32).reshape(-1, 2)
                src = np.ascontiguousarray(pairs[:, 0])
                dst = np.ascontiguousarray(pairs[:, 1])
                lid = C.c_int32()
                share = None if link.share is None else np.ascontiguousarray(link.share, dtype=np.float64)
                if share is not None and share.shape != (src.size,):
                    raise RankwiseError(f"link {link.name}: {share.size} shares for {src.size} pairs")
                engine.check(so.rw_pnet_add_link_shares(
                    ptr, float(link.capacity), src.size, src.ctypes.data_as(i32p), dst.ctypes.data_as(i32p),
                    None if share is None else share.ctypes.data_as(f64p), C.byref(lid)))
                engine.check(so.rw_pnet_set_link_confirmed(ptr, lid, int(link.confirmed)))
            engine.check(so.rw_pnet_set_placement(ptr, node_of.size, node_of.ctypes.data_as(i32p)))
        except BaseException:
            so.rw_pnet_free(ptr)
            raise
        return ptr


def _model_link_name(model, k: int) -> str:
    """The name of rw_pnet_from_model's model link k: a shared link's, or for
    n_links + h the model's hop h (`hop node-3 -> node-4`)."""
    if k < len(model.links):
        return model.links[k].name
    hop = model.hops[k - len(model.links)]
    return f"hop {model.names[hop.src]} -> {model.names[hop.dst]}"


def placement(ranks_per_node: int | Sequence[int], n_nodes: int | None = None) -> np.ndarray:
    """rank -> node index for consecutive ranks per node (block placement, as
    smpirun and most launchers place them): an int for every node, or a
    count per node."""
    if isinstance(ranks_per_node, (int, np.integer)):
        if n_nodes is None:
            raise RankwiseError("placement: give the number of nodes with a single ranks-per-node count")
        counts = [int(ranks_per_node)] * n_nodes
    else:
        counts = [int(k) for k in ranks_per_node]
    return np.repeat(np.arange(len(counts), dtype=np.int32), counts)


@dataclass
class Prediction:
    time: float  # seconds from time 0 to the end of the last transfer
    span: float  # seconds, the longest of the ranks' times from their own start
    transfers: int
    events: int
    rate_updates: int


def collective_options(root: int, segment: int, radix: int, gamma: float, eager_threshold: int) -> CCollOptions:
    """The engine's options of one collective schedule (rw_coll_options)."""
    o = predict_lib().rw_coll_options_default()
    o.root, o.segment, o.radix, o.gamma, o.eager_threshold = root, segment, radix, gamma, eager_threshold
    return o


def rank_nodes(network: PredictNetwork, node_of) -> np.ndarray:
    """A placement (rank -> node index) as the engine takes it."""
    v = np.ascontiguousarray(node_of, dtype=np.int32)
    if v.ndim != 1 or v.size == 0:
        raise RankwiseError("placement: one node index per rank is needed")
    return v


def simulate_schedule(network: PredictNetwork, node_of: np.ndarray, sched: C.c_void_p, contention: bool,
                      rank_start=None) -> Prediction:
    """Run a built schedule on the network for a placement (rw_simulate_from)."""
    so = predict_lib()
    start = None
    if rank_start is not None:
        start = np.ascontiguousarray(rank_start, dtype=np.float64)
        if start.shape != node_of.shape:
            raise RankwiseError(f"rank_start needs one time per rank ({node_of.size})")
    net = network._to_c(node_of)
    try:
        res = CSimResult()
        engine.check(so.rw_simulate_from(net, sched, 0 if contention else 1,
                                         None if start is None else start.ctypes.data_as(f64p),
                                         C.byref(res), None))
    finally:
        so.rw_pnet_free(net)
    return Prediction(res.time, res.rank_span, res.transfers, res.events, res.rate_updates)


def predict_collective(network: PredictNetwork, op: str, algorithm: str, nbytes: float, node_of, *,
                       root: int = 0, segment: int = 8192, radix: int = 4, gamma: float = 0.0,
                       eager_threshold: int = 65536, contention: bool = True,
                       rank_start=None) -> Prediction:
    """Predicted time of one call of `op` with `algorithm` (`algorithms(op)`),
    `nbytes` as the benchmark programs count it, rank r on node node_of[r].
    contention=False: each message alone at its pair's alpha + n beta along
    the schedule's critical path (Hockney's model of the same algorithm).
    rank_start: when each rank starts (seconds, default all at 0); the
    prediction's span then is the longest of the ranks' times from their
    own start. The benchmark programs start every rank at one instant, so
    their times compare with the default."""
    node_of = rank_nodes(network, node_of)
    so = predict_lib()
    sched = C.c_void_p()
    opt = collective_options(root, segment, radix, gamma, eager_threshold)
    engine.check(so.rw_sched_collective(op.encode(), algorithm.encode(), node_of.size, float(nbytes),
                                        C.byref(opt), C.byref(sched)))
    try:
        return simulate_schedule(network, node_of, sched, contention, rank_start)
    finally:
        so.rw_sched_free(sched)


def predict_traffic(network: PredictNetwork, matrix: CommMatrix, node_of, *, iterations: float = 1.0,
                    contention: bool = True) -> Prediction:
    """Predicted time of one iteration of an application's traffic, taken as
    one concurrent phase (docs/concepts/prediction.md, "Application traffic")."""
    node_of = rank_nodes(network, node_of)
    if node_of.size < matrix.n_ranks:
        raise RankwiseError(f"placement gives {node_of.size} ranks a node, the matrix has {matrix.n_ranks}")
    so = predict_lib()
    mptr = matrix._to_c()
    sched = C.c_void_p()
    try:
        engine.check(so.rw_sched_traffic(mptr, float(iterations), C.byref(sched)))
    finally:
        so.rw_matrix_free(mptr)
    try:
        return simulate_schedule(network, node_of, sched, contention)
    finally:
        so.rw_sched_free(sched)


# ---------------------------------------------------------------- formulas
def hockney(alpha: float, beta: float, n: float) -> float:
    return predict_lib().rw_hockney(alpha, beta, n)


def loggp(L: float, o: float, G: float, n: float) -> float:
    return predict_lib().rw_loggp(L, o, G, n)


def luo_bruck(p: int, alpha: float, beta: float, k: float) -> float:
    """Luo et al. 2018 eq. 1."""
    return predict_lib().rw_luo_bruck(p, alpha, beta, k)


def luo_pairwise(p: int, alpha: float, beta: float, k: float) -> float:
    """Luo et al. 2018 eq. 2."""
    return predict_lib().rw_luo_pairwise(p, alpha, beta, k)


def luo_wait(radix: int, rho: float) -> float:
    """Luo et al. 2018 eq. 3, in switch cycles."""
    return predict_lib().rw_luo_wait(radix, rho)


def luo_contention(p: int, alpha: float, beta: float, k: float, *, packet: float, hops: int, radix: int,
                   rho: float, cycle: float) -> float:
    """Luo et al. 2018 eq. 4."""
    return predict_lib().rw_luo_contention(p, alpha, beta, k, packet, hops, radix, rho, cycle)
