"""A job's communication as the predictor costs it: the point-to-point part
of its matrix as one concurrent phase, and each collective call by the
messages its algorithm sends (docs/concepts/mapping.md, "Decisions").

A matrix made by the `collective` or `alltoall` pattern is one collective
call (`iterations` of them); a profile's grouped calls come in
`matrix.collectives` (CollectiveCall). The point-to-point part is the matrix
minus the logical volumes of those calls, counted by the rules of
patterns.collective (what the PMPI profiler records for them).

Algorithms are those the job runs under SMPI (SimGrid 3.32,
smpi/coll-selector:default, src/smpi/colls/smpi_default_selector.cpp):
bcast binomial tree; reduce, gather, scatter, allgather their nonblocking
linear versions (every message posted at once: one concurrent phase of the
logical matrix); allreduce a reduce onto rank 0 then a binomial bcast;
all-to-all as rankwise's runs pin it (programs.smpi_alltoall_cfg: pairwise
for power-of-two communicators, ring otherwise). A job-wide all-to-allv
(the groups and alltoallv patterns) run by a real MPI is costed as that
MPI's default runs it (alltoallv_at_once).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from rankwise.traffic.collective_calls import CollectiveCall
from rankwise.util.errors import RankwiseError
from rankwise.traffic.matrix import CommMatrix


@dataclass(frozen=True)
class Schedule:
    """One call of a collective algorithm the predictor simulates."""

    op: str
    algorithm: str
    nbytes: int
    root: int = 0


@dataclass(frozen=True)
class Phase:
    """Messages posted all at once (a nonblocking linear collective): one
    concurrent phase of this matrix over the communicator's ranks."""

    matrix: CommMatrix


Stage = Schedule | Phase


def _pow2(n: int) -> bool:
    return n & (n - 1) == 0


def logical_matrix(op: str, n: int, nbytes: int, root: int = 0, calls: int = 1) -> CommMatrix:
    """What the profiler counts for `calls` calls (patterns.collective's
    rules; all-to-all: nbytes to every other rank)."""
    from rankwise.traffic import patterns
    if op == "alltoall":
        return patterns.alltoall(n, int(nbytes), iterations=calls)
    return patterns.collective(n, int(nbytes), op=op, root=root, iterations=calls)


