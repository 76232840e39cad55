"""What the probe found against what a generated platform hides."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rankwise.model.anomalies import Findings
from rankwise.model.model import Model
from rankwise.sim.platform import GeneratedPlatform


@dataclass
class LinkVerdict:
    link: str  # node-5, up-3
    what: str  # "bandwidth x0.25", "latency x5", "varies over time"
    found: bool
    counted: bool  # False for time-varying links: seen or not depending on when


@dataclass
class Verdict:
    links: list[LinkVerdict]
    false_nodes: list[str]  # nodes flagged whose own link is fine
    false_blocks: list[str]  # group pairs flagged that share no altered uplink

    @property
    def ok(self) -> bool:
        return all(v.found for v in self.links if v.counted) and not self.false_nodes and not self.false_blocks


def describe_link(link) -> str:
    parts = []
    if link.bandwidth != link.nominal_bandwidth:
        parts.append(f"bandwidth x{link.bandwidth / link.nominal_bandwidth:.2g}")
    if link.latency != link.nominal_latency:
        parts.append(f"latency x{link.latency / link.nominal_latency:.2g}")
    if "varying" in link.reasons:
        parts.append("varies over time")
    return ", ".join(parts) or ", ".join(link.reasons)


def judge(gen: GeneratedPlatform, model: Model, findings: Findings) -> Verdict:
    """Match flagged nodes and group pairs with the platform's altered links.

    A node link is found when its node is flagged; a rack uplink when a slow
    block involves the group holding (most of) that rack's nodes. On a torus or
    dragonfly (no racks behind uplinks), a router link when a pair whose route
    crosses it is flagged."""
    index = {name: gen.nodes.index(name) for name in model.names if name in gen.nodes}
    node_of_model = np.array([index.get(name, -1) for name in model.names])
    if gen.spec.shape is not None:
        return _judge_routed(gen, model, findings, index, node_of_model)
    rack = gen.rack_of_node[node_of_model]
    group_of_rack = {}
    for r in np.unique(rack):
        groups, counts = np.unique(findings.groups[rack == r], return_counts=True)
        group_of_rack[int(r)] = int(groups[np.argmax(counts)])
    slow_nodes = {int(node_of_model[i]) for i in findings.slow_nodes}
    slow_groups = {g for block in findings.slow_blocks for g in block}

    verdicts, bad_nodes, bad_racks = [], set(), set()
    for link in gen.altered_links:
        counted = "varying" not in link.reasons
        if link.kind == "node":
            if link.index not in index.values():
                continue  # not part of this probe
            found = link.index in slow_nodes
            bad_nodes.add(link.index)
        else:
            found = group_of_rack.get(link.index) in slow_groups
            bad_racks.add(link.index)
        verdicts.append(LinkVerdict(link.name, describe_link(link), found, counted))

    false_nodes = [gen.nodes[i] for i in sorted(slow_nodes - bad_nodes)]
    bad_groups = {group_of_rack[r] for r in bad_racks if r in group_of_rack}
    false_blocks = [f"g{a}-g{b}" for a, b in findings.slow_blocks if not ({a, b} & bad_groups)]
    return Verdict(verdicts, false_nodes, false_blocks)


def _judge_routed(gen: GeneratedPlatform, model: Model, findings: Findings, index: dict[str, int],
                  node_of_model: np.ndarray) -> Verdict:
    """judge() on a torus or dragonfly: router links are matched through the routes crossing them."""
    from rankwise.sim.platform import route

    probed = {int(v): k for k, v in enumerate(node_of_model) if v >= 0}
    crossing: dict[int, set[tuple[int, int]]] = {}
    for i, mi in probed.items():
        for j, mj in probed.items():
            if i != j:
                for k in route(gen.spec, i, j):
                    crossing.setdefault(k, set()).add((mi, mj))
    flagged = findings.flagged()
    slow_nodes = {int(node_of_model[i]) for i in findings.slow_nodes}
    verdicts, bad_nodes, explained = [], set(), set()
    for k, link in enumerate(gen.links):
        if not link.reasons:
            continue
        counted = "varying" not in link.reasons
        if link.kind == "node":
            if link.index not in probed:
                continue
            found = link.index in slow_nodes
            bad_nodes.add(link.index)
        else:
            pairs = crossing.get(k, set())
            if not pairs:
                continue  # no probed route crosses it
            found = bool(pairs & flagged)
        explained |= crossing.get(k, set())
        if any(v.link == link.name for v in verdicts):
            continue  # another NIC of the same node
        verdicts.append(LinkVerdict(link.name, describe_link(link), found, counted))
    false_nodes = [gen.nodes[i] for i in sorted(slow_nodes - bad_nodes)]
    groups = findings.groups
    false_blocks = [f"g{a}-g{b}" for a, b in findings.slow_blocks
                    if not any(groups[i] == a and groups[j] == b for i, j in explained)]
    return Verdict(verdicts, false_nodes, false_blocks)
