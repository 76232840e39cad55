"""A placement: for every rank of a job, the node (host) and the slot (core
index on that node) it runs on. What `rankwise map` computes and what the
launcher files (rankwise.cluster.launcher_files) carry."""

from __future__ import annotations

import re

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rankwise.util.errors import RankwiseError


def host_problem(name: str) -> str | None:
    """Why a host name cannot go into every launcher file, or None.

    The files are split at whitespace, cut at '#' (Hydra, rankfiles), and use
    ':' (HOST:N), '=' (rank N=HOST) and ',' (lists); Hydra's configfile takes
    no quotes; a leading '-' reads as an option and a leading '+' as Open MPI's
    relative '+nN' node."""
    if not name:
        return "it is empty"
    if any(c.isspace() or not c.isprintable() for c in name):
        return "it contains whitespace or a control character"
    bad = sorted(set(name) & set(":#=,'\"\\"))
    if bad:
        return f"it contains {''.join(bad)!r}"
    if name[0] in "-+":
        return f"it starts with '{name[0]}'"
    return None


@dataclass(frozen=True, eq=False)
class Placement:
    nodes: tuple[str, ...]  # the allocation's host names; node ids index it
    node_of: np.ndarray  # int32 per rank
    slot_of: np.ndarray  # int32 per rank

    def __post_init__(self):
        node_of = np.asarray(self.node_of, dtype=np.int32)
        slot_of = np.asarray(self.slot_of, dtype=np.int32)
        object.__setattr__(self, "nodes", tuple(self.nodes))
        object.__setattr__(self, "node_of", node_of)
        object.__setattr__(self, "slot_of", slot_of)
        if node_of.ndim != 1 or node_of.shape != slot_of.shape:
            raise RankwiseError("a placement needs one node and one slot per rank")
        for h in self.nodes:
            problem = host_problem(h)
            if problem:
                raise RankwiseError(f"host name {h!r} cannot be written to a launcher file: {problem}")
        if len(set(self.nodes)) != len(self.nodes):
            dup = next(h for h in self.nodes if self.nodes.count(h) > 1)
            raise RankwiseError(f"host '{dup}' is listed twice in the placement")
        bad = np.flatnonzero((node_of < 0) | (node_of >= len(self.nodes)) | (slot_of < 0))
        if bad.size:
            r = int(bad[0])
            raise RankwiseError(f"rank {r} is placed on node {int(node_of[r])} slot {int(slot_of[r])} "
                                f"(the placement has {len(self.nodes)} nodes)")
        key = node_of.astype(np.int64) * (int(slot_of.max(initial=0)) + 1) + slot_of
        uniq, first, counts = np.unique(key, return_index=True, return_counts=True)
        if np.any(counts > 1):
            k = int(np.flatnonzero(counts > 1)[0])
            r = int(np.sort(np.flatnonzero(key == uniq[k]))[1])
            raise RankwiseError(f"rank {r} shares slot {int(slot_of[r])} of {self.nodes[node_of[r]]} "
                                f"with rank {int(first[k])}")

    @property
    def n_ranks(self) -> int:
        return int(self.node_of.size)

    def validate(self, slots: Sequence[int] | None = None) -> None:
        """Refuse a slot beyond its node's capacity (slots: one count per node;
        None: only the checks every placement passes on creation)."""
        if slots is None:
            return
        if len(slots) != len(self.nodes):
            raise RankwiseError(f"{len(slots)} slot counts for a placement on {len(self.nodes)} nodes")
        cap = np.asarray(slots)[self.node_of]
        over = np.flatnonzero(self.slot_of >= cap)
        if over.size:
            r = int(over[0])
            raise RankwiseError(f"rank {r} is on slot {int(self.slot_of[r])} of {self.nodes[self.node_of[r]]}, "
                                f"which has {int(cap[r])} slots")

    def hosts_in_rank_order(self) -> list[str]:
        return [self.nodes[v] for v in self.node_of.tolist()]

    def used_nodes(self) -> list[str]:
        """Nodes holding ranks, in order of their first rank."""
        return list(dict.fromkeys(self.hosts_in_rank_order()))

    def ranks_per_node(self) -> dict[str, int]:
        counts = np.bincount(self.node_of, minlength=len(self.nodes))
        return {h: int(c) for h, c in zip(self.nodes, counts) if c}

    def runs(self) -> list[tuple[str, int]]:
        """Consecutive ranks on the same host as (host, count): what
        machinefiles and configfiles write, in rank order."""
        out: list[tuple[str, int]] = []
        for h in self.hosts_in_rank_order():
            if out and out[-1][0] == h:
                out[-1] = (h, out[-1][1] + 1)
            else:
                out.append((h, 1))
        return out

    @classmethod
    def block(cls, nodes: Sequence[str], slots: Sequence[int], n_ranks: int) -> "Placement":
        """The launchers' default: fill the first node's slots, then the next."""
        if len(slots) != len(nodes):
            raise RankwiseError(f"{len(slots)} slot counts for {len(nodes)} nodes")
        if any(s < 0 for s in slots) or n_ranks < 0:
            raise RankwiseError("slot counts and the rank count cannot be negative")
        if sum(slots) < n_ranks:
            raise RankwiseError(f"the allocation has {sum(slots)} slots for {n_ranks} ranks")
        node_of = np.repeat(np.arange(len(nodes)), slots)[:n_ranks]
        slot_of = np.concatenate([np.arange(s) for s in slots])[:n_ranks] if len(slots) else np.zeros(0)
        return cls(tuple(nodes), node_of, slot_of)

    @classmethod
    def from_hosts(cls, hosts: Sequence[str]) -> "Placement":
        """Hosts in rank order (slots: the k-th rank on a host takes slot k)."""
        nodes = list(dict.fromkeys(hosts))
        index = {h: i for i, h in enumerate(nodes)}
        node_of = np.array([index[h] for h in hosts], dtype=np.int32)
        slot_of = np.zeros(len(hosts), dtype=np.int32)
        seen: dict[int, int] = {}
        for r, v in enumerate(node_of.tolist()):
            slot_of[r] = seen.get(v, 0)
            seen[v] = slot_of[r] + 1
        return cls(tuple(nodes), node_of, slot_of)

    def __eq__(self, other) -> bool:
        if not isinstance(other, Placement):
            return NotImplemented
        return (self.hosts_in_rank_order() == other.hosts_in_rank_order()
                and np.array_equal(self.slot_of, other.slot_of))

    __hash__ = None


_RANK_NODE = re.compile(r"(.+):(\d+)")


def launch_host(node: str) -> str:
    """The host a launcher knows a model node by: a probe run with
    --group-by rank names each rank HOST:RANK (one host, every rank a node)."""
    m = _RANK_NODE.fullmatch(node)
    return m.group(1) if m else node


def placement_on_nodes(names: Sequence[str], node_of, slot_of) -> Placement:
    """A placement over a model's nodes; nodes that are ranks of one host
    (HOST:RANK) become that host, with slots numbered per host."""
    if any(_RANK_NODE.fullmatch(h) for h in names):
        return Placement.from_hosts([launch_host(names[v]) for v in np.asarray(node_of).tolist()])
    return Placement(tuple(names), node_of, slot_of)
