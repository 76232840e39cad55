"""What the probe found against what a generated platform hides."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rankwise.anomalies import Findings
from rankwise.model import Model
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
    block involves the group holding (most of) that rack's nodes."""
    index = {name: gen.nodes.index(name) for name in model.names if name in gen.nodes}
    node_of_model = np.array([index.get(name, -1) for name in model.names])
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
