"""The mapper's final decision, made by the predictor (docs/concepts/mapping.md,
"Decisions"; docs/concepts/prediction.md).

The searches (the C engine's algorithms under their sum objectives, and the
congestion search of rankwise.congestion) propose placements; the predictor
costs each one on the job's workload (rankwise.workload: point-to-point
traffic as one concurrent phase, collective calls by their algorithms'
schedules) and the fastest wins. It replaces the launchers' default block
placement only when predicted at least `min_gain` faster; the gain printed
everywhere (map, optimize, demo, bench) is the predictor's.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from rankwise._engine import map as map_engine
from rankwise.map.congestion import Congestion, relabel_search
from rankwise.util.errors import UsageError
from rankwise.map.mapping import MapResult, Network, grid_of, map_ranks
from rankwise.traffic.matrix import CommMatrix
from rankwise.predict.workload import Workload, workload_of

# The search objective each candidate set also tries besides the one asked for.
_OTHER = {"time": "bottleneck", "bottleneck": "time"}
# Jobs up to this size are also searched under the objective not asked for.
OTHER_OBJECTIVE_MAX_RANKS = 4096
# Node caps within this fraction of the allocation's median are one value in
# the second reading of the network (steady_caps): a probe's noise.
CAP_NOISE = 0.10


def steady_caps(predictor):
    """The same network with every node cap within CAP_NOISE of the median
    cap set to the median. A model's caps are the best bandwidth each node
    showed (PredictNetwork.from_model): the maximum of noisy samples, a few
    per cent apart on identical NICs. A search that moves a root onto the
    luckiest sample finds a gain that is not there; judged on both readings,
    it is not taken. Caps that stand out (a slow NIC) stay."""
    import dataclasses

    def steady(caps):
        if caps is None or caps.size == 0:
            return caps
        med = float(np.median(caps))
        return np.where(np.abs(caps - med) <= CAP_NOISE * med, med, caps)

    return dataclasses.replace(predictor, inject=steady(predictor.inject), eject=steady(predictor.eject))


@dataclass
class Candidate:
    name: str  # what proposed it: 'default', 'anneal (time)', 'anneal (time) + congestion', ...
    node_of: np.ndarray
    slot_of: np.ndarray
    time: float = float("nan")  # predicted seconds of the workload
    steady: float = float("nan")  # the same on steady_caps(network)


@dataclass
class Decision:
    """The placement decided and why: every candidate with its predicted
    time; `result` is the winner as a MapResult whose cost and block_cost
    are the predicted seconds (so result.gain is the predicted speed-up)."""

    result: MapResult
    default: Candidate
    chosen: Candidate
    candidates: list[Candidate] = field(default_factory=list)
    search: MapResult | None = None  # the C search under the objective asked for
    workload: Workload | None = None
    predictor: object = None  # the PredictNetwork that judged

    @property
    def gain(self) -> float:
        return self.default.time / self.chosen.time if self.chosen.time > 0 else 1.0


def block_placement(network: Network, n_ranks: int) -> tuple[np.ndarray, np.ndarray]:
    """The launchers' default: ranks fill the nodes in allocation order."""
    node = np.repeat(np.arange(network.n_nodes, dtype=np.int32), network.slots)[:n_ranks]
    slot = np.concatenate([np.arange(s, dtype=np.int32) for s in network.slots])[:n_ranks] \
        if network.n_nodes else np.zeros(0, np.int32)
    return node, slot


def _slots_in_rank_order(node_of: np.ndarray, n_nodes: int) -> np.ndarray:
    slot = np.zeros(node_of.size, dtype=np.int32)
    seen = np.zeros(n_nodes, dtype=np.int32)
    for r, v in enumerate(node_of):
        slot[r] = seen[v]
        seen[v] += 1
    return slot


def cross_group_bytes(sent: CommMatrix, node_of: np.ndarray, groups: np.ndarray) -> int:
    """Bytes between ranks whose nodes are in different groups."""
    g = groups[node_of]
    return int(sent.bytes[g[sent.src] != g[sent.dst]].sum())


