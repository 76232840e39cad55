"""Decisions for an allocation and the rules file that carries them.

`tune_allocation` decides every (operation, size class, root) of one
communicator (MPI_COMM_WORLD of the allocation) with the predictor
(binding.decide); `format_rules` writes them in the format the engine's
reader takes (docs/concepts/collectives.md, "The rules file")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

import numpy as np

from rankwise.coll.selection import ALL_OPS, Decision, TuneOptions, decide
from rankwise.predict.predictor import PredictNetwork

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
            classes = size_classes(sizes)

            def step(at: int, op=op, root=root) -> None:
                if progress:
                    progress(f"{op} {'' if root < 0 else f'root {root} '}{at} B")

            decisions = decide_sizes(network, node_of, op, [at for _, _, at in classes], max(int(root), 0),
                                     options, step)
            rules += [Rule(op, int(root), lo, hi, d) for (lo, hi, _), d in zip(classes, decisions)]
    return rules


def decide_sizes(network: PredictNetwork, node_of, op: str, sizes: Sequence[int], root: int = 0,
                 options: TuneOptions | None = None,
                 before: Callable[[int], None] | None = None) -> list[Decision]:
    """A decision per size, in the order given; each size's eager search
    also starts from the previous (smaller) size's fastest tree."""
    out, start, last = [], None, -1
    for at in sizes:
        if before:
            before(at)
        d = decide(network, node_of, op, at, root, options, start if at >= last else None)
        out.append(d)
        start, last = fastest_whole_tree(d), at
    return out


def fastest_whole_tree(d: Decision) -> tuple | None:
    """(parents, order) of the decision's fastest unsegmented tree of
    rankwise: the next size's eager search starts from it too, since a
    search from the greedy alone can end in a worse local optimum than the
    tree one size down (docs/concepts/collectives.md)."""
    trees = [c for c in d.candidates[1:] if c.parents is not None and c.segment == 0]
    if not trees:
        return None
    best = min(trees, key=lambda c: c.time)
    return best.parents, sibling_order(best.parents, best.children)


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
                 model: str, nodes: Sequence[str], trinary_order: Sequence[int] | None = None,
                 ring_order: Sequence[int] | None = None) -> str:
    """The rules file's text. trinary_order (binding.trinary_order): the
    ranks in the order the trinary candidates were costed in, which the
    library must lay its trees in to run what was costed; ring_order
    (selection.ring_order) likewise for the multi-ring allgather's rings;
    each written when given."""
    lines = [
        "# rankwise collective rules: what `rankwise coll tune` chose for one allocation",
        "# (docs/concepts/collectives.md). A call matches the first rule of its operation,",
        "# communicator size, root and byte range; no match passes through to the MPI.",
        f"rankwise-coll-rules {RULES_VERSION}",
        f"comm-size {comm_size}",
        f"ranks-per-node {ranks_per_node}",
        f"eager-limit {eager_limit}",
        f"min-gain {min_gain:g}",
        f"model {model}",
        f"nodes {','.join(nodes)}",
    ]
    if trinary_order is not None:
        lines.append(f"trinary-order {_ints(trinary_order)}")
    if ring_order is not None:
        lines.append(f"ring-order {_ints(ring_order)}")
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


# The trees rw_coll_decide builds per operation (docs/concepts/collectives.md).
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
