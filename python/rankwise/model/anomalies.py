"""Links the static topology does not show: pairs measurably slower, or
more variable, than pairs of the same kind.

Nodes are first grouped from the numbers (Model.groups, the C engine; it
removes each node's own latency before grouping, docs/concepts/model.md).
Pairs between the same two groups form a block and should look alike.
Questions follow:
- is a node's own link bad? Latency adds up along a route, alpha_ij ~ a_i +
  a_j + D(g_i, g_j): the node terms a_i and the block terms D are fitted
  together, and a node whose term makes its pairs slower than typical is
  flagged. Bandwidth is the route's bottleneck, not a sum: a node's pairs
  are compared with the same blocks without it;
- is a shared link bad? a group's uplink: its part of the blocks' latency
  stands out; between groups: pairs' latencies fall between the distance
  classes the structure makes (a longer route is a whole number of steps
  farther, a slow link rarely), or a steady pair's bandwidth is below half
  its class's; inside a group: slower than the better quartile;
- which pairs are slow? those against their cleaned block, and every pair
  of a slow block;
- which links vary over time? the round-to-round jitter of a pair, (max -
  min) / mean as Luo et al. 2018 define it: a link varies when its pairs'
  median jitter is well above the other pairs' (a node's link, a group's
  uplink, or the link between two groups); contention makes every pair
  vary a little and names no link, and pairs no link explains are a note.
  A group's uplink is also judged from the stress test's capacities read at
  separate times: readings apart beyond their noise, varying; agreeing and
  low, slow (capacity_spreads)."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field, replace

import numpy as np

from rankwise.model.model import MEASURED, Model

THRESHOLD = 1.3  # slower than 1.3x the healthy value counts as degraded
JITTER_RATIO = 3.0  # a pair of a varying link varying 3x more than the pairs no link explains is listed...
JITTER_FLOOR = 0.05  # ...and by at least 5 % of its mean (a quiet network has ~0 jitter)
LINK_RATIO = 2.0  # a link varies when its pairs' median jitter is 2x the other pairs' median...
MIN_PAIRS = 4  # ...and it carries a few pairs...
LINK_Z = 6.0  # ...of which more are above the others' upper quartile than chance gives, by 6 standard errors
SPREAD_GAP = 1.5  # a link's capacities read at separate times vary when the highest is 1.5x the lowest...
SPREAD_RATIO = 3.0  # ...its excess (high / low - 1) 3x the typical link's (a busy link moves other phases a little)...
SPREAD_NOISE = 3.0  # ...and 3x the typical repetitions' noise at one time (a loaded real stack)


@dataclass(frozen=True)
class SlowPair:
    src: int
    dst: int
    latency_ratio: float  # alpha / healthy alpha of its block (> 1 is slower)
    bandwidth_ratio: float  # bandwidth / healthy bandwidth of its block (< 1 is slower)
    scope: str  # "node" (a node's own link), "block" (a shared link) or "pair"


@dataclass(frozen=True)
class NoisyPair:
    src: int
    dst: int
    jitter: float  # (max - min) / mean of its round trips, see pair_variation
    ratio: float  # jitter / the quiet pairs' (lower quartile)
    scope: str  # explained by a "node" link, a "group" uplink, a "block" (group pair) or "pair" alone


@dataclass(frozen=True)
class VaryingLink:
    """A link whose load varies over time, with the pairs it explains."""

    kind: str  # "node" (a node's own link), "group" (a group's uplink), "block" (between two groups) or "hop"
    where: str  # the node, the group, "a-b" (groups) or "u-v" (a direct network's link between two nodes)
    pairs: int  # ordered pairs that cross it (measured, not taken by an earlier link)
    jitter: float  # their median jitter (pair_variation)
    low: float  # their bandwidth's low while measured, as a fraction of its best (10th percentile)
    seen_by: str = "jitter"  # "jitter" (its pairs') or "capacity" (the stress test's readings at separate times)


@dataclass
class Findings:
    groups: np.ndarray
    slow_pairs: list[SlowPair]
    slow_nodes: list[int]
    slow_blocks: list[tuple[int, int]]  # (source group, destination group)
    slow_uplinks: list[int] = field(default_factory=list)  # groups whose own uplink is slow (their blocks are too)
    node_latency: np.ndarray = field(default_factory=lambda: np.zeros(0))  # s, a_i above the typical node
    node_latency_ratio: np.ndarray = field(default_factory=lambda: np.zeros(0))  # its pairs' alpha / without a_i
    node_bandwidth_ratio: np.ndarray = field(default_factory=lambda: np.zeros(0))  # its pairs' bandwidth / its blocks'
    noisy_pairs: list[NoisyPair] = field(default_factory=list)
    noisy_nodes: list[int] = field(default_factory=list)  # a node's own link varies
    noisy_groups: list[int] = field(default_factory=list)  # a group's uplink varies
    noisy_blocks: list[tuple[int, int]] = field(default_factory=list)  # (a, b), a <= b: the link between them
    noisy_links: list[tuple[int, int]] = field(default_factory=list)  # (u, v): a direct network's hop between two nodes
    typical_jitter: float = float("nan")
    varying_links: list[VaryingLink] = field(default_factory=list)  # the links above, in the order found
    # (src, dst, jitter) of pairs whose jitter stands out but that no link explains (contention
    # between concurrent pairs, or a pair's own noise): a note, not a finding
    unexplained_pairs: list[tuple[int, int, float]] = field(default_factory=list)
    classes: "DistanceClasses | None" = None  # the distance classes the relations were judged against
    slow_links: list[tuple[int, int]] = field(default_factory=list)  # (u, v): a direct network's slow hop between two nodes
    slow_pods: list[tuple[int, ...]] = field(default_factory=list)  # groups of a pod whose own uplink is slow

    def flagged(self) -> set[tuple[int, int]]:
        return {(p.src, p.dst) for p in self.slow_pairs}


def _slowness(lat, bw, ref_lat, ref_bw):
    """How many times slower than the reference, by latency or bandwidth."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.fmax(lat / ref_lat, ref_bw / bw)


