"""What changed between two models of the same network: pairs, nodes,
shared links and groups, beyond what each model measured as its noise.

A pair changed when, at some message size, the round trips of the two
models do not overlap (the range [min, max] over the kept samples of every
round, docs/reference/formats.md "Statistics") and their medians differ by more than
`threshold` (a relative floor: a simulated network has no noise at all, and
a change of 0.1 % is not one to act on), either way: the engine's drift rule
(rw_drift_strength), which the live model in the job applies too. The pair's
change is the ratio of the medians (after / before) at its most changed such size.

Changed pairs are then explained, as a degraded node or uplink would show
(the same reasoning as rankwise.anomalies, applied to the change):
- a shared link changed when most of the pairs whose flows cross it changed
  (the model's own `link` lines, or, without them, each group's uplink: the
  pairs with one end in the group);
- a node changed when most of its pairs not explained by a changed link
  changed;
- groups changed when the grouping of the nodes (the model's `group` lines,
  else the engine's grouping of the latencies) differs."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from rankwise._engine import core as engine
from rankwise.model.model import MEASURED, MISSING, Model

THRESHOLD = 0.10  # a median 10 % away, outside the other model's range, is a change
SHARE = 0.75  # a link or a node changed when this share of its pairs changed...
MIN_PAIRS = 2  # ...and it has at least this many compared pairs


@dataclass(frozen=True)
class PairChange:
    src: str
    dst: str
    ratio: float  # median round trip after / before at `size` (> 1 is slower)
    size: int  # bytes


@dataclass(frozen=True)
class NodeChange:
    name: str
    changed: int  # of its pairs not explained by a link, how many changed
    pairs: int  # ...out of how many compared
    ratio: float  # median change of those changed pairs
    what: str = "pairs"  # "pairs", or a NIC / overhead figure that changed


@dataclass(frozen=True)
class LinkChange:
    name: str  # the model's link name, or "uplink of gK"
    changed: int  # pairs crossing it that changed
    pairs: int  # compared pairs crossing it
    ratio: float  # median change of the changed pairs (NaN when judged by capacity)
    capacity_ratio: float = float("nan")  # after / before, when both models measured it


@dataclass(frozen=True)
class GroupChange:
    before: tuple[str, ...]  # members of a group of the first model
    after: tuple[tuple[str, ...], ...]  # how the second model groups them


@dataclass
class ModelDiff:
    names: list[str]  # the nodes of both models, in the first model's order
    added: list[str]  # nodes only in the second model
    removed: list[str]  # nodes only in the first
    sizes: list[int]
    threshold: float
    compared: np.ndarray  # n x n: measured in both (and again in the second, not merged from the first)
    ratio: np.ndarray  # n x n: after / before at the most changed size (NaN when not compared)
    changed: np.ndarray  # n x n bool
    group_of: np.ndarray  # per node, the groups links and uplinks refer to
    newly_missing: list[tuple[str, str]] = field(default_factory=list)
    recovered: list[tuple[str, str]] = field(default_factory=list)
    pairs: list[PairChange] = field(default_factory=list)  # most changed first
    nodes: list[NodeChange] = field(default_factory=list)
    links: list[LinkChange] = field(default_factory=list)
    groups: list[GroupChange] = field(default_factory=list)
    unexplained: int = 0  # changed pairs no node or link explains

    @property
    def any_change(self) -> bool:
        return bool(self.changed.any() or self.added or self.removed or self.newly_missing
                    or self.recovered or self.nodes or self.links or self.groups)


def _common(a: Model, b: Model) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Names in both models (a's order), and their indices in a and b."""
    in_b = {name: j for j, name in enumerate(b.names)}
    names = [n for n in a.names if n in in_b]
    ia = np.array([a.names.index(n) for n in names], dtype=int)
    ib = np.array([in_b[n] for n in names], dtype=int)
    return names, ia, ib


def _groups(model: Model, idx: np.ndarray) -> np.ndarray:
    """The model's stored groups when every node has one, else the engine's grouping."""
    g = np.asarray(model.group_of)
    if g.size and (g >= 0).all():
        return g[idx].astype(int)
    return model.groups()[idx].astype(int) if model.n_nodes else np.zeros(0, int)


def _copied(a: Model, b: Model, ia, ib, sa, sb) -> np.ndarray:
    """Pairs merged unchanged from the first model into the second (a partial
    re-probe, `probe --update`): same measurement time and same statistics.
    They were not measured again, so they say nothing of a change."""
    sub, subb = np.ix_(ia, ia), np.ix_(ib, ib)
    same = np.isfinite(a.measured_at[sub]) & (a.measured_at[sub] == b.measured_at[subb])
    for name in ("rtt_min", "rtt_median", "rtt_max", "samples"):
        same &= (getattr(a, name)[sub][..., sa] == getattr(b, name)[subb][..., sb]).all(-1)
    return same


