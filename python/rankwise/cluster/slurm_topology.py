"""A Slurm topology.conf (topology/tree plugin) from what a model measured,
and the nodes a scheduler should avoid.

Leaf switches are the model's groups of close nodes (its `group` lines when
every node has one, else the engine's grouping of the latencies): the
switch the job scheduler should keep a job under. Above them, groups whose
latencies to each other are clearly lower than to the rest (a gap of
GAP x between the sorted group-to-group latencies) share a switch, level
by level; one root joins the top level, so the tree is fully connected as
`TopologyParam=RouteTree` needs. The syntax is topology.conf(5)'s:
`SwitchName=NAME Nodes=HOSTLIST` for a leaf, `SwitchName=NAME
Switches=HOSTLIST` above (docs/concepts/live.md)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from rankwise.cluster.hostlist import check_name, compress
from rankwise.model.model import MEASURED, MISSING, Model

GAP = 1.3  # between-group latencies this much apart split a level
NIC_SHARE = 0.5  # a NIC carrying less than half the median node's is slow


@dataclass
class Switch:
    name: str
    nodes: list[str] = field(default_factory=list)  # a leaf's nodes
    switches: list[str] = field(default_factory=list)  # an upper switch's children
    note: str = ""


@dataclass
class Avoid:
    name: str
    why: str


def _groups(model: Model) -> np.ndarray:
    g = np.asarray(model.group_of)
    return g.astype(int) if g.size and (g >= 0).all() else model.groups().astype(int)


def _block_latency(model: Model, g: np.ndarray, k: int) -> np.ndarray:
    """k x k median one-way latency between groups (symmetrised), NaN unknown."""
    measured = (model.state == MEASURED) & ~np.eye(model.n_nodes, dtype=bool)
    out = np.full((k, k), np.nan)
    for a in range(k):
        for b in range(k):
            mask = measured & (g[:, None] == a) & (g[None, :] == b) | measured & (g[:, None] == b) & (g[None, :] == a)
            if mask.any():
                out[a, b] = np.median(model.alpha[mask])
    return out


def _merge_level(latency: np.ndarray) -> list[list[int]] | None:
    """Clusters of the items joined by latencies below the largest gap; None
    when there is no clear gap, or it would join all or none."""
    k = latency.shape[0]
    values = np.unique(latency[~np.eye(k, dtype=bool) & np.isfinite(latency)])
    if k < 3 or values.size < 2:
        return None
    ratios = values[1:] / np.maximum(values[:-1], 1e-300)
    cut = int(np.argmax(ratios))
    if ratios[cut] < GAP:
        return None
    close = latency <= values[cut]
    parent = list(range(k))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in zip(*np.nonzero(close & ~np.eye(k, dtype=bool))):
        parent[find(int(a))] = find(int(b))
    clusters: dict[int, list[int]] = {}
    for a in range(k):
        clusters.setdefault(find(a), []).append(a)
    out = sorted(clusters.values())
    return out if 1 < len(out) < k else None


def build_switches(model: Model) -> list[Switch]:
    """Leaf switches (the groups), the levels above them, and one root."""
    for name in model.names:
        check_name(name)
    g = _groups(model)
    k = int(g.max()) + 1 if g.size else 0
    leaves = [Switch(f"rw-g{a}", nodes=[model.names[i] for i in np.flatnonzero(g == a)]) for a in range(k)]
    leaves = [s for s in leaves if s.nodes]
    for s in leaves:
        s.note = f"group {s.name[4:]}: {len(s.nodes)} nodes"
    switches = list(leaves)
    level, items, latency = 1, [s.name for s in leaves], _block_latency(model, g, k)
    latency = latency[np.ix_([int(s.name[4:]) for s in leaves], [int(s.name[4:]) for s in leaves])]
    while len(items) > 1:
        clusters = _merge_level(latency)
        if clusters is None:
            break
        upper = [Switch(f"rw-l{level}-{c}", switches=[items[i] for i in members],
                        note=f"level {level}: groups closer to each other than to the rest")
                 for c, members in enumerate(clusters)]
        switches += upper
        merged = np.full((len(clusters), len(clusters)), np.nan)
        for x, cx in enumerate(clusters):
            for y, cy in enumerate(clusters):
                block = latency[np.ix_(cx, cy)]
                merged[x, y] = np.nanmedian(block) if np.isfinite(block).any() else np.nan
        items, latency, level = [s.name for s in upper], merged, level + 1
    if len(items) > 1:
        switches.append(Switch("rw-root", switches=items, note="joins every group: a fully connected tree"))
    return switches


def nodes_to_avoid(model: Model) -> list[Avoid]:
    """Nodes whose own link is slow (rankwise.model.anomalies), whose NIC carries
    less than NIC_SHARE of the median node's, or that stopped answering."""
    from rankwise.model.anomalies import find_slow_links

    out: dict[str, list[str]] = {}
    n = model.n_nodes
    measured = (model.state == MEASURED) & ~np.eye(n, dtype=bool)
    if measured.any() and n >= 3:
        f = find_slow_links(model)
        for i in f.slow_nodes:
            why = []
            if f.node_bandwidth_ratio.size and np.isfinite(f.node_bandwidth_ratio[i]) and f.node_bandwidth_ratio[i] < 0.95:
                why.append(f"bandwidth x{f.node_bandwidth_ratio[i]:.2f} of its groups'")
            if f.node_latency_ratio.size and np.isfinite(f.node_latency_ratio[i]) and f.node_latency_ratio[i] > 1.05:
                why.append(f"latency x{f.node_latency_ratio[i]:.2f}")
            out.setdefault(model.names[i], []).append("slow link: " + (", ".join(why) or "slower than its group"))
    for attr, what in (("inject", "sends"), ("eject", "receives")):
        v = np.asarray(getattr(model, attr), float)
        ok = np.isfinite(v) & (v > 0)
        if ok.sum() >= 3:
            typical = np.median(v[ok])
            for i in np.flatnonzero(ok & (v < NIC_SHARE * typical)):
                out.setdefault(model.names[i], []).append(f"NIC {what} {v[i] / 1e9:.3g} GB/s to several peers, "
                                                          f"median node {typical / 1e9:.3g}")
    missing = (model.state == MISSING) & ~np.eye(n, dtype=bool)
    for i in range(n):
        if n > 1 and missing[i].sum() == n - 1:
            out.setdefault(model.names[i], []).append("did not answer the probe")
    return [Avoid(name, "; ".join(out[name])) for name in model.names if name in out]


def topology_conf(model: Model, switches: list[Switch], source: str) -> str:
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(model.created)) if np.isfinite(model.created) else "unknown"
    lines = [
        f"# topology.conf written by rankwise from {source} (measured {when})",
        "# topology/tree plugin: leaf switches are the groups of nodes the measurements found;",
        "# see topology.conf(5) and rankwise docs/concepts/live.md",
    ]
    for s in switches:
        children = f"Nodes={compress(s.nodes)}" if s.nodes else f"Switches={compress(s.switches)}"
        lines.append(f"SwitchName={s.name} {children}" + (f"  # {s.note}" if s.note else ""))
    return "\n".join(lines) + "\n"


def avoid_text(avoid: list[Avoid], source: str) -> str:
    lines = [f"# nodes to avoid, from {source}: one per line, then why",
             "# hostlist: " + (compress([a.name for a in avoid]) if avoid else "(none)")]
    lines += [f"{a.name}\t# {a.why}" for a in avoid]
    return "\n".join(lines) + "\n"