def _block_median(values, mask, gi, gj):
    """Median of the finite values over mask, per (source group, destination group) cell."""
    k1, k2 = int(gi.max()) + 1, int(gj.max()) + 1
    rows, cols = np.nonzero(mask)
    v = values[rows, cols]
    keep = np.isfinite(v)
    key, v = gi[rows[keep]] * k2 + gj[cols[keep]], v[keep]
    order = np.lexsort((v, key))
    key, v = key[order], v[order]
    cells = np.arange(k1 * k2)
    start, end = np.searchsorted(key, cells), np.searchsorted(key, cells, side="right")
    count = end - start
    lo = np.minimum(start + (count - 1) // 2, max(len(v) - 1, 0))
    hi = np.minimum(start + count // 2, max(len(v) - 1, 0))
    med = np.full(k1 * k2, np.nan)
    has = count > 0
    med[has] = (v[lo[has]] + v[hi[has]]) / 2
    return med.reshape(k1, k2)


def _fill_missing(block: np.ndarray) -> np.ndarray:
    """Cells without pairs (a group of one node, or of one node once it is
    left out) take the median of the same kind of cell: inside a group, or
    across to the same destination group (else across to any)."""
    missing = ~np.isfinite(block)
    if not missing.any():
        return block.copy()
    diag = np.eye(len(block), dtype=bool)
    values = np.where(missing, np.nan, block)
    across = np.where(diag, np.nan, values)
    with _quiet_nanmedian():
        inside = np.nanmedian(values[diag])
        to = np.nanmedian(across, axis=0)  # per destination group; a missing cell adds nothing
        anywhere = np.nanmedian(across)
    fill = np.where(diag, inside, np.where(np.isfinite(to), to, anywhere)[None, :])
    return np.where(missing, fill, block)


def node_latency_terms(model: Model, groups: np.ndarray, iterations: int = 10):
    """Fit alpha_ij ~ a_i + a_j + D(g_i, g_j) by alternating medians.

    Returns (a, D): a[i] in seconds, with the median node at 0, and D per
    group pair. Robust to a few slow nodes per block (medians)."""
    n = model.n_nodes
    g = np.asarray(groups, int)
    ok = (model.state == MEASURED) & ~np.eye(n, dtype=bool)
    alpha = np.where(ok, model.alpha, np.nan)
    sym = np.where(np.isfinite(alpha) & np.isfinite(alpha.T), (alpha + alpha.T) / 2, np.fmax(alpha, alpha.T))
    known = np.isfinite(sym)
    a = np.zeros(n)
    blocks = np.zeros((0, 0))
    for _ in range(iterations):
        # A group of one node has no block of its own and its blocks across
        # are its term plus the network: judge them as blocks of their kind.
        alone = np.bincount(g)[g] == 1
        inside = known & ~(alone[:, None] | alone[None, :])
        blocks = _fill_missing(_block_median(sym - a[:, None] - a[None, :], inside, g, g))
        rest = sym - blocks[g[:, None], g[None, :]] - a[None, :]
        new = np.array([np.median(r[np.isfinite(r)]) if np.isfinite(r).any() else 0.0 for r in rest])
        new -= np.median(new) if n else 0.0
        if np.allclose(new, a, rtol=0, atol=1e-12):
            a = new
            break
        a = new
    return a, blocks


def _rack_latency_ratios(a: np.ndarray, blocks: np.ndarray, g: np.ndarray) -> np.ndarray:
    """Per node, its term against the shortest route it has, its own group's: (inside + a_i) /
    inside. Over all its pairs a node's extra latency hides under long routes (a three-level tree's
    cross-pod pairs take five times a rack's), while each of its rack's pairs shows it whole. Only
    where most nodes sit in groups of two or more: a torus's few groups are close nodes, not racks,
    and their inside latency is no node's yardstick. NaN elsewhere."""
    out = np.full(len(g), np.nan)
    size = np.bincount(g)[g]
    if blocks.size == 0 or (size >= 2).mean() < 0.5:
        return out
    inside = blocks[g, g]
    ok = (size >= 2) & np.isfinite(inside) & (inside > 0)
    out[ok] = (inside[ok] + a[ok]) / inside[ok]
    return out


def _node_bandwidth_ratios(bw, measured, g):
    """Per node, the median over its pairs of bandwidth / the same block's
    median without the node (so that it does not hide itself in a small group)."""
    n = len(g)
    base = _block_median(bw, measured, g, g)
    out = np.full(n, np.nan)
    for i in range(n):
        without = measured.copy()
        without[i, :] = without[:, i] = False
        mates = g == g[i]
        ref = base.copy()
        # Only the cells of i's group change when i is left out.
        ref[g[i], :] = _block_median(bw, without & mates[:, None], g, g)[g[i], :]
        ref[:, g[i]] = _block_median(bw, without & mates[None, :], g, g)[:, g[i]]
        ref = _fill_missing(ref)
        out_j, in_j = np.flatnonzero(measured[i]), np.flatnonzero(measured[:, i])
        mine = np.concatenate([bw[i, out_j] / ref[g[i], g[out_j]], bw[in_j, i] / ref[g[in_j], g[i]]])
        mine = mine[np.isfinite(mine)]
        if mine.size:
            out[i] = np.median(mine)
    return out


LEVEL_GAP = 0.03  # sorted pair latencies more than 3 % apart start a new level...
LEVEL_SHARE = 0.05  # ...and the two lowest levels holding 5 % of them set the distance classes' step
CLASS_TOL = 0.2  # a pair within 0.2 steps of a lattice point is at that distance...
CLASS_TOL_MAX = 0.3  # ...or within 3 of the latencies' spread, up to 0.3 steps...
CLASS_FIT = 0.6  # ...the lattice must place 60 % of the pairs so...
CLASS_SHARE = 0.01  # ...and its farthest class holds 1 % of them (at least 2)
BANDWIDTH_DROP = 2.0  # a block below half its distance class's median bandwidth is slow


@dataclass(frozen=True)
class DistanceClasses:
    """Latency levels of the blocks between groups: route latencies are sums of link latencies,
    so the blocks cluster at base + m * step (a rack's pairs and a cross-rack route on a fat tree;
    one, two or three router hops on a dragonfly; hop counts on a torus; intra- and cross-pod on
    a three-level tree). `top` is the farthest class, in steps."""

    base: float  # s, the nearest class (inside a group where groups have mates)
    step: float  # s, the smallest gap between two neighbouring classes
    top: int
    levels: tuple[float, ...]  # s, the classes' latencies
    spread: float = 0.0  # relative spread of latencies about their lattice point (robust sd)

    def tolerance(self, lat):
        """How far from a lattice point, in steps, a latency still is at it: CLASS_TOL, or 3 of the
        latencies' own spread where they are noisier (a 2 % noise on a 10 us route is 0.1 step),
        up to CLASS_TOL_MAX."""
        return np.clip(3 * self.spread * np.asarray(lat) / self.step, CLASS_TOL, CLASS_TOL_MAX)

    def position(self, lat):
        """Where a latency falls on the lattice, in steps from base."""
        return (np.asarray(lat) - self.base) / self.step

    def explained(self, lat):
        """A latency a route of the structure explains: at a lattice point up to the farthest
        class (a longer route) or nearer than the nearest class, not between two points or beyond
        (a slow link: faults only add latency)."""
        pos = self.position(lat)
        near = np.round(pos)
        tol = self.tolerance(lat)
        return (pos <= tol) | ((np.abs(pos - near) <= tol) & (near <= self.top))


def distance_classes(lat_between: np.ndarray, lat_inside: np.ndarray, nodes: int = 0) -> DistanceClasses | None:
    """The distance classes of a set of pair latencies (between groups, and inside groups as
    the nearest class), or None when they do not lie on one lattice.

    Levels are runs of the sorted latencies with no relative gap above LEVEL_GAP; the two lowest
    levels holding LEVEL_SHARE of the latencies are the nearest class and the next: their gap is
    the step, the lattice base + m * step. Slow links only add latency, so they do not make the
    nearest levels (their pairs are few there), where they can make levels of their own farther
    out: a global link of a three-group dragonfly carries a third of all pairs. The lattice is
    refitted by least squares through the latencies within half the tolerance of it, and it must
    place CLASS_FIT of them. The farthest class is the farthest lattice point holding CLASS_SHARE
    of the latencies, or a pair per two nodes of the `nodes` (a torus's farthest holds every node's
    antipode, 128 pairs of 16,256 at 128 nodes, less those a slow link moves off it): pairs beyond
    it, or between two points, are slower than their route."""
    inside = lat_inside[np.isfinite(lat_inside)]
    v = np.sort(np.concatenate([lat_between[np.isfinite(lat_between)], inside]))
    if v.size < 4:
        return None
    runs = np.split(v, np.flatnonzero(np.diff(v) > LEVEL_GAP * v[:-1]) + 1)
    populous = [r for r in runs if r.size >= max(2, LEVEL_SHARE * v.size)]
    levels = [float(np.median(r)) for r in populous]
    if len(levels) < 2:
        return None
    # The latencies' own noise, from the two nearest levels (few slow pairs there).
    rel = np.concatenate([r / np.median(r) - 1 for r in populous[:2]])
    spread = float(1.4826 * np.median(np.abs(rel)))
    base, step = levels[0], levels[1] - levels[0]
    for _ in range(3):  # least squares through the latencies close to the lattice
        pos = (v - base) / step
        near = np.round(pos)
        close = np.abs(pos - near) <= CLASS_TOL / 2
        if np.unique(near[close]).size < 2:
            break
        step, base = (float(x) for x in np.polyfit(near[close], v[close], 1))
    pos = (v - base) / step
    near = np.round(pos)
    classes = DistanceClasses(base, step, 1, (), spread)
    tol = classes.tolerance(v)
    on = (np.abs(pos - near) <= tol) & (near >= 0)
    if (on | (pos <= tol)).mean() < CLASS_FIT:
        return None
    counts = np.bincount(near[on].astype(int))
    filled = np.flatnonzero(counts >= max(2, min(CLASS_SHARE * v.size, nodes / 2 or np.inf)))
    top = int(filled[-1]) if filled.size else 1
    return DistanceClasses(base, step, top, tuple(base + m * step for m in range(top + 1)), spread)


def _slow_relations(lat, bw, clean, g, uplinks, blat, bbw, threshold, jitter=None):
    """Relations between groups slower than the structure explains (docs/concepts/model.md).

    Pairs' latencies (their smallest messages', round_trip_latency; slow nodes left out, so a
    pair's latency is its route's) are placed on the distance classes of all pairs between groups
    not through a slow uplink. A pair is slow when it falls between two classes or beyond the
    farthest, or when its bandwidth is below 1/BANDWIDTH_DROP of its class's median (a longer
    route crosses more links, not narrower ones), the pair is steady (jitter, as pair_variation
    gives it, at most JITTER_FLOOR) and another pair shares its cap (_shared_caps). A relation
    is slow when most of its pairs are: its median alone would fall between two classes where a
    group holds nodes at two distances from another (groups on a torus). Without classes (fewer
    than two latency levels), a relation is judged against the better quartile of all relations,
    as alterations only make links worse. Returns the slow relations, the nodes whose own link is
    slow (alone in their group with most of their pairs slow, or a step farther than the
    nearest class) and the distance classes (None without)."""
    n, k = len(g), blat.shape[0]
    sym = _network_part(lat, np.zeros(n))
    same = g[:, None] == g[None, :]
    across = clean & ~same & np.isfinite(sym)
    up = np.isin(g, uplinks)
    fit = clean & ~(up[:, None] | up[None, :]) & np.isfinite(sym)
    classes = distance_classes(sym[fit & ~same], sym[fit & same], n)
    out = []
    if classes is None:
        ok = ~np.eye(k, dtype=bool) & np.isfinite(blat)
        if ok.any():
            hl, hb = np.percentile(blat[ok], 25), np.percentile(bbw[ok], 75)
            out = [(int(x), int(y)) for x, y in zip(*np.nonzero(ok))
                   if _slowness(blat[x, y], bbw[x, y], hl, hb) > threshold]
        return out, [], None, []
    with np.errstate(invalid="ignore"):
        level = np.where(across, np.round(classes.position(sym)), -1).astype(int)
        slow = across & ~classes.explained(np.where(across, sym, 0.0))
        usual = fit & ~same & ~slow
        fallback = np.median(bw[usual]) if usual.any() else np.nan
        ref = np.full(level.max() + 2, fallback)
        for m in np.unique(level[usual]):
            cell = usual & (level == m)
            if cell.sum() >= 3:
                ref[m] = np.median(bw[cell])
        # A narrow link caps a pair at the same rate in every round; contention in the concurrent
        # probe, or a link whose load varies, does not: only a steady pair's bandwidth counts.
        steady = ~(jitter > JITTER_FLOOR) if jitter is not None else True
        slow |= _hop_caps(_shared_caps(across & steady & (bw * BANDWIDTH_DROP < ref[level]), bw), bw, sym, classes)
    hops, by_hop = _slow_hops(sym, classes, clean)
    slow &= ~by_hop
    rows, cols = np.nonzero(across)
    key = g[rows] * k + g[cols]
    share = np.bincount(key, weights=slow[rows, cols], minlength=k * k) / np.maximum(
        np.bincount(key, minlength=k * k), 1)
    has = np.bincount(key, minlength=k * k) > 0
    blocks = [(int(c // k), int(c % k)) for c in np.flatnonzero(has & (share > 0.5))]
    # A node alone in its group whose pairs are mostly slow: its own link (a NIC's extra latency
    # is small against long routes, so its ratio to its pairs' latency may not show it).
    alone = np.bincount(g, minlength=k)[g] == 1
    with np.errstate(invalid="ignore"):
        mine = (slow.sum(0) + slow.sum(1)) / np.maximum(across.sum(0) + across.sum(1), 1)
        # A node, alone or in a group, whose nearest pair is a step or more beyond the nearest
        # class, where nearly every node has one there: its own link adds about a whole step to
        # every pair (a NIC at 3x latency on a torus of 2 us hops), which the classes alone take
        # for longer routes. Its group does not hide it: its mates are its nearest pairs too; but
        # a node whose mates are all left out (slow) may have no near pair left.
        pos = np.where(clean & np.isfinite(sym), classes.position(np.where(np.isfinite(sym), sym, 0.0)), np.inf)
        nearest = np.min(pos, axis=1)
        seen = np.isfinite(nearest)
        has_mate = (clean & (g[:, None] == g[None, :])).any(axis=1)
        far = seen & (nearest > 1 - CLASS_TOL) & (alone | has_mate)
        if not seen.any() or far.mean() > 0.1:
            far[:] = False
    return blocks, [int(i) for i in np.flatnonzero((alone & (mine > 0.5)) | far)], classes, hops


SAME_RATE = 0.10  # two pairs capped within 10 % of each other share the cap


def _shared_caps(capped: np.ndarray, bw: np.ndarray) -> np.ndarray:
    """The capped pairs whose cap another capped pair from the same source or to the same
    destination shares (bandwidth within SAME_RATE). A narrow shared link caps every route through
    it, and routes through one link fan out from its sources or into its destinations (a torus
    link's x hop carries a node's pairs to a whole plane): its pairs come in families at its rate.
    A round-mate of the concurrent probe on a pair's route halves that pair alone (a torus pair at
    0.45 of its class, every other pair of its two nodes at full rate): no link is named from it."""
    out = np.zeros_like(capped)
    for i, j in zip(*np.nonzero(capped)):
        mates = np.concatenate([bw[i, capped[i]], bw[capped[:, j], j]])
        out[i, j] = (np.abs(mates / bw[i, j] - 1) <= SAME_RATE).sum() > 2  # itself twice
    return out


HOP_DEGREE = 6  # a direct network's router has at most six neighbours (a 3-D torus)
HOP_FIT = 0.8  # the nearest pairs' hop graph must place 80 % of the pairs at their hop count
HOP_PAIRS = 4  # a slow hop explains itself and at least three more pairs crossing it


def _hop_distances(sym: np.ndarray, classes: DistanceClasses, extra: list[tuple[int, int]] = ()):
    """Hop counts of a direct network (a torus: a router per node), from the latencies alone, or None.

    Every node of a torus has a neighbour one hop away: its nearest pair's latency above the
    nearest class is its own NIC's extra latency, which is taken out of all its pairs. Pairs then
    at the nearest class are neighbours, and the hop count of a pair is its distance in that
    graph (shortest routes, as tori route). It is a direct network when that graph is connected
    with at most HOP_DEGREE neighbours a node, and its hop counts place HOP_FIT of the pairs at
    their class (a fat tree's or a dragonfly's nearest pairs are cliques of a rack or router,
    not connected). `extra` adds known neighbours (slow hops already found). Returns (hops,
    positions in steps with the NICs' extra taken out)."""
    n = len(sym)
    known = np.isfinite(sym) & ~np.eye(n, dtype=bool)
    if n < 8 or not known.any(axis=1).all():
        return None
    pos = classes.position(np.where(known, sym, np.inf))
    tol = classes.tolerance(np.where(known, sym, 0.0))
    # On a large torus the neighbours are too few a share of the pairs to make the nearest class
    # (6 of 127 a node at 128 nodes): every node's nearest pair then lies a class below it.
    below = float(np.median(np.round(np.min(pos, axis=1))))
    if below < 0:
        pos = pos - below
    nearest = np.min(pos, axis=1)
    own = np.where(nearest > np.min(np.where(known, tol, np.inf), axis=1), nearest, 0.0)
    pos = np.where(known, pos - own[:, None] - own[None, :], np.nan)
    near = known & (np.abs(pos) <= tol)
    for u, v in extra:
        near[u, v] = near[v, u] = True
    if near.sum(axis=1).max() > HOP_DEGREE:
        return None
    hops = np.full((n, n), np.inf)
    for s in range(n):  # breadth first
        reached, step = np.eye(n, dtype=bool)[s], 0
        while reached.any():
            hops[s, reached] = step
            step += 1
            reached = near[reached].any(axis=0) & ~np.isfinite(hops[s])
    if not np.isfinite(hops).all():
        return None
    fit = known & (np.abs(pos - (hops - 1)) <= tol)
    if fit.sum() < HOP_FIT * known.sum():
        return None
    return hops, pos, tol, near


def _hop_caps(capped: np.ndarray, bw: np.ndarray, sym: np.ndarray, classes: DistanceClasses | None) -> np.ndarray:
    """On a direct network (a torus), the capped pairs a narrow hop explains: one on a shortest
    route of the pair whose own two nodes' pair is capped as low. A narrow link caps every route
    through it, first the one hop between the two nodes it joins; a pair capped where no hop of
    its routes is, was sharing a link with a round-mate of the concurrent probe (contention
    halves a pair: 6 GB/s where its class gets 12). Elsewhere, capped as given."""
    net = _hop_distances(sym, classes) if classes is not None else None
    if net is None:
        return capped
    hops, _, _, near = net
    out = np.zeros_like(capped)
    lowest = np.fmin(bw, bw.T)
    edges = np.argwhere(np.triu(near, 1))
    for i, j in zip(*np.nonzero(capped)):
        u, v = edges[:, 0], edges[:, 1]
        on = ((hops[i, u] + 1 + hops[v, j] == hops[i, j]) | (hops[i, v] + 1 + hops[u, j] == hops[i, j]))
        out[i, j] = bool((lowest[u[on], v[on]] <= (1 + SAME_RATE) * bw[i, j]).any())
    return out


def _slow_hops(sym: np.ndarray, classes: DistanceClasses | None, clean: np.ndarray):
    """The slow links of a direct network (a torus), each between the two nodes it joins, and the
    pairs they explain.

    Latency adds up along a route: a pair whose route crosses a hop slower by E steps is E
    steps farther than its hop count in one direction, and its round trip, averaged over both
    (routes differ each way on a dimension-order torus), E / 2 or E. The two nodes a slow hop
    joins are one hop apart and E steps farther; every pair whose shortest route may cross it is
    then explained when it is slow by that much. Such pairs are the link's, not relations of
    their own. Pairs of slow nodes are left out (their NIC explains them). A candidate hop is a
    slow pair, kept when it explains HOP_PAIRS of the slow pairs, the one explaining most first.
    Returns ([(u, v)], explained pairs)."""
    n = len(sym)
    explained = np.zeros((n, n), bool)
    if classes is None:
        return [], explained
    found: list[tuple[int, int]] = []
    while True:
        net = _hop_distances(sym, classes, found)
        if net is None:
            return found, explained
        hops, pos, tol, _ = net
        with np.errstate(invalid="ignore"):
            # slower than the hop count says, or between two classes (a slow hop's own pair is
            # counted around it, farther than it is)
            late = ((pos - (hops - 1) > tol) | (np.abs(pos - np.round(pos)) > tol)) & clean & ~explained
        best, best_mask = None, None
        for u, v in zip(*np.nonzero(np.triu(late, 1))):
            e = pos[u, v]
            via = np.minimum(hops[:, u, None] + 1 + hops[None, v, :], hops[:, v, None] + 1 + hops[None, u, :])
            on = via <= hops
            via = np.minimum(via, hops)
            with np.errstate(invalid="ignore"):
                mask = late & on & ((np.abs(pos - (via - 1 + e / 2)) <= tol) | (np.abs(pos - (via - 1 + e)) <= tol))
            mask[u, v] = mask[v, u] = True
            if best_mask is None or mask.sum() > best_mask.sum():
                best, best_mask = (int(u), int(v)), mask
        if best is None or np.triu(best_mask, 1).sum() < HOP_PAIRS:
            return found, explained
        found.append(best)
        explained |= best_mask


DESIGN_LINKS = 2  # an up/down link no wider than 2 other links kept per group is the network's own
UPLINK_FIT = 0.10  # blocks between groups within 10 % of u_x + u_y: the groups hang off one core


def _slow_uplinks(blat: np.ndarray, bbw: np.ndarray, threshold: float, varying: set[int] = frozenset()) -> list[int]:
    """Groups whose own uplink is slow, from the blocks between groups.

    On a tree of racks a block's latency is the sum of its two groups' parts, blat[x, y] ~ u_x +
    u_y (each u holding half the core), and its bandwidth the narrower of the two uplinks,
    bbw[x, y] ~ min(U_x, U_y). With three groups or more both are identifiable: u by least
    squares over the blocks, U_x as the best block through x. A slow uplink then shows as one
    group's part, not as many slow blocks (with most racks' blocks touching a slow one, the
    better quartile of the blocks is itself slow and few blocks stand out). Where the sums do
    not fit (a torus or dragonfly: blocks differ by route) nothing is said. A group in `varying` (its
    capacity read at separate times varies, capacity_spreads) is slow by its latency part only: its
    lone pairs' bandwidth is that of the moment they were measured."""
    k = blat.shape[0]
    between = ~np.eye(k, dtype=bool) & np.isfinite(blat) & np.isfinite(blat.T)
    rows, cols = np.nonzero(np.triu(between, 1))
    if k < 3 or len(set(rows) | set(cols)) < k or len(rows) < k:
        return []
    lat = (blat[rows, cols] + blat[cols, rows]) / 2
    a = np.zeros((len(rows), k))
    a[np.arange(len(rows)), rows] = a[np.arange(len(rows)), cols] = 1
    u, *_ = np.linalg.lstsq(a, lat, rcond=None)
    if np.max(np.abs(a @ u - lat) / lat) > UPLINK_FIT:
        return []
    healthy = float(np.percentile(u, 25))
    with np.errstate(invalid="ignore", divide="ignore"):
        cap = np.array([np.nanmax(np.where(between[x], np.minimum(bbw[x], bbw[:, x]), np.nan)) for x in range(k)])
        wide = float(np.nanpercentile(cap, 75))
        busy = np.isin(np.arange(k), list(varying))
        slow = ((u + healthy) / (2 * healthy) > threshold) | ((cap * threshold < wide) & ~busy)
    return [int(x) for x in np.flatnonzero(slow)]


@dataclass(frozen=True)
class UplinkSpread:
    """A group's uplink as the stress test read it at separate times (capacity-spread lines)."""

    spread: float  # high / low - 1, the larger of its two directions
    low: float  # low / high of that direction: how far its capacity fell
    varying: bool  # the readings differ beyond the typical link's spread and the noise
    times: int
    moved: bool = False  # a direction's readings differ beyond a level gap, the typical link and the noise


def capacity_spreads(model: Model, g: np.ndarray) -> dict[int, UplinkSpread]:
    """Per group of g (mapped from the stress test's groups where they hold the same nodes), its
    uplink's capacities read at separate times (`up-X`/`down-X` capacity spreads, format 5). A
    link whose load varies reads differently at different moments, a slow one low every time, so:
    varying when, in either direction, the highest reading is SPREAD_GAP times the lowest (a level
    gap, as for groups), its excess (high / low - 1) SPREAD_RATIO times the median excess of all the
    groups' readings and SPREAD_NOISE times their median noise (the repetitions' (max - min) /
    median at one time: on a loaded real stack every reading is noisy and no link stands out).
    The gap is what keeps a busy link from naming its neighbours: an up phase deals its flows over
    the G - 1 other groups, so another group's link carries a share 1 / (G - 1) of them, and even
    stopped it takes the reading down by that share at most (1.5x at four groups; less under
    max-min sharing, where the other flows take up what it leaves). With two groups every flow
    crosses both uplinks and the typical excess is the busy one's: no link stands out, as it
    should not. Groups without two readings in both directions are left out (unknown), and groups of
    one node (a torus's: its up and down phases mix its routes, as the stress test also holds)."""
    stored = np.asarray(model.group_of) if model.group_of is not None else np.zeros(0, int)
    spreads = {sp.name: sp for sp in getattr(model, "spreads", [])
               if sp.times >= 2 and sp.median > 0 and sp.name.split("-")[0] in ("up", "down")}  # racks' links
    if not spreads or (stored < 0).all():
        return {}
    rel = {name: sp.high / sp.low - 1 for name, sp in spreads.items()}
    typical = float(np.median(list(rel.values())))
    noise = float(np.median([sp.noise for sp in spreads.values()]))
    moved = max(LEVEL_GAP, SPREAD_RATIO * typical, SPREAD_NOISE * noise)
    limit = max(SPREAD_GAP - 1, moved)
    out, moving = {}, {}
    for x in range(int(stored.max()) + 1):
        both = [f"up-{x}", f"down-{x}"]
        if not all(name in spreads for name in both):
            continue
        mine = stored == x
        labels = set(g[mine].tolist())
        if len(labels) != 1 or (g == next(iter(labels))).sum() != mine.sum():
            continue  # not one of g's groups
        if mine.sum() < 2:
            continue  # a node alone (a torus's) has no uplink: its phases mix its routes
        name = max(both, key=rel.get)
        sp = spreads[name]
        x_g = int(next(iter(labels)))
        # Directions that moved at all (beyond a level gap, the typical link and the noise): a
        # link that moves less than a named one's gap still tells which way its flows went.
        moving[x_g] = {b.split("-")[0] for b in both if rel[b] > moved}
        out[x_g] = UplinkSpread(rel[name], sp.low / sp.high, rel[name] > limit,
                                min(spreads[b].times for b in both), bool(moving[x_g]))
    keep = _unexplained_spreads({x: d for x, d in moving.items() if d})
    return {x: replace(sp, varying=sp.varying and x in keep) for x, sp in out.items()}


def _unexplained_spreads(moving: dict[int, set[str]]) -> set[int]:
    """Of the groups whose readings vary (directions "up"/"down"), those a varying link of
    theirs must explain. A group's down phase receives through every other group's uplink and its
    up phase sends through their downlinks: a reading that varies in one direction may be another
    group's link varying in the other (more than its 1 / (G - 1) share of the flows when the
    other senders are slow and cannot take up what it leaves). Named first: groups with a reading
    no other group explains; then any group with a reading those do not explain. When every
    reading is explained by another (one direction each), nothing tells them apart: all. Only
    groups read varying are named; the others only explain."""
    flip = {"up": "down", "down": "up"}

    def explained(x: int, by) -> bool:
        return all(any(flip[d] in moving[y] for y in by if y != x) for d in moving[x])

    named = {x for x in moving if not explained(x, moving)}
    if not named:
        return set(moving)
    return named | {x for x in moving if not explained(x, named)}


def _capacity_uplinks(model: Model, g: np.ndarray, threshold: float) -> list[int]:
    """Groups (of g) whose uplink the stress test measured slow (docs/concepts/model.md, "Shared-link
    capacity"). An uplink slowed in bandwidth alone, still wider than one NIC, limits no lone pair:
    ping-pong cannot see it, only many of the group's nodes sending (receiving) at once can. Per
    node of its group, in each direction: the `up-X` (`down-X`) link's capacity where the stress
    test kept one, else the nodes' own caps (nothing limited them); slow when below the median
    group by more than the threshold, and only where a link was kept: a group whose phase ran at
    its NICs' pace has no slow uplink, however narrow those NICs. Per node, so that a design's
    oversubscription, the same for every group, is no fault; the median, not the better quartile, because a design's limit need
    not show in every group's phase (an oversubscribed dragonfly's routers whose flows spread over
    several local links keep no link: with a quarter of them, every other router read slow). A link
    no wider than twice as many other links kept (up, down and path links) as there are groups is
    the network's own: a dragonfly's router whose flows all leave over one local link reads that
    link, as the path phases read every other router's links (a rack's slow uplink is narrower
    than nearly all the links a tree keeps).
    The stress test's groups (group_of) are mapped to g's where they hold the same nodes."""
    stored = np.asarray(model.group_of)
    if not model.links or (stored < 0).all():
        return []
    k = int(stored.max()) + 1
    size = np.bincount(stored[stored >= 0], minlength=k).astype(float)
    if k < 3 or (size < 2).any():
        return []
    best = np.where(model.state == MEASURED, model.bandwidth, np.nan)
    with warnings.catch_warnings():  # a node without a measured pair: NaN, left out below
        warnings.simplefilter("ignore", RuntimeWarning)
        out_cap = np.where(np.isfinite(model.inject), model.inject, np.nanmax(best, axis=1))
        in_cap = np.where(np.isfinite(model.eject), model.eject, np.nanmax(best, axis=0))
    per_node = np.full((2, k), np.nan)
    for x in range(k):
        mine = stored == x
        per_node[0, x] = np.nansum(out_cap[mine]) / size[x]
        per_node[1, x] = np.nansum(in_cap[mine]) / size[x]
    kept = np.sort([link.capacity for link in model.links if link.name.split("-")[0] in ("up", "down", "path")])
    limited = set()  # (side, group) whose phase kept a link: only those may be slow
    designed = set()  # (side, group) whose link is as narrow as the network's own
    for link in model.links:
        side = {"up": 0, "down": 1}.get(link.name.split("-")[0])
        groups = link.from_groups if side == 0 else link.to_groups
        other = link.to_groups if side == 0 else link.from_groups
        if side is None or other is not None or groups is None or len(groups) != 1 or groups[0] >= k:
            continue
        x = groups[0]
        per_node[side, x] = min(per_node[side, x], link.capacity / size[x])
        limited.add((side, x))
        if np.searchsorted(kept, link.capacity, side="right") - 1 >= DESIGN_LINKS * k:
            designed.add((side, x))
    slow = set()
    for side in range(2):
        ok = np.isfinite(per_node[side]) & (per_node[side] > 0)
        if ok.sum() < 3:
            continue
        healthy = np.percentile(per_node[side, ok], 50)
        slow |= {x for x in np.flatnonzero(ok)
                 if per_node[side, x] * threshold < healthy and (side, x) in limited - designed}
    found = []
    for x in sorted(slow):  # the same nodes as one of g's groups, or nothing said
        mine = stored == x
        labels = set(g[mine].tolist())
        if len(labels) == 1 and (g == next(iter(labels))).sum() == mine.sum():
            found.append(int(next(iter(labels))))
    return found


def _capacity_pods(model: Model, g: np.ndarray, threshold: float) -> list[tuple[int, ...]]:
    """Pods (as sets of g's groups) whose uplink the stress test measured slow: a `pod-up-P`
    (`pod-down-P`) link kept, its capacity below the better quartile of every pod's readings in that
    direction (the medians of their `pod-*` capacity spreads; pods of like size) by more than the
    threshold, its own readings at separate times steady: apart by no more than a level gap, the
    typical pod phase's spread and its noise allow, as capacity_spreads judges a rack's (a link
    whose load varies, or a rack's inside the pod, kept the reading of a moment). With two pods
    each pod's up phase is the other's down phase: both read the narrow one, neither stands out,
    nothing is said."""
    stored = np.asarray(model.group_of) if model.group_of is not None else np.zeros(0, int)
    spreads = {sp.name: sp for sp in getattr(model, "spreads", [])
               if sp.name.startswith("pod-") and sp.times >= 2 and sp.median > 0}
    if not spreads:
        return []
    rel = {name: sp.high / sp.low - 1 for name, sp in spreads.items()}
    moved = max(LEVEL_GAP, SPREAD_RATIO * float(np.median(list(rel.values()))),
                SPREAD_NOISE * float(np.median([sp.noise for sp in spreads.values()])))
    out: list[tuple[int, ...]] = []
    for link in model.links:
        side = link.name.split("-")[1] if link.name.startswith("pod-") else ""
        mine = link.from_groups if side == "up" else link.to_groups if side == "down" else None
        sp = spreads.get(link.name)
        readings = [x.median for name, x in spreads.items() if name.startswith(f"pod-{side}-")]
        if mine is None or sp is None or rel[link.name] > moved or not _pods_compared(link.name, spreads, threshold):
            continue
        if link.capacity * threshold >= np.percentile(readings, 75):
            continue
        nodes = np.isin(stored, mine)
        labels = set(g[nodes].tolist())
        if all((g == x).sum() == (nodes & (g == x)).sum() for x in labels):  # whole groups of g
            pod = tuple(sorted(int(x) for x in labels))
            out += [pod] if pod not in out else []
    return out


def _pods_compared(name: str, spreads: dict, threshold: float) -> bool:
    """Whether pod link `name` (pod-up-P or pod-down-P) has readings of other pods to stand out
    against: three pods or more read in its direction, or two whose phases carried other flows.
    Where the two pods hold every group, pod-up-P's flows are the other pod's pod-down phase's
    (and the reverse): a narrow link reads low in both, and one pod's reading says nothing about
    which; where other groups stand outside both, the other pod's opposite phase reads clearly
    above P's, and P's stands out as with three."""
    side = name.split("-")[1]
    others = [n.split("-")[2] for n in spreads if n.startswith(f"pod-{side}-") and n != name]
    if len(others) != 1:
        return len(others) >= 2
    opposite = spreads.get(f"pod-{'down' if side == 'up' else 'up'}-{others[0]}")
    return opposite is not None and opposite.median > threshold * spreads[name].median


def _path_rates(model: Model) -> dict[tuple[int, int], tuple[float, bool]]:
    """Per ordered pair of the stress test's groups (group_of), its path phase's rate per flow
    (node k of A to node k of B, min(|A|, |B|) flows) and whether a `path-A-B` link holds it. A
    path without a link ran at 90 % or more of what its flows' node caps and the up/down links
    kept would carry: that figure is its rate. Nodes without a cap take their best pair."""
    stored = np.asarray(model.group_of)
    k = int(stored.max()) + 1
    members = [np.flatnonzero(stored == x) for x in range(k)]
    best = np.where(model.state == MEASURED, model.bandwidth, np.nan)
    with warnings.catch_warnings():  # a node without a measured pair: NaN, left out below
        warnings.simplefilter("ignore", RuntimeWarning)
        out_cap = np.where(np.isfinite(model.inject), model.inject, np.nanmax(best, axis=1))
        in_cap = np.where(np.isfinite(model.eject), model.eject, np.nanmax(best, axis=0))
    up, down, path = {}, {}, {}
    for link in model.links:
        kind = link.name.split("-")[0]
        src, dst = link.from_groups, link.to_groups
        if kind == "up" and src is not None and len(src) == 1 and dst is None:
            up[src[0]] = link.capacity
        elif kind == "down" and dst is not None and len(dst) == 1 and src is None:
            down[dst[0]] = link.capacity
        elif kind == "path" and src is not None and dst is not None and len(src) == len(dst) == 1:
            path[(src[0], dst[0])] = link.capacity
    out = {}
    for a in range(k):
        for b in range(k):
            flows = min(members[a].size, members[b].size)
            if a == b or not flows:
                continue
            rate = float(np.sum(np.minimum(out_cap[members[a][:flows]], in_cap[members[b][:flows]])))
            rate = min(rate, up.get(a, np.inf), down.get(b, np.inf))
            if (a, b) in path:
                out[(a, b)] = (path[(a, b)] / flows, True)
            elif np.isfinite(rate) and rate > 0:
                out[(a, b)] = (rate / flows, False)
    return out


def _slow_paths(model: Model, g: np.ndarray, threshold: float, busy: set[int] = frozenset()) -> list[tuple[int, int]]:
    """Relations (of g's groups, both orders) whose path the stress test read slow in both
    directions: a path's rate per flow below the better quartile of the paths' by more than the
    threshold (alterations only make links worse, as for blocks inside groups), kept as a
    `path-A-B` link both ways, the two within SAME_RATE. A narrow link between two groups (a
    dragonfly's global or local link, which no group's uplink explains) caps both path phases
    at its rate; the phases run at separate times, so a link whose load varies reads them apart
    (capacity_spreads reads uplinks so). The relation's pairs' latency need not show it: a slow
    link's extra latency may be a whole number of hops, and its lone pairs are narrower than it.
    Only paths of two flows or more: one flow fills no link wider than a NIC (a narrower one
    slows the lone pairs, judged by _slow_relations). Not through a group in `busy` (its uplink's
    readings at separate times moved, capacity_spreads): its paths read the moment they ran."""
    stored = np.asarray(model.group_of) if model.group_of is not None else np.zeros(0, int)
    if not model.links or stored.size == 0 or (stored < 0).all():
        return []
    size = np.bincount(stored[stored >= 0])
    rates = {ab: r for ab, r in _path_rates(model).items() if min(size[ab[0]], size[ab[1]]) >= 2}
    if len(rates) < 4:
        return []
    healthy = float(np.percentile([r for r, _ in rates.values()], 75))
    out = []
    for (a, b), (rate, kept) in rates.items():
        back, back_kept = rates.get((b, a), (np.nan, False))
        if not (a < b and kept and back_kept and max(rate, back) * threshold < healthy
                and abs(rate / back - 1) <= SAME_RATE):
            continue
        ga, gb = (set(g[stored == x].tolist()) for x in (a, b))
        if len(ga) == 1 and len(gb) == 1 and ga != gb and not (ga | gb) & set(busy):
            x, y = int(next(iter(ga))), int(next(iter(gb)))
            if (g == x).sum() == (stored == a).sum() and (g == y).sum() == (stored == b).sum():
                out += [(x, y), (y, x)]
    return out


def _narrow_nics(model: Model, threshold: float) -> list[int]:
    """Nodes whose NIC the stress test read narrow both ways, steadily: inject and eject caps below
    the nodes' median by the threshold, and its pairs' median jitter (pair_variation) no higher
    than the typical pair's or JITTER_FLOOR. Lone pairs cannot see a NIC slowed to just below a
    narrower network (a torus link at half a NIC's rate caps every pair alike), many flows at
    once can. A NIC whose load varies is read at a low moment too, but its pairs vary: it is
    left to the varying links."""
    inject, eject = np.asarray(model.inject, float), np.asarray(model.eject, float)
    ok = np.isfinite(inject) & np.isfinite(eject) & (inject > 0) & (eject > 0)
    if ok.sum() < 3:
        return []
    narrow = ok & (inject * threshold < np.median(inject[ok])) & (eject * threshold < np.median(eject[ok]))
    var = pair_variation(model)
    seen = (model.state == MEASURED) & np.isfinite(var)
    if not seen.any():
        return [int(i) for i in np.flatnonzero(narrow)]
    calm = max(JITTER_FLOOR, float(np.median(var[seen])))
    out = []
    for i in np.flatnonzero(narrow):
        mine = np.concatenate([var[i, seen[i]], var[seen[:, i], i]])
        if not mine.size or np.median(mine) <= calm:
            out.append(int(i))
    return out


def _network_part(lat: np.ndarray, a: np.ndarray) -> np.ndarray:
    """Per pair, the latency of the network between the two nodes: the mean of both directions
    less both nodes' own terms."""
    sym = np.where(np.isfinite(lat) & np.isfinite(lat.T), (lat + lat.T) / 2, np.fmax(lat, lat.T))
    return sym - a[:, None] - a[None, :]


def round_trip_latency(model: Model) -> np.ndarray:
    """Per pair, its route's latency from its smallest messages' round trips: alpha_ij + alpha_ji
    over two, each direction's reading (s bytes out, an empty reply back) less s x beta_ij, the
    median over the smallest quarter of the sizes, both directions averaged; the Hockney alpha
    where there is none. The fitted alpha is a line's intercept through every size: a round-mate
    that shares a link at the large sizes of the concurrent probe tilts it (a 5-hop torus pair
    read 12.3 us against 12.0 us alone, between two distance classes), where the smallest
    messages cross the network before any round-mate loads it."""
    k = len(model.sizes)
    quarter = max(k // 4, 1)
    sizes = model.sizes[:quarter].astype(float)
    with np.errstate(all="ignore"), _quiet_nanmedian():
        beta = np.where(np.isfinite(model.beta), model.beta, 0.0)
        one = np.nanmedian((model.rtt_median[:, :, :quarter] - beta[:, :, None] * sizes) / 2, axis=-1)
    one = np.where((model.state == MEASURED) & np.isfinite(one) & (one > 0), one, model.alpha)
    return np.where(np.isfinite(one) & np.isfinite(one.T), (one + one.T) / 2, np.fmax(one, one.T))


def find_slow_links(model: Model, threshold: float = THRESHOLD) -> Findings:
    n = model.n_nodes
    g = model.groups().astype(int)
    measured = model.state == MEASURED
    np.fill_diagonal(measured, False)
    lat, bw = model.alpha, model.bandwidth

    # 1. Nodes: each node's own term, whatever its group and its number of ranks.
    a, blocks = node_latency_terms(model, g)
    lat_ratio = np.full(n, np.nan)
    for i in range(n):
        mine = np.concatenate([lat[i, measured[i]], lat[measured[:, i], i]])
        if mine.size:
            lat_ratio[i] = np.median(mine) / np.median(mine - a[i])
    lat_ratio = np.fmax(lat_ratio, _rack_latency_ratios(a, blocks, g))
    bw_ratio = _node_bandwidth_ratios(bw, measured, g)
    # Round trips that spread beyond half a latency level (a loaded real stack) make the
    # latency terms noise: a node is then slow by its bandwidth alone.
    by_latency = not model.latency_noisy()
    # A narrow NIC caps every round trip; one whose best round trips reach its group's varies.
    peak_ratio = _node_bandwidth_ratios(_peak_bandwidth(model), measured, g)
    with np.errstate(invalid="ignore"):
        narrow = (bw_ratio * threshold < 1) & ~(peak_ratio * threshold >= 1)
        slow = (by_latency & (lat_ratio > threshold)) | narrow
    slow_nodes = sorted(set(np.flatnonzero(slow).tolist()) | set(_narrow_nics(model, threshold)))

    # 2. Blocks, cleaned of slow nodes, against the healthy blocks of their kind.
    clean = measured.copy()
    clean[slow_nodes, :] = clean[:, slow_nodes] = False
    if not clean.any():
        clean = measured
    blat = _block_median(lat, clean, g, g)
    bbw = _block_median(bw, clean, g, g)
    inside = np.eye(blat.shape[0], dtype=bool)
    slow_blocks = []
    blat0, bbw0 = blat.copy(), bbw.copy()
    # Inside groups: against the better quartile of the blocks inside, as alterations only make
    # links worse.
    ok = inside & np.isfinite(blat)
    if ok.any():
        hl, hb = np.percentile(blat[ok], 25), np.percentile(bbw[ok], 75)
        for x, y in zip(*np.nonzero(ok)):
            if _slowness(blat[x, y], bbw[x, y], hl, hb) > threshold:
                slow_blocks.append((int(x), int(y)))
                blat[x, y], bbw[x, y] = hl, hb  # judge its pairs against healthy blocks
    # Capacities read at separate times: a busy uplink is not slow by bandwidth, whatever moment
    # its lone pairs or its stress phase caught; one read low every time is.
    spreads = capacity_spreads(model, g)
    busy = {x for x, sp in spreads.items() if sp.varying}
    moved = {x for x, sp in spreads.items() if sp.moved}
    steady = set(spreads) - busy
    # A group's uplink: every block through it is slow (judged against the other groups' parts).
    uplinks = _slow_uplinks(blat0, bbw0, threshold, busy)
    # One its pairs find slow whose readings moved, if short of the gap: a narrow link reads the
    # same every time, so its load varies and the pairs read its low moments.
    read_moving = set(uplinks) & moved
    spreads = {x: replace(sp, varying=True) if x in read_moving else sp for x, sp in spreads.items()}
    busy |= read_moving
    steady -= read_moving
    uplinks = [x for x in uplinks if x not in read_moving]
    across = ~inside & np.isfinite(blat0)
    for x in uplinks:
        hl, hb = np.percentile(blat0[across], 25), np.percentile(bbw0[across], 75)
        for y in range(blat.shape[0]):
            for block in ((x, y), (y, x)):
                if x != y and block not in slow_blocks and np.isfinite(blat[block]):
                    slow_blocks.append(block)
                    blat[block], bbw[block] = hl, hb

    # Between groups: against the distance classes (a longer route is no fault).
    hl, hb = ((np.percentile(blat0[across], 25), np.percentile(bbw0[across], 75)) if across.any()
              else (np.nan, np.nan))
    relations, own, classes, hops = _slow_relations(round_trip_latency(model), bw, clean, g, uplinks, blat0, bbw0,
                                              threshold, pair_variation(model))
    own_groups = {int(g[i]) for i in own if (g == g[i]).sum() == 1}  # their relations are their link's
    slow_nodes = sorted(set(slow_nodes) | set(own))
    for block in relations:
        if block not in slow_blocks and not own_groups & set(block):
            slow_blocks.append(block)
            blat[block], bbw[block] = hl, hb
    # Paths the stress test read narrow both ways: a slow link between the two groups.
    for block in _slow_paths(model, g, threshold, moved):
        if block not in slow_blocks and not own_groups & set(block):
            slow_blocks.append(block)
            blat[block], bbw[block] = hl, hb

    # 3. Pairs.
    bad_node = np.zeros(n, bool)
    bad_node[slow_nodes] = True
    slow_pairs: list[SlowPair] = []
    for i, j in zip(*np.nonzero(measured)):
        rl, rb = blat[g[i], g[j]], bbw[g[i], g[j]]
        if _slowness(lat[i, j], bw[i, j], rl, rb) <= threshold:
            continue
        if bad_node[i] or bad_node[j]:
            scope = "node"
        elif (g[i], g[j]) in slow_blocks:
            scope = "block"
        else:
            scope = "pair"
        slow_pairs.append(SlowPair(int(i), int(j), float(lat[i, j] / rl), float(bw[i, j] / rb), scope))
    slow_pairs.sort(key=lambda p: max(p.latency_ratio, 1 / p.bandwidth_ratio), reverse=True)

    # Uplinks the stress test found slow: where its readings at separate times agree, before the
    # jitter is read (the jitter of pairs through a narrow link is contention).
    by_capacity = set(_capacity_uplinks(model, g, threshold)) - set(uplinks) - busy
    sure = by_capacity & steady
    findings = Findings(
        groups=g, slow_pairs=slow_pairs, slow_nodes=slow_nodes, slow_blocks=sorted(slow_blocks),
        slow_uplinks=sorted(set(uplinks) | sure), node_latency=a, node_latency_ratio=lat_ratio,
        node_bandwidth_ratio=bw_ratio, classes=classes, slow_links=hops,
        slow_pods=_capacity_pods(model, g, threshold),
    )
    _find_variable_links(model, measured, g, findings, spreads)
    # Without readings at separate times (older models): slow, unless their pairs' jitter says
    # the link varies (the stress test may have read it at a low moment).
    findings.slow_uplinks = sorted(set(findings.slow_uplinks) | (by_capacity - set(findings.noisy_groups)))
    return findings


def pair_variation(model: Model) -> np.ndarray:
    """Per pair, its jitter (Luo et al. 2018: (max - min) / mean of the
    round trips): the median over the smallest quarter of the sizes or over
    the largest quarter, whichever is larger. A link whose latency varies
    shows at small sizes, one whose bandwidth varies only at large ones (a
    median over all sizes would hide it)."""
    out = np.full(model.state.shape, np.nan)
    ok = model.state == MEASURED
    k = len(model.sizes)
    if not ok.any() or k == 0:
        return out
    jit = model.jitter[ok]
    quarter = max(k // 4, 1)
    with np.errstate(all="ignore"), _quiet_nanmedian():
        small = np.nanmedian(jit[:, :quarter], axis=-1)
        large = np.nanmedian(jit[:, k - quarter:], axis=-1)
    out[ok] = np.fmax(small, large)
    return out


class _quiet_nanmedian:
    """Silence numpy's warning for all-NaN slices (pairs without jitter)."""

    def __enter__(self):
        import warnings

        self._w = warnings.catch_warnings()
        self._w.__enter__()
        warnings.simplefilter("ignore", RuntimeWarning)

    def __exit__(self, *exc):
        self._w.__exit__(*exc)


def tournament_rounds(n: int) -> np.ndarray:
    """Per pair of n nodes, the tournament round the probe measures it in (the engine's circle
    method, rw_tournament_partner; -1 on the diagonal). In concurrent mode a round's pairs run at
    once, in every repetition round alike."""
    from rankwise._engine import core as engine

    lib = engine.lib()
    out = np.full((n, n), -1, dtype=int)
    for t in range(lib.rw_tournament_rounds(n)):
        for i in range(n):
            j = lib.rw_tournament_partner(n, t, i)
            if j >= 0:
                out[i, j] = t
    return out


def _round_mates(model: Model, g: np.ndarray) -> np.ndarray:
    """Pairs the concurrent probe ran in the same round as another pair of the same relation
    (the same two groups, either way). A relation's pairs share its route, so round-mates share
    its links and each takes a share of the other's rate while both run: their round trips vary
    by contention whether or not a link's load varies over time. On a dragonfly the circle method
    pairs consecutive nodes with consecutive nodes, so most of a router pair's pairs meet
    mates of their own relation. None in isolated mode (one pair at a time)."""
    n = model.n_nodes
    if model.settings is None or model.settings.mode != "concurrent" or n < 3:
        return np.zeros((n, n), dtype=bool)
    rounds = tournament_rounds(n)
    lo, hi = np.minimum(g[:, None], g[None, :]), np.maximum(g[:, None], g[None, :])
    upper = np.triu(rounds >= 0, 1)
    i, j = np.nonzero(upper)
    key = (rounds[i, j] * (int(g.max()) + 1) + lo[i, j]) * (int(g.max()) + 1) + hi[i, j]
    crowded = np.zeros((n, n), dtype=bool)
    crowded[i, j] = np.bincount(key)[key] > 1
    return crowded | crowded.T


def _find_variable_links(model: Model, measured: np.ndarray, g: np.ndarray, f: Findings,
                         spreads: dict[int, UplinkSpread] | None = None) -> None:
    """The links whose load varies over time, each with the pairs it explains.

    A link explains variable pairs when the median jitter of the pairs that cross it is at least
    LINK_RATIO times the median of the other pairs (and above JITTER_FLOOR): a varying link is
    seen by the pairs measured while it was low, and that is most of them. Contention between
    the pairs of a concurrent round makes every pair vary a little, and no link's pairs more than
    the others': it explains nothing and is not reported, nor are pairs no link explains. In this
    order, each taking its pairs: a node's own link (its pairs inside its group vary too, which an
    uplink would leave alone), a group's uplink (pairs with one end in the group, the most varying
    first; three groups or more), the link between two groups or inside one (both directions),
    seen by its pairs that ran without a round-mate of the same relation (_round_mates; all of them
    where none did).
    Pairs through a link found slow (a slow relation, uplink or node) are left out: the jitter
    of pairs through a narrow link is contention. Many links are tried, so a link's pairs must
    also be above the upper quartile of the other pairs' jitter far more often than a quarter
    of the time (LINK_Z). A group's uplink whose capacity the stress test read varying at separate
    times (capacity_spreads) is named first, whatever its pairs' jitter; one whose readings agree
    is not named from jitter (its pairs' jitter is contention or noise)."""
    n = model.n_nodes
    var = pair_variation(model)
    ok = measured & np.isfinite(var)
    if not ok.any():
        return
    f.typical_jitter = float(np.median(var[ok]))
    same = g[:, None] == g[None, :]
    k = int(g.max()) + 1
    # Pairs through a link found slow vary by contention at the narrow link: they are not the
    # reference a link's pairs are compared with.
    calm = ok.copy()
    for x, y in f.slow_blocks:
        calm &= ~((g[:, None] == x) & (g[None, :] == y))
    for x in f.slow_uplinks:
        calm &= ~((g[:, None] == x) ^ (g[None, :] == x))
    calm[f.slow_nodes, :] = calm[:, f.slow_nodes] = False
    if not calm.any():
        calm = ok
    open_ = ok.copy()  # pairs no link has taken yet
    slow_nodes = set(f.slow_nodes)
    slow_groups = set(f.slow_uplinks)
    slow_blocks = {tuple(sorted(b)) for b in f.slow_blocks}
    scope = np.full((n, n), "", dtype=object)
    low = _lowest_bandwidth(model)

    def stands_out(cell: np.ndarray, rest: np.ndarray | None = None, search: bool = True) -> float:
        """The median jitter of the open pairs of cell when it stands out against the rest, else 0."""
        carried = open_ & cell & calm
        rest = calm & ~cell if rest is None else rest
        if carried.sum() < MIN_PAIRS or not rest.any():
            return 0.0  # too few to tell, or nothing to stand out against (a torus's one group)
        mine = float(np.median(var[carried]))
        others = float(np.median(var[rest]))
        # Many links are tried: a few pairs vary together by chance. The share of the link's
        # pairs above the upper quartile of the other pairs must exceed the quarter expected by
        # LINK_Z standard errors (62 pairs (a node of 32): 0.58, 384 pairs: 0.38; under 12 pairs: never).
        high = float(np.percentile(var[rest], 75))
        above = float(np.mean(var[carried] > high))
        enough = above >= 0.25 + LINK_Z * np.sqrt(0.1875 / carried.sum()) if search else True
        return mine if enough and mine >= max(JITTER_FLOOR, LINK_RATIO * others) else 0.0

    def take(cell: np.ndarray, what: str, label: str) -> None:
        carried = open_ & cell
        lows = low[carried]
        lows = lows[np.isfinite(lows)]
        f.varying_links.append(VaryingLink(what, label, int(carried.sum()), float(np.median(var[carried])),
                                           float(np.percentile(lows, 10)) if lows.size else float("nan")))
        scope[carried] = what
        open_[cell] = False

    # A node's own link: its pairs vary, including those inside its group.
    ends = [np.zeros((n, n), bool) for _ in range(n)]
    for i in range(n):
        ends[i][i, :] = ends[i][:, i] = True
    order = sorted(range(n), key=lambda i: -np.median(var[ok & ends[i]]) if (ok & ends[i]).any() else 0.0)
    for i in order:
        mates, rest = same & ends[i], calm & same & ~ends[i]
        has_mates = (ok & mates).sum() >= 2
        # Inside its group no round-mate shares a link with its pairs: where the pairs across
        # groups vary by contention, its own pairs there still stand out (found among many, LINK_Z).
        inside = has_mates and bool(stands_out(mates, rest))
        if i in slow_nodes or not (inside or stands_out(ends[i])):
            continue
        if has_mates and not inside and not stands_out(mates, rest, search=False):
            continue  # its mates do not see it: an uplink's, not the node's
        f.noisy_nodes.append(int(i))
        take(ends[i], "node", str(i))
    f.noisy_nodes.sort()

    # A group's uplink seen varying by the stress test's readings at separate times: named with
    # how low its capacity fell (with two groups too: each direction of each uplink was read).
    spreads = spreads or {}
    for x in sorted(x for x, sp in spreads.items() if sp.varying and x not in slow_groups):
        cell = (g[:, None] == x) ^ (g[None, :] == x)
        carried = open_ & cell
        f.noisy_groups.append(int(x))
        f.varying_links.append(VaryingLink("group", str(x), int(carried.sum()),
                                           float(np.median(var[carried])) if carried.any() else float("nan"),
                                           spreads[x].low, "capacity"))
        scope[carried] = "group"
        open_[cell] = False
    # A group's uplink: the pairs with one end in the group. With two groups that is their one
    # relation, which cannot tell which of the two uplinks varies: left to the relations. A group
    # of one node has no uplink of its own (a torus's: its node's link is the node's, its links to
    # its neighbours are hops, below).
    if k >= 3:
        size = np.bincount(g, minlength=k)
        cells = {x: (g[:, None] == x) ^ (g[None, :] == x) for x in range(k)
                 if x not in slow_groups and x not in spreads and size[x] >= 2}
        while cells:
            # The most varying first, over all its pairs (those through slow links included: two
            # groups may have the same pairs left once those are set aside).
            scores = {x: np.median(var[open_ & c]) if stands_out(c) else 0.0 for x, c in cells.items()}
            x = max(scores, key=scores.get)
            if not scores[x]:
                break
            f.noisy_groups.append(int(x))
            take(cells.pop(x), "group", str(x))
        f.noisy_groups.sort()

    # The link between two groups (or inside one), both directions together, seen by the pairs
    # that ran without a round-mate of their relation (the others vary by contention there).
    lo, hi = np.minimum(g[:, None], g[None, :]), np.maximum(g[:, None], g[None, :])
    touches = [(g[:, None] == x) | (g[None, :] == x) for x in range(k)]
    alone = ~_round_mates(model, g)
    for x in range(k):
        for y in range(x, k):
            if (x, y) in slow_blocks:
                continue
            cell = (lo == x) & (hi == y)
            # Against the other relations of the two groups too: contention near a busy link
            # raises a neighbourhood of relations, a varying link between two groups only theirs.
            seen = cell & alone
            if not (seen & ok).any():
                seen = cell  # every pair met mates of its relation (two groups): nothing to set apart
            if stands_out(seen) and stands_out(seen, calm & (touches[x] | touches[y]) & ~cell):
                f.noisy_blocks.append((x, y))
                take(cell, "block", f"{x}-{y}")

    # A link between two nodes of a direct network (a torus: groups of one node, relations that are
    # routes over several such links), seen by the pairs whose jitter stands out and no link above
    # explains.
    quiet = ok & (scope == "")
    ref = float(np.median(var[quiet])) if quiet.any() else 0.0
    with np.errstate(invalid="ignore"):
        stray = quiet & calm & (var > max(JITTER_FLOOR, JITTER_RATIO * ref))
    for u, v, mine in _varying_hops(model, f, var, stray):
        f.noisy_links.append((u, v))
        take(mine, "hop", f"{u}-{v}")

    explained = scope != ""
    quiet = ok & ~explained
    ref = float(np.median(var[quiet])) if quiet.any() else 0.0
    with np.errstate(invalid="ignore"):
        noisy = explained & (var > max(JITTER_FLOOR, JITTER_RATIO * ref))
        # Pairs through a link found slow vary by contention there: explained, not stray.
        stray = quiet & calm & (var > max(JITTER_FLOOR, JITTER_RATIO * ref))
    f.unexplained_pairs = sorted(((int(i), int(j), float(var[i, j])) for i, j in zip(*np.nonzero(stray))),
                                 key=lambda p: -p[2])
    pairs = [NoisyPair(int(i), int(j), float(var[i, j]), float(var[i, j] / ref) if ref > 0 else np.inf,
                       str(scope[i, j])) for i, j in zip(*np.nonzero(noisy))]
    pairs.sort(key=lambda p: p.jitter, reverse=True)
    f.noisy_pairs = pairs


def _varying_hops(model: Model, f: Findings, var: np.ndarray, stray: np.ndarray):
    """On a direct network (a torus, _hop_distances), the links between two nodes whose load varies:
    of the stray pairs (jitter standing out, no link explaining it), those whose shortest routes may
    cross the link vary LINK_RATIO times more (median) than the others, and there are HOP_PAIRS of
    them. Contention between the concurrent probe's round-mates varies pairs all over the network;
    a link whose load varies, only the pairs through it. The link whose pairs stand out most first,
    each taking its pairs. Returns [(u, v, its pairs)]."""
    n = model.n_nodes
    if f.classes is None or not stray.any():
        return []
    net = _hop_distances(_network_part(round_trip_latency(model), np.zeros(n)), f.classes, f.slow_links)
    if net is None:
        return []
    hops, _, _, near = net
    cells = []
    for u, v in np.argwhere(np.triu(near, 1)):
        via = np.minimum(hops[:, u, None] + 1 + hops[None, v, :], hops[:, v, None] + 1 + hops[None, u, :])
        cells.append((int(u), int(v), via <= hops))
    left, out = stray.copy(), []
    while True:
        best, best_ratio = None, LINK_RATIO
        for u, v, cell in cells:
            mine, rest = left & cell, left & ~cell
            if mine.sum() < HOP_PAIRS:
                continue
            ratio = np.median(var[mine]) / np.median(var[rest]) if rest.any() else np.inf
            if ratio >= best_ratio:
                best, best_ratio = (u, v, mine), ratio
        if best is None:
            return out
        out.append(best)
        left &= ~best[2]


def _peak_bandwidth(model: Model) -> np.ndarray:
    """Per pair, the largest size over its fastest round trip at that size: the bandwidth it
    reached at its best moment (a link that varies reaches its capacity while idle)."""
    out = np.full(model.state.shape, np.nan)
    ok = model.state == MEASURED
    if not ok.any() or len(model.sizes) == 0:
        return out
    with np.errstate(all="ignore"):
        out[ok] = float(model.sizes[-1]) / model.rtt_min[ok][:, -1]
    out[~np.isfinite(out)] = np.nan
    return out


def _lowest_bandwidth(model: Model) -> np.ndarray:
    """Per pair, its fastest round trip over its slowest at the largest quarter of the sizes
    (median over those sizes): the fraction of its best bandwidth it fell to while measured.
    A link whose bandwidth walks down to x0.3 shows as about 0.3 on the pairs it limits."""
    out = np.full(model.state.shape, np.nan)
    k = len(model.sizes)
    ok = model.state == MEASURED
    if not ok.any() or k == 0:
        return out
    quarter = max(k // 4, 1)
    with np.errstate(all="ignore"), _quiet_nanmedian():
        ratio = model.rtt_min[ok][:, k - quarter:] / model.rtt_max[ok][:, k - quarter:]
        out[ok] = np.nanmedian(ratio, axis=-1)
    return out