def decide(matrix: CommMatrix, network: Network, predictor, *, workload: Workload | None = None,
           algorithm: str = "auto", objective: str = "time", selection: str = "weighted", seed: int = 1,
           time_limit: float = 0.0, grid=None, periodic=None, use_pattern: bool = True,
           min_gain: float = 0.02, groups: np.ndarray | None = None) -> Decision:
    """Search placements of `matrix` on `network` and keep the one the
    predictor (`predictor`, a PredictNetwork of the same nodes in the same
    order) rates fastest, unless the default block placement is within
    min_gain of it. `workload` overrides what the matrix stands for
    (workload_of(matrix): its recorded collective calls by SMPI's default
    algorithms). `groups`: the model's group of each node (Model.groups,
    in the network's order), for the engine's RW_UNSEEN_LINK_MARGIN."""
    if objective not in _OTHER:
        raise UsageError(f"the predictor decides for the time and bottleneck objectives, not '{objective}'")
    if predictor.n_nodes != network.n_nodes or list(predictor.names) != list(network.names):
        raise UsageError("the predictor's network must hold the allocation's nodes in its order")
    t0 = time.monotonic()
    wl = workload if workload is not None else workload_of(matrix)
    n = matrix.n_ranks
    # Collectives as their algorithms send them; plain traffic as it is (its
    # pattern names the process grid).
    search_matrix = wl.sent() if wl.calls else matrix
    if grid is None and use_pattern and search_matrix is not matrix:
        found = grid_of(matrix)
        if found is not None:
            grid, periodic = found[0], found[1] if periodic is None else periodic

    node, slot = block_placement(network, n)
    default = Candidate("default", node, slot)
    candidates = [default]
    search = None
    # The other objective's search too, while searches are cheap.
    objectives = [objective] if algorithm == "block" or n > OTHER_OBJECTIVE_MAX_RANKS \
        else [objective, _OTHER[objective]]
    for obj in objectives:
        r = map_ranks(search_matrix, network, algorithm=algorithm, objective=obj, selection=selection, seed=seed,
                      time_limit=time_limit, grid=grid, periodic=periodic, use_pattern=use_pattern, min_gain=0.0)
        search = search or r
        candidates.append(Candidate(f"{r.algorithm} ({obj})", r.node_of, r.slot_of))
    congestion = Congestion(predictor, search_matrix, n)
    for c in list(candidates):
        moved = relabel_search(congestion, c.node_of, network.slots).astype(np.int32)
        if not np.array_equal(moved, c.node_of):
            candidates.append(Candidate(f"{c.name} + congestion", moved,
                                        _slots_in_rank_order(moved, network.n_nodes)))

    seen: dict[bytes, tuple[float, float]] = {}
    steady = steady_caps(predictor)
    for c in candidates:
        key = c.node_of.tobytes()
        if key not in seen:
            seen[key] = wl.time(predictor, c.node_of), wl.time(steady, c.node_of)
        c.time, c.steady = seen[key]
    # The fastest candidate that beats the default on both readings by the engine's
    # rule (rw_decision_bar: min_gain; without shared-link capacities in the network, a
    # candidate that sends more bytes between the model's groups than the default needs
    # RW_UNSEEN_LINK_MARGIN, as the job's reorder).
    bar = map_engine.lib().rw_decision_bar
    unseen = groups is not None and not predictor.links
    if unseen:
        groups = np.asarray(groups)
        base = cross_group_bytes(search_matrix, default.node_of, groups)

    def keep(c: Candidate) -> float:
        more = unseen and cross_group_bytes(search_matrix, c.node_of, groups) > base
        return bar(min_gain, int(more))

    winners = [c for c in candidates[1:] if c.time < default.time * keep(c) and c.steady < default.steady * keep(c)]
    chosen = min(winners, key=lambda c: c.time) if winners else default
    result = MapResult(network, chosen.node_of.copy(), chosen.slot_of.copy(), "predicted",
                       "block" if chosen is default else chosen.name, chosen.time, default.time,
                       search.start_cost if search else default.time, time.monotonic() - t0,
                       int(np.unique(chosen.node_of).size))
    return Decision(result, default, chosen, candidates, search, wl, predictor)


def predicted_speedup(workload: Workload, predictor, before, after) -> float:
    """Predicted time of the default placement / of rankwise's, for a workload
    (a benchmark row's own size)."""
    b, a = workload.time(predictor, before), workload.time(predictor, after)
    return b / a if a > 0 else float("nan")
