"""The text summary of a model.

``summarize`` computes plain data (a ``Summary``: numbers and node names,
nothing to print); ``render`` prints a Summary with rich. Tests assert on
the Summary, the CLI prints it.

"Typical" values: nodes are grouped from the latencies alone
(``Model.groups``); pairs inside the same group, or between the same two
groups, are a *relation* and should look alike. A pair's ratio is its value
over the median of its relation, so a degraded cable stands out even when
inter-group pairs are slower in absolute terms.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field

import numpy as np

from rankwise.model.anomalies import find_slow_links
from rankwise.model.model import MEASURED, MISSING, UNPROBED, Model
from rankwise.report.protocol import ProtocolSummary, render_protocol, summarize_protocol

SLOW_RATIO = 1.3  # as rankwise.model.anomalies: a figure beyond 1.3x its typical value is flagged
_TYPICAL = "typical = median of the pairs in the same group, or between the same two groups"

# ------------------------------------------------------------------ data


@dataclass
class PairRow:
    """One ordered pair, with its figures and how far they are from typical."""

    src: str
    dst: str
    src_index: int
    dst_index: int
    relation: str  # "in g1" (same group) or "g0-g2" (between two groups)
    alpha_us: float  # one-way latency (Hockney alpha), microseconds
    bandwidth_gbps: float  # src -> dst, GB/s (1e9 bytes/s); NaN if unknown
    typical_alpha_us: float  # median alpha of the pair's relation
    typical_bandwidth_gbps: float  # median bandwidth of the pair's relation
    latency_ratio: float  # alpha / typical alpha (> 1 is slower)
    bandwidth_ratio: float  # bandwidth / typical bandwidth (< 1 is slower)
    jitter: float  # median over sizes of (max - min) / mean; NaN if unknown


@dataclass
class Relation:
    """Typical figures of the pairs inside one group or between two groups."""

    groups: tuple[int, int]  # (a, a) inside group a; (a, b), a < b, between them
    pairs: int  # measured ordered pairs
    alpha_us: float  # median
    bandwidth_gbps: float  # median


@dataclass
class IntraSummary:
    """Rank-to-rank figures inside nodes (only nodes with >= 2 ranks have any)."""

    measured: int  # nodes with intra-node figures
    missing: int  # nodes whose intra-node measurement failed
    single_rank: int  # nodes with one rank: nothing to measure
    alpha_us: tuple[float, float, float]  # min, median, max over measured nodes
    bandwidth_gbps: tuple[float, float, float]  # min, median, max
    slowest_latency_node: str | None  # highest intra-node alpha
    slowest_bandwidth_node: str | None  # lowest intra-node bandwidth


@dataclass
class JitterSummary:
    """Jitter = (max - min) / mean of the kept round trips (a fraction)."""

    median: float  # over measured pairs of the per-pair median over sizes
    p95: float
    max: float
    by_size: list[tuple[int, float]]  # (message size, median jitter over pairs)
    noisiest: list[tuple[str, str, float]]  # (src, dst, jitter), worst first


@dataclass
class SlowNode:
    """A node whose own link (NIC, cable) makes all its pairs slower."""

    node: str
    group: int
    extra_latency_us: float  # its own latency term above the typical node's
    latency_ratio: float  # its pairs' alpha / the same without its term
    bandwidth_ratio: float  # its pairs' bandwidth / the same blocks' without it


@dataclass
class Structure:
    """What rankwise.model.anomalies finds: slow and variable links, and the
    shared link (a node's, a group's uplink, a group pair) explaining them."""

    slow_nodes: list[SlowNode]
    slow_blocks: list[str]  # relations ("in g1", "g0-g2") slower than the healthy ones of their kind, no slow uplink's
    slow_uplinks: list[int]  # groups whose own uplink is slow (every relation through it is)
    variable_nodes: list[str]  # nodes whose own link varies over time
    variable_groups: list[int]  # groups whose uplink varies
    variable_blocks: list[str]  # group pairs whose link varies
    variable_pairs: int  # ordered pairs whose jitter stands out, explained by a varying link
    variable_alone: list[tuple[str, str, float]]  # (src, dst, jitter) explained by no link: a note, not a finding
    typical_jitter: float  # median over pairs (see rankwise.model.anomalies.pair_variation)
    variable_links: list[str] = field(default_factory=list)  # each varying link, with its figures
    classes: str = ""  # the distance classes relations are judged against ("" without)
    slow_pods: list[list[int]] = field(default_factory=list)  # groups of each pod whose own uplink is slow
    slow_hops: list[str] = field(default_factory=list)  # a direct network's slow links between two nodes ("a <-> b")


@dataclass
class Capacities:
    """What the stress test found (docs/concepts/model.md, "Shared-link capacity")."""

    groups: list[str]  # node labels per group the links refer to
    links: list[tuple[str, float, str, str]]  # (name, GB/s, from, to)
    nic_gbps: tuple[float, float]  # median inject, eject over the nodes measured
    low_nics: list[tuple[str, float, float]]  # (node, inject, eject GB/s) below typical / SLOW_RATIO
    # nodes whose two directions share the interface (a `duplex` line) and their median share of
    # out + in when both run at once
    duplex_nodes: int = 0
    duplex_share: float = math.nan
    # a direct network's links between neighbours (model hops): how many, their median GB/s, and
    # those below it by SLOW_RATIO as (from, to, GB/s)
    hops: int = 0
    hop_gbps: float = math.nan
    narrow_hops: list[tuple[str, str, float]] = field(default_factory=list)


@dataclass
class Summary:
    n_nodes: int
    ranks: int  # total MPI ranks (sum of ranks per node)
    names: list[str]
    sizes: list[int]  # message sizes probed, bytes
    settings: dict  # probe settings (mode, repetitions, rounds, ...)
    source: str
    created: float | None  # unix time the model was made (None if unknown)
    measured_span: tuple[float, float] | None  # first / last pair measurement (unix time)
    pairs_total: int  # ordered pairs n * (n - 1)
    measured: int
    missing: int
    unprobed: int
    groups: list[list[str]]  # node names per group, group g at index g
    group_labels: list[str]  # the same, runs compressed ("node-0..node-15")
    relations: list[Relation]  # typical figures per group relation
    slowest_latency: list[PairRow]  # by latency ratio, each unordered pair once
    slowest_bandwidth: list[PairRow]  # by bandwidth ratio, ordered pairs
    flagged_pairs: int  # ordered pairs beyond SLOW_RATIO of typical (latency or bandwidth)
    flagged_nodes: list[tuple[str, int, int]]  # (node, its flagged pairs, its measured pairs), most first
    missing_pairs: list[tuple[str, str]]  # (src, dst), all of them
    missing_by_node: list[tuple[str, int]]  # nodes in missing pairs, most first
    intra: IntraSummary | None
    jitter: JitterSummary | None
    structure: Structure | None = None  # slow and variable links (None: fewer than 3 nodes measured)
    capacities: Capacities | None = None  # stress test figures (None: the model has none)
    typical_alpha_us: float = math.nan  # median over all measured pairs
    typical_bandwidth_gbps: float = math.nan
    notes: list[str] = field(default_factory=list)
    protocol: ProtocolSummary | None = None  # knee and send overhead (report/protocol.py)


# ------------------------------------------------------------ computing



def compress_names(names: list[str]) -> str:
    """Runs of names that share a prefix and have consecutive numbers, in
    the given order, as 'node-0..node-15'; two in a row stay 'a1, a2'.
    Zero padding is kept ('n01..n12') and must match within a run."""

    def split(name):
        # rstrip, not a regex: '(.*?)(\d+)$' backtracks quadratically on long runs of digits
        prefix = name.rstrip("0123456789")
        return (prefix, name[len(prefix):]) if len(prefix) < len(name) else (name, None)

    def follows(prev, cur):
        (p1, d1), (p2, d2) = prev, cur
        if d1 is None or d2 is None or p1 != p2 or max(len(d1), len(d2)) > 18 or int(d2) != int(d1) + 1:
            return False
        padded = (len(d1) > 1 and d1[0] == "0") or (len(d2) > 1 and d2[0] == "0")
        return not padded or len(d1) == len(d2)

    parts: list[str] = []
    run: list[str] = []
    prev = None
    for name in names:
        cur = split(name)
        if run and follows(prev, cur):
            run.append(name)
        else:
            parts.extend(_run_text(run))
            run = [name]
        prev = cur
    parts.extend(_run_text(run))
    return ", ".join(parts)


def _run_text(run: list[str]) -> list[str]:
    if len(run) >= 3:
        return [f"{run[0]}..{run[-1]}"]
    return list(run)


def _finite_median(values: np.ndarray) -> float:
    values = values[np.isfinite(values)]
    return float(np.median(values)) if values.size else math.nan


def _relation_key(gi: int, gj: int) -> tuple[int, int]:
    return (gi, gj) if gi <= gj else (gj, gi)


def _relation_text(key: tuple[int, int]) -> str:
    return f"in g{key[0]}" if key[0] == key[1] else f"g{key[0]}-g{key[1]}"


def summarize(model: Model, top: int = 10) -> Summary:
    """Plain data describing ``model``; ``top`` bounds the slowest-pair lists."""
    n = model.n_nodes
    names = list(model.names)
    state = model.state.copy()
    offdiag = ~np.eye(n, dtype=bool)
    measured = (state == MEASURED) & offdiag
    missing = (state == MISSING) & offdiag
    unprobed = (state == UNPROBED) & offdiag

    alpha_us = np.where(measured, model.alpha, np.nan) * 1e6
    bw_gbps = np.where(measured, model.bandwidth, np.nan) / 1e9
    jitter = model.pair_jitter if n else np.zeros((0, 0))

    findings = find_slow_links(model) if measured.any() and n >= 3 else None
    groups = findings.groups if findings is not None else model.groups() if n else np.zeros(0, np.int32)
    n_groups = int(groups.max()) + 1 if n else 0
    members = [[names[i] for i in np.flatnonzero(groups == g)] for g in range(n_groups)]

    # Typical figures per relation (inside a group, or between two groups).
    gi = groups[:, None].repeat(n, axis=1)
    gj = groups[None, :].repeat(n, axis=0)
    lo, hi = np.minimum(gi, gj), np.maximum(gi, gj)
    relations: list[Relation] = []
    typical_a = np.full((n, n), np.nan)
    typical_b = np.full((n, n), np.nan)
    for a in range(n_groups):
        for b in range(a, n_groups):
            block = (lo == a) & (hi == b)
            mask = block & measured
            if not mask.any():
                continue
            ta, tb = _finite_median(alpha_us[mask]), _finite_median(bw_gbps[mask])
            typical_a[block], typical_b[block] = ta, tb
            relations.append(Relation((a, b), int(mask.sum()), ta, tb))

    with np.errstate(divide="ignore", invalid="ignore"):
        lat_ratio = alpha_us / typical_a
        bw_ratio = bw_gbps / typical_b

    def row(i: int, j: int) -> PairRow:
        return PairRow(
            src=names[i], dst=names[j], src_index=int(i), dst_index=int(j),
            relation=_relation_text(_relation_key(int(groups[i]), int(groups[j]))),
            alpha_us=float(alpha_us[i, j]), bandwidth_gbps=float(bw_gbps[i, j]),
            typical_alpha_us=float(typical_a[i, j]), typical_bandwidth_gbps=float(typical_b[i, j]),
            latency_ratio=float(lat_ratio[i, j]), bandwidth_ratio=float(bw_ratio[i, j]),
            jitter=float(jitter[i, j]),
        )

    # Slowest by latency: alpha is the mean of both directions' one-way
    # latency (docs/reference/formats.md), so i -> j and j -> i measure the same thing:
    # list each unordered pair once, from its worse direction.
    src, dst = np.nonzero(measured & np.isfinite(lat_ratio))
    order = np.lexsort((-alpha_us[src, dst], -lat_ratio[src, dst]))
    slowest_latency, seen = [], set()
    for k in order if top > 0 else ():
        i, j = int(src[k]), int(dst[k])
        if (j, i) in seen:
            continue
        seen.add((i, j))
        slowest_latency.append(row(i, j))
        if len(slowest_latency) >= top:
            break

    # Slowest by bandwidth: bandwidth is per direction.
    src, dst = np.nonzero(measured & np.isfinite(bw_ratio))
    order = np.lexsort((bw_gbps[src, dst], bw_ratio[src, dst]))[: max(top, 0)]
    slowest_bandwidth = [row(int(src[k]), int(dst[k])) for k in order]

    # Pairs far from typical, and the nodes they share (a node's own bad link).
    with np.errstate(invalid="ignore"):
        flagged = measured & ((lat_ratio > SLOW_RATIO) | (bw_ratio * SLOW_RATIO < 1))
    involved = flagged.sum(axis=0) + flagged.sum(axis=1)
    degree = measured.sum(axis=0) + measured.sum(axis=1)
    flagged_nodes = [(names[i], int(involved[i]), int(degree[i]))
                     for i in sorted(np.flatnonzero(involved), key=lambda i: (-involved[i], i))][:10]

    missing_pairs = [(names[i], names[j]) for i, j in zip(*np.nonzero(missing))]
    per_node = missing.sum(axis=0) + missing.sum(axis=1)
    missing_by_node = sorted(
        ((names[i], int(per_node[i])) for i in np.flatnonzero(per_node)), key=lambda t: (-t[1], names.index(t[0]))
    )

    stamps = model.measured_at[(measured | missing) & np.isfinite(model.measured_at)]
    notes = []
    if n and n_groups == 1 and measured.any():
        notes.append("no group structure in the latencies or bandwidths: all nodes form one group")
    if unprobed.any():
        k = int(unprobed.sum())
        notes.append(f"{k} pair{' was' if k == 1 else 's were'} never probed (partial model)")

    return Summary(
        n_nodes=n,
        ranks=int(np.sum(model.ranks_per_node)),
        names=names,
        sizes=[int(s) for s in model.sizes],
        settings=asdict(model.settings),
        source=model.source.strip() if model.source.strip() not in ("", "-") else "",
        created=float(model.created) if np.isfinite(model.created) else None,
        measured_span=(float(stamps.min()), float(stamps.max())) if stamps.size else None,
        pairs_total=n * (n - 1),
        measured=int(measured.sum()),
        missing=int(missing.sum()),
        unprobed=int(unprobed.sum()),
        groups=members,
        group_labels=[compress_names(g) for g in members],
        relations=relations,
        slowest_latency=slowest_latency,
        slowest_bandwidth=slowest_bandwidth,
        flagged_pairs=int(flagged.sum()),
        flagged_nodes=flagged_nodes,
        missing_pairs=missing_pairs,
        missing_by_node=missing_by_node,
        intra=_intra(model),
        jitter=_jitter(model, measured, jitter),
        structure=_structure(names, findings) if findings is not None else None,
        capacities=_capacities(model),
        typical_alpha_us=_finite_median(alpha_us[measured]) if measured.any() else math.nan,
        typical_bandwidth_gbps=_finite_median(bw_gbps[measured]) if measured.any() else math.nan,
        notes=notes,
        protocol=summarize_protocol(model),
    )


def _capacities(model: Model) -> Capacities | None:
    inject = model.inject if model.inject is not None else np.full(model.n_nodes, np.nan)
    eject = model.eject if model.eject is not None else np.full(model.n_nodes, np.nan)
    if not model.links and not model.hops and not np.isfinite(inject).any() and not np.isfinite(eject).any():
        return None
    group_of = model.group_of if model.group_of is not None else np.full(model.n_nodes, -1)
    n_groups = int(group_of.max()) + 1 if group_of.size else 0
    labels = [compress_names([model.names[i] for i in np.flatnonzero(group_of == g)]) for g in range(n_groups)]

    def side(groups) -> str:
        return "any group" if groups is None else ", ".join(f"g{g}" for g in groups)

    links = [(link.name, link.capacity / 1e9, side(link.from_groups), side(link.to_groups)) for link in model.links]
    typical = (_finite_median(inject), _finite_median(eject))
    low = [(model.names[i], inject[i] / 1e9, eject[i] / 1e9) for i in range(model.n_nodes)
           if inject[i] * SLOW_RATIO < typical[0] or eject[i] * SLOW_RATIO < typical[1]]
    duplex = model.duplex if model.duplex is not None else np.full(model.n_nodes, np.nan)
    shared = np.isfinite(duplex)
    share = _finite_median(duplex[shared] / (inject[shared] + eject[shared])) if shared.any() else math.nan
    rates = np.array([h.capacity for h in model.hops])
    hop_typical = float(np.median(rates)) if rates.size else math.nan
    narrow = [(model.names[h.src], model.names[h.dst], h.capacity / 1e9) for h in model.hops
              if h.capacity * SLOW_RATIO < hop_typical]
    return Capacities(labels, links, (typical[0] / 1e9, typical[1] / 1e9), low, int(shared.sum()), share,
                      len(model.hops), hop_typical / 1e9, narrow)


def _render_capacities(c: Capacities, console) -> None:
    from rich.markup import escape  # node and link names come from the model file

    console.print("[bold]Capacities[/] (stress test: many flows at once, docs/concepts/model.md):", highlight=False)
    if c.groups:
        console.print("  groups: " + escape("; ".join(f"g{g} {label}" for g, label in enumerate(c.groups))),
                      highlight=False)
    if c.links:
        for name, gbps, src, dst in c.links:
            console.print(escape(f"  link {name}: {_num(gbps)} GB/s, flows from {src} to {dst}"), highlight=False)
    elif not c.hops:
        console.print("  no shared link limits the flows: every group carries what its nodes send", highlight=False)
    if c.hops:
        console.print(f"  direct network: {c.hops} links between neighbours (one way each), typical "
                      f"{_num(c.hop_gbps)} GB/s; flows spread over their shortest routes", highlight=False)
    if c.narrow_hops:
        shown = ", ".join(f"{a} -> {b} {_num(g)} GB/s" for a, b, g in c.narrow_hops[:8])
        more = f" ... and {len(c.narrow_hops) - 8} more" if len(c.narrow_hops) > 8 else ""
        console.print("  [bold red]narrow links[/]: " + escape(shown + more), highlight=False)
    console.print(f"  nic: typical {_num(c.nic_gbps[0])} GB/s out, {_num(c.nic_gbps[1])} GB/s in", highlight=False)
    if c.low_nics:
        shown = ", ".join(f"{n} {_num(a)} / {_num(b)} GB/s" for n, a, b in c.low_nics[:8])
        more = f" ... and {len(c.low_nics) - 8} more" if len(c.low_nics) > 8 else ""
        console.print("  [bold red]low nic caps[/] (out / in): " + escape(shown + more), highlight=False)
    if c.duplex_nodes:
        console.print(f"  both directions at once: {c.duplex_nodes} node(s) carry {_num(100 * c.duplex_share)} % "
                      "of out + in (they share the interface)", highlight=False)
    console.print()


def _structure(names: list[str], f) -> Structure:
    def finite(x) -> float:
        return float(x) if np.isfinite(x) else math.nan

    slow = [SlowNode(names[i], int(f.groups[i]), finite(f.node_latency[i] * 1e6), finite(f.node_latency_ratio[i]),
                     finite(f.node_bandwidth_ratio[i])) for i in f.slow_nodes]
    alone = [(names[i], names[j], v) for i, j, v in f.unexplained_pairs]
    links = []
    for v in f.varying_links:
        if v.kind == "node":
            what = f"{names[int(v.where)]}'s link"
        elif v.kind == "group":
            what = f"g{v.where}'s uplink"
        elif v.kind == "hop":
            what = "the link " + " <-> ".join(names[int(x)] for x in v.where.split("-"))
        else:
            what = "the link " + _relation_text(tuple(int(x) for x in v.where.split("-")))
        if v.seen_by == "capacity":
            links.append(f"{what} (capacity read at separate times down to x{v.low:.2g} of its high, {v.pairs} pairs)")
            continue
        low = f", bandwidth down to x{v.low:.2g} of its best" if np.isfinite(v.low) else ""
        links.append(f"{what} ({v.pairs} pairs, jitter {100 * v.jitter:.0f}%{low})")
    c = f.classes
    classes = "" if c is None else (f"{c.base * 1e6:.3g} us + m x {c.step * 1e6:.3g} us, m = 0..{c.top}")
    return Structure(
        slow_nodes=slow,
        slow_blocks=[_relation_text(b) for b in dict.fromkeys(_relation_key(*b) for b in f.slow_blocks
                                                              if not set(b) & set(f.slow_uplinks))],
        slow_uplinks=list(f.slow_uplinks),
        slow_pods=[list(p) for p in f.slow_pods],
        slow_hops=[f"{names[u]} <-> {names[v]}" for u, v in f.slow_links],
        variable_nodes=[names[i] for i in f.noisy_nodes],
        variable_groups=list(f.noisy_groups),
        variable_blocks=[_relation_text(b) for b in f.noisy_blocks],
        variable_pairs=len(f.noisy_pairs),
        variable_alone=alone,
        typical_jitter=f.typical_jitter,
        variable_links=links,
        classes=classes,
    )


def _intra(model: Model) -> IntraSummary | None:
    multi = np.asarray(model.ranks_per_node) >= 2
    ok = (model.intra_state == MEASURED) & multi
    failed = (model.intra_state == MISSING) & multi
    if not ok.any() and not failed.any():
        return None
    a = np.where(ok, model.intra_alpha, np.nan) * 1e6
    with np.errstate(divide="ignore", invalid="ignore"):
        bw = np.where(ok & (model.intra_beta > 0), 1.0 / model.intra_beta, np.nan) / 1e9

    def spread(v):
        v = v[np.isfinite(v)]
        return (float(v.min()), float(np.median(v)), float(v.max())) if v.size else (math.nan,) * 3

    slow_a = int(np.nanargmax(a)) if np.isfinite(a).any() else None
    slow_b = int(np.nanargmin(bw)) if np.isfinite(bw).any() else None
    return IntraSummary(
        measured=int(ok.sum()),
        missing=int(failed.sum()),
        single_rank=int((~multi).sum()),
        alpha_us=spread(a),
        bandwidth_gbps=spread(bw),
        slowest_latency_node=model.names[slow_a] if slow_a is not None else None,
        slowest_bandwidth_node=model.names[slow_b] if slow_b is not None else None,
    )


def _jitter(model: Model, measured: np.ndarray, pair_jitter: np.ndarray, worst: int = 5) -> JitterSummary | None:
    values = pair_jitter[measured]
    if not np.isfinite(values).any():
        return None
    finite = values[np.isfinite(values)]
    by_size = []
    for s, size in enumerate(model.sizes):
        col = model.jitter[..., s][measured]
        col = col[np.isfinite(col)]
        if col.size:
            by_size.append((int(size), float(np.median(col))))
    src, dst = np.nonzero(measured & np.isfinite(pair_jitter))
    order = np.argsort(-pair_jitter[src, dst], kind="stable")[:worst]
    return JitterSummary(
        median=float(np.median(finite)),
        p95=float(np.percentile(finite, 95)),
        max=float(finite.max()),
        by_size=by_size,
        noisiest=[(model.names[src[k]], model.names[dst[k]], float(pair_jitter[src[k], dst[k]])) for k in order],
    )


# -------------------------------------------------------------- printing

MAX_MISSING_LISTED = 12
MAX_RELATIONS_LISTED = 16


def _size_text(nbytes: int) -> str:
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= scale and nbytes % scale == 0:
            return f"{nbytes // scale} {unit}"
    return f"{nbytes} B"


def _num(value: float, digits: int = 2) -> str:
    return "-" if value is None or not math.isfinite(value) else f"{value:.{digits}f}"


def _ratio(value: float, slower_above: bool) -> str:
    if not math.isfinite(value):
        return "-"
    slow = value > SLOW_RATIO if slower_above else value * SLOW_RATIO < 1
    mild = value > 1.1 if slower_above else value * 1.1 < 1
    text = f"{value:.2f}x"
    return f"[bold red]{text}[/]" if slow else f"[yellow]{text}[/]" if mild else text


def _span(values) -> tuple[float, float]:
    """(min, max) of the finite values, NaN when there are none (np.nanmin
    would warn on an all-NaN list)."""
    finite = [v for v in values if math.isfinite(v)]
    return (min(finite), max(finite)) if finite else (math.nan, math.nan)


def _when(t: float) -> str:
    """A unix time as local date and time; one a calendar cannot show (a
    damaged or hand-edited model: 1e300, negative, NaN) as the raw number."""
    try:
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t))
    except (OverflowError, OSError, ValueError):
        return f"at unix time {t:.6g} (not a calendar date)"


def render(summary: Summary, console) -> None:
    """Print ``summary`` on a rich Console."""
    from rich import box
    from rich.table import Table
    from rich.markup import escape  # node names and notes come from the model file
    from rich.text import Text

    s = summary
    head = Text()
    head.append("rankwise model", style="bold")
    head.append(f"  {s.n_nodes} nodes, {s.ranks} ranks")
    if s.source:
        head.append(f"  from {s.source}", style="cyan")
    console.print(head)
    st = s.settings
    console.print(
        f"  sizes {', '.join(_size_text(x) for x in s.sizes) or '-'}; {st['mode']} mode, "
        f"{st['repetitions']} repetitions x {st['rounds']} rounds, timeout {st['timeout']:g} s",
        highlight=False,
    )
    when = []
    if s.created is not None:
        when.append(f"created {_when(s.created)}")
    if s.measured_span is not None:
        a, b = s.measured_span
        when.append(f"measured {_when(a)}" + (f" .. {_when(b)}" if b - a >= 1 else ""))
    if when:
        console.print("  " + "; ".join(when), highlight=False)
    pairs = f"  pairs: {s.measured}/{s.pairs_total} measured"
    if s.missing:
        pairs += f", [bold red]{s.missing} missing[/]"
    if s.unprobed:
        pairs += f", [yellow]{s.unprobed} unprobed[/]"
    if s.measured:
        pairs += f"; typical alpha {_num(s.typical_alpha_us)} us, bandwidth {_num(s.typical_bandwidth_gbps)} GB/s"
    console.print(pairs, highlight=False)
    for note in s.notes:
        console.print(f"  [dim]note: {escape(note)}[/]", highlight=False)

    if s.groups:
        t = Table(title="Groups of close nodes (from latencies; bandwidths where those are flat or noise)", title_justify="left", box=box.SIMPLE_HEAD)
        t.add_column("group", style="bold")
        t.add_column("nodes", justify="right")
        t.add_column("alpha us", justify="right")
        t.add_column("GB/s", justify="right")
        t.add_column("members", overflow="fold")
        inside = {r.groups[0]: r for r in s.relations if r.groups[0] == r.groups[1]}
        for g, (label, members) in enumerate(zip(s.group_labels, s.groups)):
            r = inside.get(g)
            t.add_row(f"g{g}", str(len(members)), _num(r.alpha_us) if r else "-",
                      _num(r.bandwidth_gbps) if r else "-", escape(label))
        console.print(t)
        between = [r for r in s.relations if r.groups[0] != r.groups[1]]
        if between and len(between) <= MAX_RELATIONS_LISTED:
            t = Table(title="Between groups (medians)", title_justify="left", box=box.SIMPLE_HEAD)
            t.add_column("groups", style="bold")
            t.add_column("pairs", justify="right")
            t.add_column("alpha us", justify="right")
            t.add_column("GB/s", justify="right")
            for r in between:
                t.add_row(_relation_text(r.groups), str(r.pairs), _num(r.alpha_us), _num(r.bandwidth_gbps))
            console.print(t)
        elif between:
            a = _span([r.alpha_us for r in between])
            b = _span([r.bandwidth_gbps for r in between])
            console.print(
                f"  between groups ({len(between)} relations): alpha {_num(a[0])}..{_num(a[1])} us, "
                f"bandwidth {_num(b[0])}..{_num(b[1])} GB/s",
                highlight=False,
            )

    if s.structure is not None:
        _render_structure(s.structure, console)
    if s.capacities is not None:
        _render_capacities(s.capacities, console)

    if s.slowest_latency:
        t = Table(title="Slowest pairs by latency", title_justify="left", box=box.SIMPLE_HEAD)
        t.add_column("pair")
        t.add_column("relation")
        t.add_column("alpha us", justify="right")
        t.add_column("typical", justify="right")
        t.add_column("ratio", justify="right")
        t.add_column("jitter", justify="right")
        for r in s.slowest_latency:
            t.add_row(escape(f"{r.src} <-> {r.dst}"), escape(r.relation), _num(r.alpha_us), _num(r.typical_alpha_us),
                      _ratio(r.latency_ratio, True), _pct(r.jitter))
        console.print(t)
    if s.slowest_bandwidth:
        t = Table(title="Slowest pairs by bandwidth", title_justify="left", box=box.SIMPLE_HEAD)
        t.add_column("pair")
        t.add_column("relation")
        t.add_column("GB/s", justify="right")
        t.add_column("typical", justify="right")
        t.add_column("ratio", justify="right")
        t.add_column("alpha us", justify="right")
        for r in s.slowest_bandwidth:
            t.add_row(escape(f"{r.src} -> {r.dst}"), escape(r.relation), _num(r.bandwidth_gbps), _num(r.typical_bandwidth_gbps),
                      _ratio(r.bandwidth_ratio, False), _num(r.alpha_us))
        console.print(t)

    if s.slowest_latency or s.slowest_bandwidth:
        console.print(f"[dim]  {_TYPICAL}[/]", highlight=False)
        if s.flagged_pairs:
            console.print(
                f"  [bold]{s.flagged_pairs}[/] of {s.measured} pairs beyond {SLOW_RATIO:g}x typical; nodes in most: "
                + escape(", ".join(f"{name} {k}/{d}" for name, k, d in s.flagged_nodes[:6])),
                highlight=False,
            )
        console.print()

    if s.missing_pairs:
        console.print(f"[bold red]Missing pairs[/] ({len(s.missing_pairs)}, no answer within the timeout):")
        full = {name for name, count in s.missing_by_node if count >= 2 * (s.n_nodes - 1)}
        if full:
            console.print(f"  unreachable: {escape(compress_names(sorted(full, key=s.names.index)))}",
                          highlight=False)
        rest = [p for p in s.missing_pairs if p[0] not in full and p[1] not in full]
        if rest:
            shown = ", ".join(f"{a} -> {b}" for a, b in rest[:MAX_MISSING_LISTED])
            more = f" ... and {len(rest) - MAX_MISSING_LISTED} more" if len(rest) > MAX_MISSING_LISTED else ""
            console.print(escape(f"  {shown}{more}"), highlight=False)
        partial = [(name, c) for name, c in s.missing_by_node if name not in full][:5]
        if len(rest) > MAX_MISSING_LISTED and partial:
            console.print("  most affected: " + escape(", ".join(f"{name} ({c})" for name, c in partial)),
                          highlight=False)

    if s.intra is not None:
        i = s.intra
        line = f"Intra-node: {i.measured} node{'s' if i.measured != 1 else ''} measured"
        if i.missing:
            line += f", [bold red]{i.missing} failed[/]"
        if i.measured:
            a, b = i.alpha_us, i.bandwidth_gbps
            line += (f"; alpha {_sig(a[0])} / {_sig(a[1])} / {_sig(a[2])} us, "
                     f"bandwidth {_sig(b[0])} / {_sig(b[1])} / {_sig(b[2])} GB/s (min / median / max)")
        console.print(line, highlight=False)
        # Name the worst node only when it stands out from the others.
        odd = []
        if i.slowest_latency_node and i.alpha_us[2] > SLOW_RATIO * i.alpha_us[1]:
            odd.append(f"highest latency on {i.slowest_latency_node}")
        if i.slowest_bandwidth_node and i.bandwidth_gbps[0] * SLOW_RATIO < i.bandwidth_gbps[1]:
            odd.append(f"lowest bandwidth on {i.slowest_bandwidth_node}")
        if odd:
            console.print("  [yellow]" + escape(", ".join(odd)) + "[/]", highlight=False)

    if s.protocol is not None:
        render_protocol(s.protocol, console, _size_text)

    if s.jitter is not None:
        j = s.jitter
        console.print(f"Jitter ((max - min) / mean of round trips): median {_pct(j.median)}, "
                      f"95th percentile {_pct(j.p95)}, max {_pct(j.max)}", highlight=False)
        if j.by_size:
            console.print("  by size: " + ", ".join(f"{_size_text(a)} {_pct(b)}" for a, b in j.by_size),
                          highlight=False)
        if j.noisiest and j.max > 2 * max(j.median, 1e-12):
            console.print("  noisiest: " + escape(", ".join(f"{a} -> {b} {_pct(v)}" for a, b, v in j.noisiest[:3])),
                          highlight=False)


def _render_structure(st: Structure, console) -> None:
    from rich.markup import escape  # node names come from the model file

    console.print("[bold]Links the topology does not show[/] (each node's own part removed, docs/concepts/model.md):",
                  highlight=False)
    found = False
    if st.slow_nodes:
        found = True
        parts = []
        for r in st.slow_nodes:
            narrow = math.isfinite(r.bandwidth_ratio) and r.bandwidth_ratio * SLOW_RATIO < 1
            what = []
            # Named by its latency below the ratio too (a torus node a step beyond its neighbours).
            if math.isfinite(r.latency_ratio) and (r.latency_ratio > SLOW_RATIO or
                                                   (not narrow and r.extra_latency_us > 0)):
                what.append(f"+{r.extra_latency_us:.3g} us latency (x{r.latency_ratio:.2g})")
            if narrow:
                what.append(f"bandwidth x{r.bandwidth_ratio:.2g}")
            parts.append(f"{r.node}: {', '.join(what)} (in g{r.group})")
        console.print("  [bold red]slow node links[/]: " + escape("; ".join(parts)), highlight=False)
    if st.slow_uplinks or st.slow_blocks or st.slow_pods or st.slow_hops:
        found = True
        parts = [f"g{x}'s uplink" for x in st.slow_uplinks]
        parts += [f"the uplink of the pod of {', '.join(f'g{x}' for x in p)}" for p in st.slow_pods]
        parts += [f"the link {hop}" for hop in st.slow_hops]
        if st.slow_blocks:
            parts.append("(all pairs of) " + ", ".join(st.slow_blocks))
        console.print("  [bold red]slow shared links[/]: " + escape("; ".join(parts)), highlight=False)
    if st.classes:
        console.print(f"  distance classes (longer routes, not faults): {st.classes}", highlight=False)
    if st.variable_links:
        found = True
        k = st.variable_pairs
        pairs = f"{k} {'pairs' if k != 1 else 'pair'}"
        console.print(f"  [bold yellow]varying over time[/]: {escape('; '.join(st.variable_links))}; "
                      f"{pairs} whose jitter stands out (typical {_pct(st.typical_jitter)})", highlight=False)
    if st.variable_alone:
        shown = ", ".join(f"{a} -> {b} {_pct(v)}" for a, b, v in st.variable_alone[:5])
        more = f" ... and {len(st.variable_alone) - 5} more" if len(st.variable_alone) > 5 else ""
        k = len(st.variable_alone)
        console.print(escape(f"  note: {k} {'pairs vary' if k != 1 else 'pair varies'} with no link in common "
                             f"(contention between concurrent pairs or noise; not a fault): {shown}{more}"),
                      highlight=False)
    if not found:
        console.print("  none: no node, shared link or pair stands out", highlight=False)
    console.print()


def _pct(value: float) -> str:
    if value is None or not math.isfinite(value):
        return "-"
    return f"{100 * value:.1f}%" if value >= 0.0005 else "<0.1%"


def _sig(value: float) -> str:
    return "-" if value is None or not math.isfinite(value) else f"{value:.3g}"
