"""How faithful a model is to the platform it was measured on: the fidelity score (issue 21).

Ground truth only scores; the model is whatever a probe measured. Figures:
- lone-pair latency and bandwidth: the model's alpha and bandwidth per ordered pair against the
  route's (alpha_ij + alpha_ji) / 2 and bottleneck at time 0, pairs whose route holds a
  varying link left out (their bandwidth of the moment is not the time-0 one);
- NIC caps (the stress test's inject/eject) against each node's link, varying NICs left out;
- duplex caps: on a platform whose node links are SHARED (both directions one rate) each node's
  `duplex` figure against its link (a node without one counts as infinitely wrong); on the others
  (SPLITDUPLEX) every `duplex` figure is spurious;
- shared-link capacities (fat trees: `up-G`/`down-G` links) against the leaf uplink of the rack
  most of group G's nodes are in, for the uplinks that limit their rack (below 90 % of what
  its nodes send at once), and links the model carries where no uplink limits (not scored on
  a torus or dragonfly: their router links have no rack to name a group by; on a three-level
  tree the `path-*` and `core` links a pod uplink may give are not scored);
- pod capacities (three-level trees: `pod-up-P`/`pod-down-P` links) against the pod uplink whose
  nodes' groups the link's group list holds, for the pod uplinks that limit their pod (below 90 % of
  what its racks carry out of it at once), and pod links where no pod uplink limits;
- groups against racks: adjusted Rand index (Hubert and Arabie 1985), where racks have more
  than one node (a torus has none);
- faults: what the model names (Claims: a slow or varying NIC, a slow or varying shared link
  given as the node pairs that cross it, varying pairs left unexplained) against
  sim/faults.py's Faults. A fault is named right when a claim of the same kind (what, where) lies
  on it: the NIC's node, or a shared claim at least half of whose pairs cross the link (and, for a
  pod uplink, that holds more than half of the pairs crossing it: a claim on one of its racks lies on
  the pod's link, is not false, but does not name it). A slow
  shared fault not named but whose healthy nodes are named as slow NICs is "as nodes" (the probe
  took an uplink for its rack's NICs). Every claim that lies on no fault of its kind is a false
  positive; unexplained varying pairs count as one (the model reports them as one line), unless
  most of them cross a varying link.

`claims_from_findings` reads the claims of rankwise.model.anomalies.find_slow_links; `score` is the
rest and takes groups and claims as given, so that a model built from the ground truth scores
perfectly and a wrong one does not (tests/python/sim/test_model_fidelity.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from rankwise.model.anomalies import Findings
from rankwise.model.model import MEASURED, Model
from rankwise.sim.faults import NIC, SHARED, SLOW, VARYING, Fault, crossing_pairs
from rankwise.sim.platform import GeneratedPlatform
from rankwise.sim.synthetic import adjusted_rand_index

__all__ = ["Claim", "Score", "claims_from_findings", "claims_from_faults", "score", "ari"]

PAIRS = "pairs"  # where of the claim "these pairs vary, no link explains them"
CAP_TOLERANCE = 0.10  # a capacity within 10 % counts as found
LIMITS = 0.9  # an uplink limits its rack below 90 % of what its nodes send at once
ON_LINK = 0.5  # a shared claim lies on a link when half of its pairs cross it


@dataclass(eq=False)
class Claim:
    """One thing the model says is wrong with the network."""

    what: str  # "slow" or "varying"
    where: str  # "nic", "shared" or "pairs"
    node: int = -1  # a NIC claim's node
    pairs: np.ndarray | None = None  # n x n: the pairs a shared (or pairs) claim is about
    label: str = ""


@dataclass
class Score:
    lat_err: np.ndarray  # |alpha / truth - 1| per scored pair
    bw_err: np.ndarray  # |bandwidth / truth - 1| per scored pair
    bw_bias: float  # median of bandwidth / truth - 1 (< 0: the model's pairs are slower than alone)
    ari: float  # NaN where racks are single nodes
    nic_err: np.ndarray  # |cap / link - 1| per scored cap (inject and eject), empty without caps
    cap_err: np.ndarray  # per limiting uplink found: worst of |up / link - 1|, |down / link - 1|
    cap_limiting: int  # uplinks that limit their rack (fat trees)
    cap_spurious: list[str]  # model links where no uplink limits
    cap_varying: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))  # per cap_err: its load varies
    pod_err: np.ndarray = field(default_factory=lambda: np.zeros(0))  # per limiting pod uplink, as cap_err
    pod_limiting: int = 0  # pod uplinks that limit their pod (three-level trees)
    pod_spurious: list[str] = field(default_factory=list)  # model pod links where no pod uplink limits
    right: list[Fault] = field(default_factory=list)
    as_nodes: list[Fault] = field(default_factory=list)
    missed: list[Fault] = field(default_factory=list)
    false: list[Claim] = field(default_factory=list)  # the claims that lie on no fault
    stray_pairs: int = 0  # varying pairs no link explains
    unscored: list[Fault] = field(default_factory=list)  # varying faults no lone pair can see
    duplex_err: np.ndarray = field(default_factory=lambda: np.zeros(0))  # shared node links: |duplex / link - 1|
    duplex_spurious: int = 0  # duplex figures of nodes whose link carries each direction apart
    hop_err: np.ndarray = field(default_factory=lambda: np.zeros(0))  # torus links: |hop / link - 1|, inf: no hop
    hop_spurious: int = 0  # model hops between nodes no link joins

    @property
    def expected(self) -> int:
        return len(self.right) + len(self.as_nodes) + len(self.missed)

    @property
    def caps_found(self) -> int:
        return int((self.cap_err <= CAP_TOLERANCE).sum())

    @property
    def nics_found(self) -> int:
        return int((self.nic_err <= CAP_TOLERANCE).sum())


def ari(groups: np.ndarray, racks: np.ndarray) -> float:
    """Adjusted Rand index of groups against racks; NaN when every rack is one node."""
    if len(np.unique(racks)) == len(racks):
        return float("nan")
    return float(adjusted_rand_index(groups, racks))


# --- claims ---------------------------------------------------------------------------------


def claims_from_findings(f: Findings) -> list[Claim]:
    """What find_slow_links names: slow and varying NICs, slow uplinks of groups and of pods, the other slow
    relations between groups (one claim per unordered pair of groups, as `rankwise show` prints
    them), varying uplinks and blocks, and the varying pairs left alone."""
    g = np.asarray(f.groups)
    out = [Claim(SLOW, NIC, node=int(i), label=f"slow nic {i}") for i in f.slow_nodes]
    uplinks = set(f.slow_uplinks)
    for x in sorted(uplinks):
        out.append(Claim(SLOW, SHARED, pairs=(g[:, None] == x) ^ (g[None, :] == x), label=f"slow up g{x}"))
    for a, b in dict.fromkeys(tuple(sorted(x)) for x in f.slow_blocks):
        if not {a, b} & uplinks:
            out.append(Claim(SLOW, SHARED, pairs=_between(g, a, b), label=f"slow g{a}-g{b}"))
    for u, v in f.slow_links:
        out.append(Claim(SLOW, SHARED, pairs=_hop(len(g), u, v), label=f"slow link {u}-{v}"))
    for pod in f.slow_pods:
        inside = np.isin(g, pod)
        out.append(Claim(SLOW, SHARED, pairs=inside[:, None] ^ inside[None, :],
                         label=f"slow pod g{','.join(map(str, pod))}"))
    out += [Claim(VARYING, NIC, node=int(i), label=f"varying nic {i}") for i in f.noisy_nodes]
    for x in f.noisy_groups:
        out.append(Claim(VARYING, SHARED, pairs=(g[:, None] == x) ^ (g[None, :] == x), label=f"varying up g{x}"))
    for a, b in f.noisy_blocks:
        out.append(Claim(VARYING, SHARED, pairs=_between(g, a, b), label=f"varying g{a}-g{b}"))
    for u, v in f.noisy_links:
        out.append(Claim(VARYING, SHARED, pairs=_hop(len(g), u, v), label=f"varying link {u}-{v}"))
    alone = [p for p in f.noisy_pairs if p.scope == "pair"]
    if alone:
        mask = np.zeros((len(g), len(g)), dtype=bool)
        for p in alone:
            mask[p.src, p.dst] = True
        out.append(Claim(VARYING, PAIRS, pairs=mask, label=f"{len(alone)} varying pairs alone"))
    return out


def claims_from_faults(gp: GeneratedPlatform, faults: list[Fault], on: np.ndarray | None = None) -> list[Claim]:
    """The claims a perfect model would make: every fault at its element."""
    on = crossing_pairs(gp) if on is None else on
    k_of = {link.name: k for k, link in enumerate(gp.links)}
    out = []
    for f in faults:
        if f.where == NIC:
            out.append(Claim(f.what, NIC, node=f.index, label=f.label))
        else:
            out.append(Claim(f.what, SHARED, pairs=on[k_of[f.link]], label=f.label))
    return out


def _hop(n: int, u: int, v: int) -> np.ndarray:
    """The pairs of the link between nodes u and v: both directions."""
    m = np.zeros((n, n), dtype=bool)
    m[u, v] = m[v, u] = True
    return m


def _between(g: np.ndarray, a: int, b: int) -> np.ndarray:
    ga, gb = g == a, g == b
    m = (ga[:, None] & gb[None, :]) | (gb[:, None] & ga[None, :])
    np.fill_diagonal(m, False)
    return m


# --- the score ------------------------------------------------------------------------------


def score(gp: GeneratedPlatform, faults: list[Fault], model: Model, groups: np.ndarray,
          claims: list[Claim], on: np.ndarray | None = None) -> Score:
    """Score model (its nodes in the platform's order), its groups and its claims against gp."""
    if list(model.names) != list(gp.nodes):
        raise ValueError("the model's nodes are not the platform's, in its order")
    on = crossing_pairs(gp) if on is None else on
    lat_err, bw_err, bw_bias = _pair_errors(gp, model, on)
    nic_err = _nic_errors(gp, model)
    duplex_err, duplex_spurious = _duplex_errors(gp, model)
    cap_err, cap_varying, limiting, spurious = _capacities(gp, model)
    pod_err, pod_limiting, pod_spurious = _pod_capacities(gp, model)
    hop_err, hop_spurious = _hop_capacities(gp, model, on)
    s = Score(lat_err=lat_err, bw_err=bw_err, bw_bias=bw_bias, ari=ari(groups, gp.rack_of_node), nic_err=nic_err,
              cap_err=cap_err, cap_varying=cap_varying, cap_limiting=limiting, cap_spurious=spurious, pod_err=pod_err,
              pod_limiting=pod_limiting, pod_spurious=pod_spurious, duplex_err=duplex_err,
              duplex_spurious=duplex_spurious, hop_err=hop_err, hop_spurious=hop_spurious)
    _match(gp, faults, claims, on, s)
    return s


def _pair_errors(gp: GeneratedPlatform, model: Model, on: np.ndarray):
    varying = np.array(["varying" in link.reasons for link in gp.links])
    through_varying = on[varying].any(axis=0) if varying.any() else np.zeros_like(on[0])
    ok = (model.state == MEASURED) & ~np.eye(model.n_nodes, dtype=bool) & ~through_varying
    truth_alpha = (gp.alpha + gp.alpha.T) / 2
    with np.errstate(divide="ignore", invalid="ignore"):
        lat = np.abs(model.alpha[ok] / truth_alpha[ok] - 1)
        bw = model.bandwidth[ok] / gp.bandwidth[ok] - 1
    bw = bw[np.isfinite(bw)]
    return lat[np.isfinite(lat)], np.abs(bw), float(np.median(bw)) if bw.size else float("nan")


def _nic_errors(gp: GeneratedPlatform, model: Model) -> np.ndarray:
    out = []
    seen = set()
    for link in gp.links:
        if link.kind != "node" or "varying" in link.reasons or link.index in seen:
            continue
        seen.add(link.index)
        for cap in (model.inject[link.index], model.eject[link.index]):
            if np.isfinite(cap):
                out.append(abs(cap / link.bandwidth - 1))
    return np.array(out)


def _duplex_errors(gp: GeneratedPlatform, model: Model) -> tuple[np.ndarray, int]:
    dx = np.asarray(model.duplex, dtype=float)
    if not gp.spec.shared_nics:
        return np.zeros(0), int(np.isfinite(dx).sum())
    out = [abs(dx[link.index] / link.bandwidth - 1) if np.isfinite(dx[link.index]) else float("inf")
           for link in gp.links if link.kind == "node" and "varying" not in link.reasons]
    return np.array(out), 0


def _capacities(gp: GeneratedPlatform, model: Model):
    """Fat trees: per limiting uplink the worse of its up and down links' errors (inf when the model
    has not both) against its configured (peak) bandwidth and whether its load varies, and the
    model's links that stand for no limiting uplink."""
    three = gp.spec.topology.startswith("fat-tree3:")
    if gp.spec.shape is not None and not three:  # router links have no rack behind them to name a group by
        return np.zeros(0), np.zeros(0, bool), 0, []
    links = {link.name: link.capacity for link in model.links if not link.name.startswith("pod-")}
    if three:  # a pod uplink may show as path-A-B or core links: those are not scored
        links = {name: c for name, c in links.items() if name.startswith(("up-", "down-"))}
    node_bw = {link.index: link.bandwidth for link in gp.links if link.kind == "node"}
    groups = np.asarray(model.group_of)
    errors, used, varying = [], set(), []
    limiting = 0
    for link in gp.links:
        if link.kind != "uplink":
            continue
        members = np.flatnonzero(gp.rack_of_node == link.index)
        if link.bandwidth_min >= LIMITS * sum(node_bw[i] for i in members):
            continue
        limiting += 1
        varying.append("varying" in link.reasons)
        g = groups[members]
        g = g[g >= 0]
        if not g.size:
            errors.append(np.inf)
            continue
        major = int(np.bincount(g).argmax())
        names = (f"up-{major}", f"down-{major}")
        used.update(names)
        found = [links.get(name) for name in names]
        errors.append(max(abs(c / link.bandwidth - 1) if c else np.inf for c in found))
    return np.array(errors), np.array(varying, dtype=bool), limiting, sorted(set(links) - used)


def _pod_capacities(gp: GeneratedPlatform, model: Model):
    """Three-level trees: per limiting pod uplink the worse of its `pod-up`/`pod-down` links' errors
    (inf when the model has not both: links whose group list is the pod's nodes' groups), and the
    model's pod links that stand for no limiting pod uplink."""
    pods = {link.name: link for link in model.links if link.name.startswith("pod-")}
    if not gp.spec.topology.startswith("fat-tree3:"):
        return np.zeros(0), 0, sorted(pods)
    node_bw = {link.index: link.bandwidth_min for link in gp.links if link.kind == "node"}
    rack_bw = {link.index: link.bandwidth_min for link in gp.links if link.kind == "uplink"}
    groups = np.asarray(model.group_of)
    errors, used, limiting = [], set(), 0
    for link in gp.links:
        if link.kind != "pod":
            continue
        members = np.asarray(gp.spec.shape.behind("pod", link.index))
        racks = set(gp.rack_of_node[members].tolist())
        sends = sum(min(rack_bw[r], sum(node_bw[i] for i in members if gp.rack_of_node[i] == r)) for r in racks)
        if link.bandwidth_min >= LIMITS * sends:
            continue
        limiting += 1
        mine = set(groups[members].tolist()) - {-1}
        found = []
        for side, attr in (("up", "from_groups"), ("down", "to_groups")):
            match = [name for name, p in pods.items() if name.startswith(f"pod-{side}-")
                     and getattr(p, attr) is not None and set(getattr(p, attr)) == mine]
            used.update(match)
            found.append(pods[match[0]].capacity if match else None)
        errors.append(max(abs(c / link.bandwidth - 1) if c else np.inf for c in found))
    return np.array(errors), limiting, sorted(set(pods) - used)


def _hop_capacities(gp: GeneratedPlatform, model: Model, on: np.ndarray) -> tuple[np.ndarray, int]:
    """Tori: per neighbour pair and direction whose route's links hold steady, the model's hop
    against the narrowest of them (inf where the model has no hop); and the model's hops between
    nodes that are no neighbours (their route crosses more than one link between routers)."""
    if not gp.spec.topology.startswith("torus:"):
        return np.zeros(0), len(model.hops)
    between = np.array([link.kind not in ("node", "loopback") for link in gp.links])
    varying = np.array(["varying" in link.reasons for link in gp.links])
    rate = np.array([link.bandwidth for link in gp.links])
    hops = {(h.src, h.dst): h.capacity for h in model.hops}
    n = model.n_nodes
    errors, spurious = [], 0
    for u in range(n):
        for v in range(n):
            if u == v:
                continue
            links = np.flatnonzero(on[:, u, v] & between)
            if links.size != 1:  # not neighbours
                spurious += (u, v) in hops
                continue
            if varying[links].any():
                continue
            cap = hops.get((u, v))
            errors.append(abs(cap / rate[links].min() - 1) if cap else np.inf)
    return np.array(errors), spurious


def _lies_on(claim: Claim, fault: Fault, on: np.ndarray, k_of: dict[str, int]) -> bool:
    if claim.what != fault.what or claim.where != fault.where:
        return False
    if fault.where == NIC:
        return claim.node == fault.index
    pairs = claim.pairs
    return bool(pairs.any()) and on[k_of[fault.link]][pairs].mean() >= ON_LINK


def _names(claim: Claim, fault: Fault, on: np.ndarray, k_of: dict[str, int]) -> bool:
    """A claim names a fault when it lies on it; a pod uplink's, when it also holds more than half of
    the pairs crossing it (a claim on one rack or one pair of groups lies on it, it names a smaller
    element: one rack of a pod of two holds half)."""
    if not _lies_on(claim, fault, on, k_of):
        return False
    return fault.kind != "pod" or bool(claim.pairs[on[k_of[fault.link]]].mean() > ON_LINK)


def _match(gp: GeneratedPlatform, faults: list[Fault], claims: list[Claim], on: np.ndarray, s: Score) -> None:
    k_of = {link.name: k for k, link in enumerate(gp.links)}
    used = set()
    slow_nic_claims = {c.node for c in claims if c.what == SLOW and c.where == NIC}
    for f in faults:
        if f.what == VARYING and not f.lone_pair:
            s.unscored.append(f)
            continue
        hits = [k for k, c in enumerate(claims) if _names(c, f, on, k_of)]
        used.update(k for k, c in enumerate(claims) if _lies_on(c, f, on, k_of))  # on it: not false
        if hits:
            s.right.append(f)
        elif f.what == SLOW and f.where == SHARED and slow_nic_claims & set(f.nodes):
            s.as_nodes.append(f)
        else:
            s.missed.append(f)
    varying_on = np.zeros_like(on[0])
    for f in faults:
        if f.what == VARYING:
            varying_on |= on[k_of[f.link]]
    for k, c in enumerate(claims):
        if k in used:
            continue
        if c.where == PAIRS:
            s.stray_pairs = int(c.pairs.sum())
            if varying_on[c.pairs].mean() >= ON_LINK:
                continue  # on the varying link, not localised: not named, not false either
        # A claim on a fault no lone pair can see is not false (the concurrent probe may see it).
        if any(_lies_on(c, f, on, k_of) for f in s.unscored):
            continue
        s.false.append(c)
