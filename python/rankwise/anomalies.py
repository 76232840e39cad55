"""Links the static topology does not show: pairs measurably slower than
pairs of the same kind.

Nodes are first grouped from the numbers (Model.groups). Pairs between the
same two groups form a block and should look alike. Three questions follow:
- is a node's own link bad? its pairs are slower than the other pairs of
  the same blocks (compared without the node, so that it does not hide
  itself in a small rack);
- is a shared link bad (a rack uplink)? a block, cleaned of bad nodes, is
  slower than the healthy blocks of its kind (inside a group / across);
- which pairs are slow? those against their cleaned block, and every pair
  of a slow block."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rankwise.model import MEASURED, Model

THRESHOLD = 1.3  # slower than 1.3x the healthy value counts as degraded


@dataclass(frozen=True)
class SlowPair:
    src: int
    dst: int
    latency_ratio: float  # alpha / healthy alpha of its block (> 1 is slower)
    bandwidth_ratio: float  # bandwidth / healthy bandwidth of its block (< 1 is slower)
    scope: str  # "node" (a node's own link), "block" (a shared link) or "pair"


@dataclass
class Findings:
    groups: np.ndarray
    slow_pairs: list[SlowPair]
    slow_nodes: list[int]
    slow_blocks: list[tuple[int, int]]  # (source group, destination group)

    def flagged(self) -> set[tuple[int, int]]:
        return {(p.src, p.dst) for p in self.slow_pairs}


def _slowness(lat, bw, ref_lat, ref_bw):
    """How many times slower than the reference, by latency or bandwidth."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.fmax(lat / ref_lat, ref_bw / bw)


def _block_median(values, mask, gi, gj):
    """Median of values over mask, per (source group, destination group) cell."""
    out = np.full((gi.max() + 1, gj.max() + 1), np.nan)
    for a in np.unique(gi):
        for b in np.unique(gj):
            m = mask & (gi[:, None] == a) & (gj[None, :] == b)
            if m.any():
                out[a, b] = np.median(values[m])
    return out


def find_slow_links(model: Model, threshold: float = THRESHOLD) -> Findings:
    n = model.n_nodes
    g = model.groups().astype(int)
    measured = model.state == MEASURED
    np.fill_diagonal(measured, False)
    lat, bw = model.alpha, model.bandwidth

    # 1. Nodes: each node's pairs against the same blocks without it.
    slow_nodes = []
    for i in range(n):
        without = measured.copy()
        without[i, :] = without[:, i] = False
        ref_lat = _block_median(lat, without, g, g)
        ref_bw = _block_median(bw, without, g, g)
        mine = []
        for j in np.flatnonzero(measured[i]):
            mine.append(_slowness(lat[i, j], bw[i, j], ref_lat[g[i], g[j]], ref_bw[g[i], g[j]]))
        for j in np.flatnonzero(measured[:, i]):
            mine.append(_slowness(lat[j, i], bw[j, i], ref_lat[g[j], g[i]], ref_bw[g[j], g[i]]))
        mine = np.asarray(mine, float)
        mine = mine[np.isfinite(mine)]
        if mine.size and np.median(mine) > threshold:
            slow_nodes.append(i)

    # 2. Blocks, cleaned of slow nodes, against the healthy blocks of their kind.
    clean = measured.copy()
    clean[slow_nodes, :] = clean[:, slow_nodes] = False
    if not clean.any():
        clean = measured
    blat = _block_median(lat, clean, g, g)
    bbw = _block_median(bw, clean, g, g)
    inside = np.eye(blat.shape[0], dtype=bool)
    slow_blocks = []
    for kind in (inside, ~inside):
        ok = kind & np.isfinite(blat)
        if not ok.any():
            continue
        # Healthy: the better quartile, since alterations only make links worse.
        hl, hb = np.percentile(blat[ok], 25), np.percentile(bbw[ok], 75)
        for a, b in zip(*np.nonzero(ok)):
            if _slowness(blat[a, b], bbw[a, b], hl, hb) > threshold:
                slow_blocks.append((int(a), int(b)))
                blat[a, b], bbw[a, b] = hl, hb  # judge its pairs against healthy blocks

    # 3. Pairs.
    bad_node = np.zeros(n, bool)
    bad_node[slow_nodes] = True
    slow: list[SlowPair] = []
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
        slow.append(SlowPair(int(i), int(j), float(lat[i, j] / rl), float(bw[i, j] / rb), scope))
    slow.sort(key=lambda p: max(p.latency_ratio, 1 / p.bandwidth_ratio), reverse=True)
    return Findings(groups=g, slow_pairs=slow, slow_nodes=slow_nodes, slow_blocks=sorted(slow_blocks))
