"""The ranks and nodes a prediction runs on: the limits on ranks, block placements over an
allocation's slots, a collective's allocation on a model or a generated platform's ground truth."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Optional

import numpy as np

from rankwise.util.errors import RankwiseError, UsageError

# The predictor's time grows faster than the square of the ranks (4,096 ranks: ~2 min per size on
# one core): beyond these a prediction would run for hours, uninterruptible inside the engine.
MAX_RANKS = 4096
MAX_RANKS_PER_NODE = 1024


def check_ranks(ranks: Optional[int], nodes: Optional[int] = None) -> None:
    """--ranks of predict --op, coll predict and coll tune: 1..MAX_RANKS, and at most MAX_RANKS_PER_NODE on each of
    the allocation's `nodes` (when known)."""
    if ranks is None or ranks < 1:
        raise UsageError(f"--ranks must be >= 1, got {ranks}")
    if ranks > MAX_RANKS:
        raise UsageError(f"--ranks {ranks}: at most {MAX_RANKS} ranks (the prediction's time grows with the "
                         "square of the ranks)")
    if nodes is not None and ranks > nodes * MAX_RANKS_PER_NODE:
        raise UsageError(f"--ranks {ranks}: the allocation's {nodes} node(s) hold at most "
                         f"{nodes * MAX_RANKS_PER_NODE} ranks ({MAX_RANKS_PER_NODE} per node)")


def block_counts(ranks: int, slots: list[int], ranks_per_node: Optional[int], where: str) -> list[int]:
    """Ranks per node of a block placement, in allocation order: ranks_per_node
    on each node (the last one may hold fewer), or the nodes' slots filled in
    turn when not given. UsageError when the ranks do not fit."""
    if ranks < 1:
        raise UsageError(f"--ranks must be >= 1, got {ranks}")
    if ranks_per_node is not None:
        if ranks_per_node < 1:
            raise UsageError(f"--ranks-per-node must be >= 1, got {ranks_per_node}")
        need = math.ceil(ranks / ranks_per_node)
        if need > len(slots):
            raise UsageError(f"{ranks} ranks at {ranks_per_node} per node need {need} nodes, "
                             f"{where} has {len(slots)}")
        return [min(ranks_per_node, ranks - i * ranks_per_node) for i in range(need)]
    if sum(slots) < ranks:
        raise UsageError(f"{ranks} ranks do not fit the {sum(slots)} slots of {where} "
                         "(--ranks-per-node K overrides the slots)")
    counts, left = [], ranks
    for s in slots:
        if left == 0:
            break
        counts.append(min(s, left))
        left -= counts[-1]
    return counts



def subset_network(net, idx: list[int]):
    """The network restricted to nodes idx (in that order)."""

    from rankwise.predict.predictor import PredictNetwork, SharedLink

    ix = np.asarray(idx, dtype=np.int64)
    where = {int(old): new for new, old in enumerate(ix)}
    links = []
    for link in net.links:
        keep = [(where[int(a)], where[int(b)]) for a, b in link.pairs if int(a) in where and int(b) in where]
        if keep:
            links.append(SharedLink(link.name, link.capacity, np.asarray(keep, dtype=np.int32), link.confirmed))
    pick = (lambda v: None if v is None else v[ix])
    return PredictNetwork([net.names[i] for i in ix], net.alpha[np.ix_(ix, ix)], net.beta[np.ix_(ix, ix)],
                          overhead=pick(net.overhead), recv_overhead=pick(net.recv_overhead), inject=pick(net.inject),
                          eject=pick(net.eject), links=links, sharing=net.sharing, duplex=pick(net.duplex))


def node_names(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise UsageError("--nodes is empty (a list of node names like n0,n1)")
    if len(set(names)) != len(names):
        raise UsageError("--nodes names a node twice")
    return names


def pick_nodes(all_names: list[str], hostfile: Optional[Path], nodes: Optional[str], where: str):
    """[(name, slots or None)] of the allocation."""
    from rankwise.cluster.allocation import read_allocation

    if hostfile is not None and nodes is not None:
        raise UsageError("give the allocation as --hostfile FILE or --nodes LIST, not both")
    if hostfile is not None:
        hosts = [(h, int(s)) for h, s in read_allocation(hostfile)]
    elif nodes is not None:
        hosts = [(h, None) for h in node_names(nodes)]
    else:
        return [(h, None) for h in all_names]
    known = set(all_names)
    unknown = [h for h, _ in hosts if h not in known]
    if unknown:
        raise RankwiseError(f"node '{unknown[0]}' is not in {where}")
    return hosts


def collective_allocation(model_path: Optional[Path], platform: Optional[Path], hostfile: Optional[Path],
                nodes: Optional[str], ranks: int, ranks_per_node: Optional[int], overhead: Optional[float],
                allow_missing: bool, recv_overhead: Optional[float] = None):
    """A collective's allocation, for `coll predict`, `coll tune` and the studies: (the
    predictor's network over the nodes used, rank -> node, ranks on each node, the model's
    knee or 0, a label)."""

    from rankwise.predict.predictor import PredictNetwork, placement

    if (model_path is None) == (platform is None):
        raise UsageError("give the network as --model FILE (measured) or --platform DIR (a generated "
                         "platform's ground truth)")
    check_ranks(ranks)
    for flag, value in (("--overhead", overhead), ("--recv-overhead", recv_overhead)):
        if value is not None and not (0 <= value < 1):
            raise UsageError(f"{flag} must be in [0, 1) seconds, got {value:g}")
    knee = 0
    if platform is not None:
        full = PredictNetwork.from_ground_truth(platform)
        hosts = pick_nodes(full.names, hostfile, nodes, f"the platform {platform}")
        label = platform.name or str(platform)
    else:
        from rankwise.model.model import Model

        model = Model.load(model_path)
        hosts = pick_nodes(list(model.names), hostfile, nodes, f"the model {model_path}")
        knee = int(model.knee or 0)
        label = model_path.name
    check_ranks(ranks, len(hosts))
    even = math.ceil(ranks / len(hosts))
    slots = [s if s is not None else even for _, s in hosts]
    counts = block_counts(ranks, slots, ranks_per_node, f"the allocation ({len(hosts)} nodes)")
    used = [h for h, _ in hosts[: len(counts)]]
    if platform is not None:
        index = {n: i for i, n in enumerate(full.names)}
        net = subset_network(full, [index[h] for h in used])
    else:
        # the probe's alpha holds the overheads: taken out of it (as the library's RANKWISE_MODEL)
        net = PredictNetwork.from_model(model, [(h, 1) for h in used], fill_missing=allow_missing, overheads=True,
                                        send_overhead=overhead, recv_overhead=recv_overhead)
        return net, placement(counts), counts, knee, label
    if overhead is not None:
        net.overhead = np.full(net.n_nodes, float(overhead))
    if recv_overhead is not None:
        net.recv_overhead = np.full(net.n_nodes, float(recv_overhead))
    return net, placement(counts), counts, knee, label