def _strengths(lo_a, med_a, hi_a, lo_b, med_b, hi_b, threshold: float):
    """Per figure |log(after / before)| where the round trips changed (rw_drift_strength), else -1."""
    return engine.drift_strengths(lo_a, med_a, hi_a, lo_b, med_b, hi_b, threshold)


def _beyond(ratio: float, threshold: float) -> bool:
    """A figure measured once (no spread) changed by this ratio (rw_drift_beyond)."""
    return engine.drift_beyond(ratio, threshold)


def _pair_ratios(a: Model, b: Model, ia, ib, sa, sb, threshold: float):
    """Per compared pair: the ratio at the most changed size and whether it changed."""
    sub = np.ix_(ia, ia)
    subb = np.ix_(ib, ib)
    lo_a, med_a, hi_a = (getattr(a, k)[sub][..., sa] for k in ("rtt_min", "rtt_median", "rtt_max"))
    lo_b, med_b, hi_b = (getattr(b, k)[subb][..., sb] for k in ("rtt_min", "rtt_median", "rtt_max"))
    strength = _strengths(lo_a, med_a, hi_a, lo_b, med_b, hi_b, threshold)  # the engine's drift rule
    sig = strength >= 0
    with np.errstate(divide="ignore", invalid="ignore"):
        r = med_b / med_a
        # Not significant anywhere: the ratio at the largest size, for the picture.
        best = np.where(sig.any(-1), strength.argmax(-1), r.shape[-1] - 1)
    ratio = np.take_along_axis(r, best[..., None], -1)[..., 0]
    return ratio, sig.any(-1), best


def _capacity_changes(a: Model, b: Model, threshold: float) -> dict[str, float]:
    caps_b = {link.name: link.capacity for link in b.links}
    out = {}
    for link in a.links:
        if link.name in caps_b and link.capacity > 0:
            r = caps_b[link.name] / link.capacity
            if _beyond(r, threshold):
                out[link.name] = r
    return out


def _candidate_links(a: Model, b: Model, ia, ib, g: np.ndarray) -> list[tuple[str, np.ndarray]]:
    """(name, n x n crossed pairs) of every shared link: the models' own links
    (on the groups they refer to), else one uplink per group."""
    own = [(link, np.asarray(a.group_of)[ia]) for link in a.links]
    if not own:
        own = [(link, np.asarray(b.group_of)[ib]) for link in b.links]
    if own:
        return [(link.name, link.crosses(groups)) for link, groups in own]
    cross = g[:, None] != g[None, :]
    groups = sorted(set(g.tolist()))
    if len(groups) < 2:
        return []
    # A group of one node: its uplink carries that node's pairs only, so a change there is the
    # node's (it has the same pairs; the node is the element a user can act on).
    return [(f"uplink of g{k}", cross & ((g[:, None] == k) | (g[None, :] == k))) for k in groups
            if np.count_nonzero(g == k) > 1]


def _median(values) -> float:
    values = np.asarray(values, float)
    return float(np.median(values)) if values.size else float("nan")


def _nic_changes(a: Model, b: Model, ia, ib, names, threshold: float) -> list[NodeChange]:
    """Per-node figures (send overhead, NIC injection, ejection and both
    directions at once) that moved by more than the threshold: they are
    measured once, without a spread."""
    out = []
    for what, attr in (("injection", "inject"), ("ejection", "eject"), ("both directions", "duplex"),
                       ("send overhead", "overhead")):
        va, vb = np.asarray(getattr(a, attr))[ia], np.asarray(getattr(b, attr))[ib]
        with np.errstate(divide="ignore", invalid="ignore"):
            r = vb / va
        for k in (k for k in range(r.size) if _beyond(r[k], threshold)):
            # A bandwidth falling is a slowdown: report every ratio as slower-above-1.
            slow = 1 / r[k] if attr != "overhead" else r[k]
            out.append(NodeChange(names[k], 1, 1, float(slow), what))
    return out