def smpi_stages(op: str, n: int, nbytes: int, root: int = 0) -> list[Stage]:
    """What one call sends under SMPI's default selector (module docstring)."""
    if n < 2:
        return []
    if op == "bcast":
        return [Schedule("bcast", "binomial", nbytes, root)] if nbytes > 0 else []
    if op == "alltoall":
        return [Schedule("alltoall", "pair" if _pow2(n) else "ring", nbytes)] if nbytes > 0 else []
    if op == "allreduce":
        size = 4 * (int(nbytes) // 4)
        if size == 0:
            return []
        return [Phase(logical_matrix("reduce", n, size, 0)), Schedule("bcast", "binomial", size, 0)]
    m = logical_matrix(op, n, nbytes, root)
    return [Phase(m)] if m.nnz else []


def sent_matrix(stage: Stage, n: int) -> CommMatrix:
    """The bytes a stage moves between ranks (for the search's objectives)."""
    from rankwise.traffic import patterns
    if isinstance(stage, Phase):
        return stage.matrix
    if stage.op == "bcast" and stage.algorithm == "binomial":
        return patterns.tree(n, int(stage.nbytes), op="bcast", root=stage.root)
    return logical_matrix(stage.op, n, stage.nbytes, stage.root)


def _embed(m: CommMatrix, ranks: np.ndarray, n_world: int, scale: int = 1) -> CommMatrix:
    return CommMatrix(n_world, ranks[m.src], ranks[m.dst], m.msgs * scale, m.bytes * scale)


def _subtract(a: CommMatrix, b: CommMatrix) -> CommMatrix:
    """a - b pair by pair, never below zero (a profile may hold less than
    the rules say, e.g. a root's message to itself left out)."""
    n = a.n_ranks
    ka = a.src.astype(np.int64) * n + a.dst
    kb = b.src.astype(np.int64) * n + b.dst
    pos = np.searchsorted(ka, kb)
    hit = (pos < ka.size) & (ka[np.minimum(pos, ka.size - 1)] == kb) if ka.size else np.zeros(kb.size, bool)
    msgs, nbytes = a.msgs.copy(), a.bytes.copy()
    np.subtract.at(msgs, pos[hit], b.msgs[hit])
    np.subtract.at(nbytes, pos[hit], b.bytes[hit])
    msgs, nbytes = np.maximum(msgs, 0), np.maximum(nbytes, 0)
    keep = nbytes > 0
    return CommMatrix(n, a.src[keep], a.dst[keep], msgs[keep], nbytes[keep], source=a.source)


def _add(parts: list[CommMatrix], n: int) -> CommMatrix:
    if not parts:
        return CommMatrix(n, [], [], [], [])
    return CommMatrix(n, np.concatenate([p.src for p in parts]), np.concatenate([p.dst for p in parts]),
                      np.concatenate([p.msgs for p in parts]), np.concatenate([p.bytes for p in parts]))


# Patterns whose traffic is one MPI_Alltoall(v) per iteration (on the whole
# job, or on the rows then the columns of a process grid: fft), which
# rankwise's runs pin to the pairwise exchange (programs.smpi_alltoall_cfg).
EXCHANGE_PATTERNS = ("groups", "alltoallv", "fft")
JOB_WIDE_EXCHANGES = ("groups", "alltoallv")  # one MPI_Alltoallv over every rank (fft: its rows, columns)


def _exchange_lib():
    """The predictor's schedule builder (rankwise_predict.h)."""
    from rankwise._engine.predict import predict_lib

    return predict_lib()


def exchange_volumes(matrix: CommMatrix, iterations: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """One iteration of `matrix` as the steps of a pairwise exchange:
    (partner, bytes to it) per rank for steps 1 .. n-1. Step i pairs rank r
    with r XOR i (power-of-two jobs, SMPI's alltoallv__pair) or sends to
    r + i and receives from r - i (alltoallv__ring). A step in which no rank
    sends a byte is left out (a sub-communicator's exchange, e.g. the FFT's
    rows, never takes it); in the others every rank sendrecvs, an empty
    message where the matrix has none (SMPI sends those too)."""
    n = matrix.n_ranks
    if matrix.nnz == 0:
        return []
    keys = matrix.src.astype(np.int64) * n + matrix.dst  # sorted (CommMatrix keeps them so)
    volume = matrix.bytes // max(1, iterations)
    ranks = np.arange(n, dtype=np.int64)
    steps = []
    for i in range(1, n):
        dst = ranks ^ i if _pow2(n) else (ranks + i) % n
        want = ranks * n + dst
        pos = np.minimum(np.searchsorted(keys, want), keys.size - 1)
        vol = np.where(keys[pos] == want, volume[pos], 0)
        if vol.any():
            steps.append((dst, vol))
    return steps


def alltoallv_at_once(mpi: str, n: int) -> bool:
    """Whether `mpi` runs an n-rank MPI_Alltoallv with every send and
    receive posted at once (one concurrent phase), not as the pairwise
    exchange. "smpi": never (rankwise pins SMPI's, smpi_alltoall_cfg).
    "openmpi": as Open MPI 4.1's fixed decision (coll/tuned): basic linear
    from 4 to 63 ranks, 128 to 255 and from 1024 on, pairwise otherwise.
    "hydra" (MPICH, Intel MPI): MPICH's scattered algorithm posts its
    requests in blocks of 32, costed as at once. Any other: unknown, the
    pairwise exchange as before."""
    if mpi == "openmpi":
        return 4 <= n < 64 or 128 <= n < 256 or n >= 1024
    return mpi == "hydra"


# SMPI's smpi/send-is-detached-thresh: a smaller send returns at once (eager).
EAGER_BYTES = 65536


class ExchangeSchedule:
    """One iteration of a matrix exchanged pairwise (MPI_Sendrecv in a loop)
    as a predictor schedule, built once and simulated on any placement.
    Built as the predictor builds its pairwise all-to-all
    (engine/src/predict/builder.c): a transfer starts when both its sender
    and its receiver are done with the step before; a rank is done with a
    step at its receive and, unless the send was eager (< EAGER_BYTES), its
    send."""

    def __init__(self, matrix: CommMatrix, iterations: int):
        import ctypes as C
        import weakref

        from rankwise._engine import core as engine
        self.sched = None
        steps = exchange_volumes(matrix, iterations)
        if not steps:
            return
        n = matrix.n_ranks
        so = _exchange_lib()
        sched = C.c_void_p()
        engine.check(so.rw_sched_create(n, C.byref(sched)))
        self.sched = sched
        weakref.finalize(self, so.rw_sched_free, sched)
        front: list[list[int]] = [[] for _ in range(n)]  # what each rank's last step ended with
        deps = (C.c_int64 * 4)()
        tid = C.c_int64()
        for dst, vol in steps:
            nxt: list[list[int]] = [[] for _ in range(n)]
            for r in range(n):
                # Sender and receiver must both be done with the step before.
                ids = front[r] + front[int(dst[r])]
                for j, v in enumerate(ids):
                    deps[j] = v
                engine.check(so.rw_sched_add(sched, r, int(dst[r]), float(vol[r]), 0.0, len(ids),
                                             deps if ids else None, C.byref(tid)))
                nxt[int(dst[r])].append(tid.value)  # the receive ends the receiver's step
                if vol[r] >= EAGER_BYTES:  # a rendezvous send ends the sender's step too
                    nxt[r].append(tid.value)
            front = nxt

    def time(self, network, node_of) -> float:
        from rankwise.predict.predictor import simulate_schedule

        if self.sched is None:
            return 0.0
        return simulate_schedule(network, np.ascontiguousarray(node_of, dtype=np.int32), self.sched, True).time


def exchange_time(network, matrix: CommMatrix, iterations: int, node_of) -> float:
    """Predicted seconds of one iteration of `matrix` exchanged pairwise."""
    return ExchangeSchedule(matrix, iterations).time(network, node_of)


def stencil_phases(matrix: CommMatrix, dims, mode: str) -> list[CommMatrix]:
    """A forwarding halo exchange (stencil3d mode 2d / 3d, as
    rankwise-bench-stencil runs it) as its phases, in order: 3d ("2-2-2")
    axis by axis, 2d the plane of the first two axes then the last; ranks
    numbered as MPI_Cart_create numbers them (last coordinate fastest)."""
    dims = np.asarray(dims, dtype=np.int64)
    cs = np.stack(np.unravel_index(matrix.src.astype(np.int64), tuple(dims)))
    cd = np.stack(np.unravel_index(matrix.dst.astype(np.int64), tuple(dims)))
    moved = cs != cd  # per axis: does the pair differ along it
    if mode == "3d":
        phase = np.argmax(moved, axis=0)  # each message moves along one axis
        count = 3
    else:
        phase = moved[2].astype(np.int64)  # the last axis comes second
        count = 2
    out = []
    for k in range(count):
        keep = phase == k
        if keep.any():
            out.append(CommMatrix(matrix.n_ranks, matrix.src[keep], matrix.dst[keep], matrix.msgs[keep],
                                  matrix.bytes[keep]))
    return out


@dataclass
class CostedCall:
    """A recorded call and what it sends: `call.calls` times its stages, in
    sequence, on the communicator's ranks."""

    call: CollectiveCall
    ranks: np.ndarray  # world ranks in communicator order
    stages: list[Stage]


@dataclass
class Workload:
    """Point-to-point traffic (one concurrent phase per iteration) and
    collective calls (their algorithms' schedules), over n_ranks ranks."""

    n_ranks: int
    p2p: CommMatrix | None
    iterations: int = 1  # the point-to-point part's phases (a pattern's iterations)
    calls: list[CostedCall] = field(default_factory=list)
    exchange: bool = False  # p2p is one pairwise-exchanged all-to-all(v) per iteration
    phases: list[CommMatrix] | None = None  # p2p's phases in sequence (None: one phase)
    _schedule: ExchangeSchedule | None = field(default=None, repr=False, compare=False)

    def sent(self) -> CommMatrix:
        """Every byte the job moves, collectives as their algorithms send
        them: the matrix the search's own objectives work on."""
        parts = [self.p2p] if self.p2p is not None and self.p2p.nnz else []
        for c in self.calls:
            for s in c.stages:
                parts.append(_embed(sent_matrix(s, c.ranks.size), c.ranks, self.n_ranks, c.call.calls))
        return _add(parts, self.n_ranks)

    def time(self, network, node_of) -> float:
        """Predicted seconds for the whole workload with rank r on node
        node_of[r] of `network` (a PredictNetwork): the point-to-point
        phases, then every call, one after the other."""
        from rankwise.predict.predictor import predict_collective, predict_traffic

        node_of = np.ascontiguousarray(node_of, dtype=np.int32)
        total = 0.0
        if self.p2p is not None and self.p2p.nnz and self.exchange:
            if self._schedule is None:  # built once, simulated per placement
                self._schedule = ExchangeSchedule(self.p2p, self.iterations)
            total += self.iterations * self._schedule.time(network, node_of)
        elif self.p2p is not None and self.p2p.nnz:
            for phase in self.phases or [self.p2p]:
                total += self.iterations * predict_traffic(network, phase, node_of,
                                                           iterations=self.iterations).time
        for c in self.calls:
            nodes = node_of[c.ranks]
            for s in c.stages:
                if isinstance(s, Phase):
                    t = predict_traffic(network, s.matrix, nodes).time
                else:
                    t = predict_collective(network, s.op, s.algorithm, s.nbytes, nodes, root=s.root).time
                total += c.call.calls * t
        return total


def _pattern_params(matrix: CommMatrix):
    from rankwise.traffic.patterns import parse_pattern_spec

    if not matrix.pattern:
        return None
    try:
        return parse_pattern_spec(matrix.pattern)
    except RankwiseError:
        return None


def recorded_calls(matrix: CommMatrix) -> list[CollectiveCall]:
    """The collective calls a matrix stands for: a `collective` or
    `alltoall` pattern is one call repeated `iterations` times; a profile
    lists its grouped calls in `matrix.collectives` (the `collective`
    pattern fills them too: then they are the pattern's call)."""
    calls = list(matrix.collectives)
    spec = _pattern_params(matrix)
    if not calls and spec is not None and spec.name in ("collective", "alltoall"):
        p = spec.params
        op = p.get("op", "bcast") if spec.name == "collective" else "alltoall"
        calls.append(CollectiveCall(op, int(p["bytes"]), calls=int(p.get("iterations", 1)),
                                    root=int(p.get("root", 0))))
    return calls


def workload_of(matrix: CommMatrix, stages=smpi_stages, mpi: str = "smpi") -> Workload:
    """Split a matrix into its point-to-point part and its collective calls
    (module docstring). `stages(op, n, nbytes, root)` says what one call
    sends (default: SMPI's default selector); `mpi` is what runs the job
    ("smpi", or launcher_kind's "openmpi", "hydra", "other"), which says
    how a job-wide all-to-allv goes (alltoallv_at_once)."""
    n = matrix.n_ranks
    costed, logical = [], []
    for call in recorded_calls(matrix):
        ranks = np.arange(n, dtype=np.int64) if call.ranks is None else np.asarray(call.ranks, dtype=np.int64)
        if ranks.size and (ranks.min() < 0 or ranks.max() >= n):
            raise RankwiseError(f"{call.op}: a communicator rank is outside the matrix's {n} ranks")
        costed.append(CostedCall(call, ranks, stages(call.op, ranks.size, call.bytes, call.root)))
        if ranks.size >= 2:
            logical.append(_embed(logical_matrix(call.op, ranks.size, call.bytes, call.root), ranks, n,
                                  call.calls))
    p2p = _subtract(matrix, _add(logical, n)) if logical else matrix
    spec = _pattern_params(matrix)
    iterations = int(spec.params.get("iterations", 1)) if spec is not None else 1
    exchange = spec is not None and spec.name in EXCHANGE_PATTERNS and not (
        spec.name in JOB_WIDE_EXCHANGES and alltoallv_at_once(mpi, n))
    phases = None
    if spec is not None and spec.name == "stencil3d" and spec.params.get("mode") in ("2d", "3d") \
            and p2p is matrix and "grid" in spec.params:
        phases = stencil_phases(matrix, spec.params["grid"], spec.params["mode"])
    return Workload(n, p2p if p2p.nnz else None, max(1, iterations), costed, exchange, phases)
