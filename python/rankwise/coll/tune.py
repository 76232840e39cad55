"""Decisions for an allocation and the rules file that carries them.

`tune_allocation` decides every (operation, size class, root) of one
communicator (MPI_COMM_WORLD of the allocation) with the predictor
(binding.decide); `format_rules` writes them in the format the engine's
reader takes (docs/collectives-selection.md, "The rules file")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

import numpy as np

from rankwise.coll.binding import ALL_OPS, Decision, TuneOptions, decide
from rankwise.predict import PredictNetwork

RULES_VERSION = 1
BYTES_MAX = (1 << 63) - 1


@dataclass
class Rule:
    op: str
    root: int  # -1: any root (allreduce, allgather have none)
    lo: int  # bytes, inclusive
    hi: int  # bytes, inclusive
    decision: Decision


def size_classes(sizes: Sequence[int]) -> list[tuple[int, int, int]]:
    """(lo, hi, decided at) per size: class k holds sizes[k] up to the next
    size (the first from 0, the last without end)."""
    out = []
    for k, s in enumerate(sizes):
        lo = 0 if k == 0 else int(s)
        hi = int(sizes[k + 1]) - 1 if k + 1 < len(sizes) else BYTES_MAX
        out.append((lo, hi, int(s)))
    return out


def tune_allocation(network: PredictNetwork, node_of, ops: Iterable[str], sizes: Sequence[int],
                    roots: Iterable[int], options: TuneOptions | None = None,
                    progress: Callable[[str], None] | None = None) -> list[Rule]:
    """A rule per (op, root, size class), decided at the class's size;
    allreduce and allgather: one rule per size class, for any root."""
    rules = []
    for op in ops:
        for root in ([-1] if op in ALL_OPS else roots):
            for lo, hi, at in size_classes(sizes):
                if progress:
                    progress(f"{op} {'' if root < 0 else f'root {root} '}{at} B")
                d = decide(network, node_of, op, at, max(int(root), 0), options)
                rules.append(Rule(op, int(root), lo, hi, d))
    return rules


def merge_passthrough(rules: list[Rule]) -> list[Rule]:
    """Neighbouring size classes of one (op, root) that both pass through
    become one rule."""
    out: list[Rule] = []
    for r in rules:
        prev = out[-1] if out else None
        if (prev is not None and prev.op == r.op and prev.root == r.root and prev.hi + 1 == r.lo
                and prev.decision.chosen == 0 and r.decision.chosen == 0):
            out[-1] = Rule(prev.op, prev.root, prev.lo, r.hi, prev.decision)
        else:
            out.append(r)
    return out


def sibling_order(parents: np.ndarray, children: np.ndarray) -> np.ndarray:
    """Each rank's place among its siblings (0 = sent to first), from the
    engine's child array (children grouped by parent, in send order)."""
    order = np.zeros(parents.size, dtype=np.int64)
    seen: dict[int, int] = {}
    for c in children:
        p = int(parents[c])
        order[c] = seen.get(p, 0)
        seen[p] = order[c] + 1
    return order


def _ints(values) -> str:
    return ",".join(str(int(v)) for v in values)


def format_rules(rules: list[Rule], comm_size: int, *, ranks_per_node: str, eager_limit: int, min_gain: float,
                 model: str, nodes: Sequence[str]) -> str:
    lines = [
        "# rankwise collective rules: what `rankwise coll tune` chose for one allocation",
        "# (docs/collectives-selection.md). A call matches the first rule of its operation,",
        "# communicator size, root and byte range; no match passes through to the MPI.",
        f"rankwise-coll-rules {RULES_VERSION}",
        f"comm-size {comm_size}",
        f"ranks-per-node {ranks_per_node}",
        f"eager-limit {eager_limit}",
        f"min-gain {min_gain:g}",
        f"model {model}",
        f"nodes {','.join(nodes)}",
    ]
    for r in merge_passthrough(rules):
        d = r.decision
        c = d.choice
        words = [f"rule op={r.op} root={'*' if r.root < 0 else r.root} bytes={r.lo}:{r.hi}"]
        if d.chosen == 0:
            words.append("alg=passthrough segment=0")
        elif r.op in ALL_OPS or c.algorithm != "tree":  # the library's own algorithm (trinary), by its name
            words.append(f"alg={c.algorithm} segment=0")
        else:
            words.append(f"alg=tree segment={c.segment} via={c.source}")
        words.append(f"predicted={c.time:.6g} passthrough-alg={d.passthrough.algorithm} "
                     f"passthrough-predicted={d.passthrough.time:.6g} gain={d.gain:.4f}")
        if d.chosen != 0 and c.parents is not None:
            words.append(f"parents={_ints(c.parents)} order={_ints(sibling_order(c.parents, c.children))}")
        lines.append(" ".join(words))
    return "\n".join(lines) + "\n"


# The trees rw_coll_decide builds per operation (docs/collectives-selection.md).
CONSTRUCTIONS = {
    "bcast": ("binomial", "eager", "chain", "binary", "trinary"),
    "reduce": ("binomial", "eager", "trinary"),
    "gather": ("binomial", "eager", "volume"),
    "scatter": ("binomial", "eager", "volume"),
    "allreduce": ("binomial", "knomial", "recursive_doubling", "ring", "hier", "trinary"),
    "allgather": ("binomial", "knomial", "recursive_doubling", "ring", "hier", "multiring"),
    "alltoall": ("pairwise", "symmetric"),
}


def restrict(decision: Decision, source: str, min_gain: float) -> Decision:
    """The decision with rankwise limited to one construction (the
    passthrough and the first candidate, binomial or pairwise, stay as
    references): that construction's fastest candidate when it is min_gain
    faster than the passthrough."""
    keep = [c for c in decision.candidates[2:] if c.source == source]
    cands = decision.candidates[:2] + keep
    pool = range(2, len(cands)) if source != decision.candidates[1].source else [1]
    best = min(pool, key=lambda i: cands[i].time, default=None)
    p = cands[0].time
    chosen = best if best is not None and cands[best].time <= (1 - min_gain) * p else 0
    gain = 1 - cands[chosen].time / p if p > 0 and np.isfinite(p) else 0.0
    return Decision(decision.op, decision.root, decision.nbytes, cands, chosen, gain)