def diff_models(a: Model, b: Model, threshold: float = THRESHOLD,
                remeasured: list[tuple[str, str]] | None = None) -> ModelDiff:
    """What changed from model a (before) to model b (after). `remeasured`:
    the ordered pairs b measured anew, when known (rankwise watch); else the
    pairs b carries over unchanged from a are told by their time and figures."""
    names, ia, ib = _common(a, b)
    n = len(names)
    common_sizes = sorted(set(a.sizes.tolist()) & set(b.sizes.tolist()))
    sa = np.array([a.sizes.tolist().index(s) for s in common_sizes], dtype=int)
    sb = np.array([b.sizes.tolist().index(s) for s in common_sizes], dtype=int)
    state_a, state_b = a.state[np.ix_(ia, ia)], b.state[np.ix_(ib, ib)]
    off = ~np.eye(n, dtype=bool)
    if remeasured is None:
        copied = _copied(a, b, ia, ib, sa, sb)
    else:
        at = {name: k for k, name in enumerate(names)}
        copied = np.ones((n, n), bool)
        for src, dst in remeasured:
            if src in at and dst in at:
                copied[at[src], at[dst]] = False
    compared = (state_a == MEASURED) & (state_b == MEASURED) & off & ~copied
    if common_sizes and n:
        ratio, sig, best = _pair_ratios(a, b, ia, ib, sa, sb, threshold)
    else:
        ratio, sig, best = np.full((n, n), np.nan), np.zeros((n, n), bool), np.zeros((n, n), int)
    ratio = np.where(compared, ratio, np.nan)
    changed = sig & compared
    g = _groups(a, ia) if n else np.zeros(0, int)
    diff = ModelDiff(
        names=names, added=[x for x in b.names if x not in set(a.names)],
        removed=[x for x in a.names if x not in set(b.names)], sizes=common_sizes, threshold=threshold,
        compared=compared, ratio=ratio, changed=changed, group_of=g,
    )
    pair_names = lambda mask: [(names[i], names[j]) for i, j in np.argwhere(mask)]  # noqa: E731
    diff.newly_missing = pair_names((state_a == MEASURED) & (state_b == MISSING) & off)
    diff.recovered = pair_names((state_a == MISSING) & (state_b == MEASURED) & off)
    order = sorted(np.argwhere(changed).tolist(), key=lambda p: -abs(np.log(ratio[p[0], p[1]])))
    diff.pairs = [PairChange(names[i], names[j], float(ratio[i, j]), int(common_sizes[best[i, j]]))
                  for i, j in order]
    _explain(diff, a, b, ia, ib)
    diff.groups = _group_changes(names, g, _groups(b, ib) if n else np.zeros(0, int))
    diff.nodes += _nic_changes(a, b, ia, ib, names, threshold)
    return diff


def _explain(diff: ModelDiff, a: Model, b: Model, ia, ib) -> None:
    """Greedy: the link or node that explains the largest share of its
    not-yet-explained pairs (the most pairs on a tie: links before nodes)
    is taken, its pairs are explained, and the others are judged again on
    what is left, so a degraded uplink does not make its rack's nodes look
    degraded, nor a degraded node the uplink of its rack."""
    changed, compared, ratio = diff.changed, diff.compared, diff.ratio
    n = len(diff.names)
    candidates = [("link", name, crosses & compared)
                  for name, crosses in _candidate_links(a, b, ia, ib, diff.group_of)]
    for i, name in enumerate(diff.names):
        mine = np.zeros((n, n), bool)
        mine[i, :] = mine[:, i] = True
        candidates.append(("node", name, mine & compared))
    explained = np.zeros_like(changed)
    while True:
        best = None
        for k, (_, _, mine) in enumerate(candidates):
            left = mine & ~explained
            count, hit = int(left.sum()), int((left & changed).sum())
            if count >= MIN_PAIRS and hit and hit >= SHARE * count:
                key = (hit / count, count)
                if best is None or key > best[0]:
                    best = (key, k, left, count, hit)
        if best is None:
            break
        _, k, left, count, hit = best
        kind, name, mine = candidates.pop(k)
        r = _median(ratio[left & changed])
        if kind == "link":
            diff.links.append(LinkChange(name, hit, count, r))
        else:
            diff.nodes.append(NodeChange(name, hit, count, r))
        explained |= mine
    capacity = _capacity_changes(a, b, diff.threshold)
    for i, link in enumerate(diff.links):
        if link.name in capacity:
            diff.links[i] = LinkChange(link.name, link.changed, link.pairs, link.ratio, capacity.pop(link.name))
    diff.links += [LinkChange(name, 0, 0, float("nan"), r) for name, r in capacity.items()]
    diff.unexplained = int((changed & ~explained).sum())


def _group_changes(names: list[str], ga: np.ndarray, gb: np.ndarray) -> list[GroupChange]:
    """Groups of the first model that the second splits or merges with others."""
    out = []
    for k in sorted(set(ga.tolist())):
        members = np.flatnonzero(ga == k)
        parts = []
        for h in sorted(set(gb[members].tolist())):
            parts.append(tuple(names[i] for i in members if gb[i] == h))
        joined = np.flatnonzero(np.isin(gb, gb[members]) & (ga != k))
        if len(parts) > 1 or joined.size:
            after = tuple(tuple(names[i] for i in np.flatnonzero(gb == h)) for h in sorted(set(gb[members].tolist())))
            out.append(GroupChange(tuple(names[i] for i in members), after))
    return out

