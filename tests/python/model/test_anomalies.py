"""The model knows its structure (Cui et al. 2020 §4): groups of close nodes
that match the racks although racks are dealt to hosts in shuffled order and
up to 10 % of the nodes have a degraded NIC; every degraded node named, no
false alarm, with one or two ranks per node; links whose bandwidth varies
over time found and explained by the shared link that carries them."""

from __future__ import annotations

import numpy as np
import pytest

from rankwise.model.anomalies import capacity_spreads, find_slow_links, pair_variation
from rankwise.model.model import MEASURED, Link, Model, Spread
from rankwise.measure.probe import ProbeOptions, probe_sim
from rankwise.sim.platform import Degraded, PlatformSpec, Varying, generate
from rankwise.sim.synthetic import adjusted_rand_index, synthetic_model

SLOW_NIC = dict(bw_factor=1 / 8, lat_factor=20.0)  # the NIC of the measurements


def shuffled(racks: int, per_rack: int, seed: int, degraded_share: float = 0.1, **kw) -> PlatformSpec:
    """Racks dealt in shuffled order, a random tenth of the nodes degraded."""
    n = racks * per_rack
    rng = np.random.default_rng([seed, 2])
    slow = rng.choice(n, int(round(degraded_share * n)), replace=False)
    return PlatformSpec(racks=racks, nodes_per_rack=per_rack, cores=2, shuffle_racks=True, seed=seed,
                        degraded=[Degraded("node", int(i), **SLOW_NIC) for i in slow], **kw)


def degraded_nodes(spec: PlatformSpec) -> list[int]:
    return sorted(d.index for d in spec.degraded if d.kind == "node")


def racks_of(spec: PlatformSpec, model: Model) -> np.ndarray:
    return spec.rack_of_node[: model.n_nodes]


# --------------------------------------------------------------- the helper


def test_adjusted_rand_index():
    assert adjusted_rand_index([0, 0, 1, 1, 2], [5, 5, 3, 3, 9]) == 1.0  # same partition, other labels
    # Hand computed: contingency [[2, 1], [0, 2]]; sum C(n_ij, 2) = 2, rows 3 + 1, columns 1 + 3,
    # expected 4 * 4 / 10 = 1.6, max 4: (2 - 1.6) / (4 - 1.6) = 1/6.
    assert adjusted_rand_index([0, 0, 0, 1, 1], [0, 0, 1, 1, 1]) == pytest.approx(1 / 6)
    assert adjusted_rand_index([0, 1, 2, 3], [0, 0, 0, 0]) == 0.0  # all apart vs all together
    rng = np.random.default_rng(0)
    assert abs(adjusted_rand_index(rng.integers(0, 6, 500), rng.integers(0, 6, 500))) < 0.05


def test_cells_without_pairs_take_the_median_of_their_kind():
    """Groups of one node have no pair inside: their cell takes the median inside the other groups;
    a cell across without pairs takes the median into the same destination group, else across."""
    from rankwise.model.anomalies import _fill_missing

    nan = np.nan
    block = np.array([[1.0, 5.0, nan, nan],
                      [7.0, nan, nan, 9.0],
                      [8.0, 6.0, 3.0, nan],
                      [nan, nan, nan, nan]])
    filled = _fill_missing(block)
    assert filled[1, 1] == filled[3, 3] == 2.0  # inside: median of 1 and 3
    assert filled[3, 0] == 7.5 and filled[3, 1] == 5.5 and filled[0, 3] == filled[2, 3] == 9.0  # into the same group
    assert filled[0, 2] == filled[1, 2] == filled[3, 2] == 7.0  # nothing into group 2: across
    assert np.array_equal(filled[np.isfinite(block)], block[np.isfinite(block)])


def test_synthetic_model_follows_its_platform():
    spec = shuffled(4, 6, seed=1)
    model = synthetic_model(spec, noise=0, slow_noise=0)
    rack = racks_of(spec, model)
    slow = degraded_nodes(spec)
    healthy = [i for i in range(24) if i not in slow]
    a, b = healthy[0], next(j for j in healthy[1:] if rack[j] == rack[healthy[0]])
    c = next(j for j in healthy if rack[j] != rack[a])
    assert model.alpha[a, b] == pytest.approx(2 * spec.node_lat)
    assert model.alpha[a, c] == pytest.approx(2 * spec.node_lat + 2 * spec.uplink_lat)
    assert model.bandwidth[slow[0], a] == pytest.approx(spec.node_bw / 8)


# -------------------------------------------------- groups and slow nodes


SHAPES = [(6, 8), (8, 6), (4, 12), (2, 16), (3, 16), (12, 8), (16, 6)]


@pytest.mark.parametrize("ranks_per_node", [1, 2])
@pytest.mark.parametrize("racks,per_rack", SHAPES)
def test_groups_match_shuffled_racks_and_every_degraded_node_is_named(racks, per_rack, ranks_per_node):
    for seed in range(4):
        spec = shuffled(racks, per_rack, seed)
        model = synthetic_model(spec, ranks_per_node=ranks_per_node, seed=seed)
        f = find_slow_links(model)
        ari = adjusted_rand_index(f.groups, racks_of(spec, model))
        assert ari >= 0.95, (seed, ari)
        assert f.slow_nodes == degraded_nodes(spec), seed
        assert f.slow_blocks == [], seed
        assert {p.scope for p in f.slow_pairs} <= {"node"}, seed


@pytest.mark.parametrize("factors", [dict(lat_factor=20.0), dict(bw_factor=1 / 8), dict(lat_factor=3.0)])
def test_latency_or_bandwidth_alone_flags_the_node(factors):
    spec = PlatformSpec(racks=6, nodes_per_rack=8, shuffle_racks=True, seed=4,
                        degraded=[Degraded("node", 7, **factors), Degraded("node", 30, **factors)])
    for rpn in (1, 2):
        model = synthetic_model(spec, ranks_per_node=rpn, seed=rpn)
        f = find_slow_links(model)
        assert adjusted_rand_index(f.groups, racks_of(spec, model)) == 1.0
        assert f.slow_nodes == [7, 30]
        if "lat_factor" in factors:  # the fitted term is the NIC's extra latency on both directions' mean
            extra = spec.node_lat * (factors["lat_factor"] - 1)
            assert f.node_latency[[7, 30]] == pytest.approx([extra, extra], rel=0.15)


def test_two_degraded_nodes_on_a_48_node_subset_do_not_merge_racks():
    """The issue's case: 2 ranks per node, a 48-node subset of 96 shuffled nodes."""
    spec = shuffled(12, 8, seed=3, degraded_share=0)
    rack = spec.rack_of_node
    two = [int(np.flatnonzero(rack[:48] == r)[0]) for r in (rack[0], rack[1] if rack[1] != rack[0] else rack[2])]
    spec = PlatformSpec(**{**spec.to_dict(), "degraded": [Degraded("node", i, **SLOW_NIC) for i in two]})
    model = synthetic_model(spec, ranks_per_node=2, nodes=48, seed=3)
    f = find_slow_links(model)
    assert adjusted_rand_index(f.groups, rack[:48]) >= 0.95
    assert f.slow_nodes == sorted(two)


def test_uniform_network_is_one_group_without_findings():
    model = synthetic_model(PlatformSpec(racks=1, nodes_per_rack=24), seed=2)
    f = find_slow_links(model)
    assert (f.groups == 0).all()
    assert f.slow_nodes == [] and f.slow_blocks == [] and f.noisy_pairs == []


# ----------------------------------------------------------- variable links


def limited_by_varying_link(spec: PlatformSpec, tmp_path) -> set[tuple[int, int]]:
    """Pairs whose route, at the varying link's lowest, is limited by it."""
    gen = generate(spec, tmp_path / "truth")
    return set(zip(*map(np.ndarray.tolist, np.nonzero(gen.bandwidth_min < gen.bandwidth))))


def test_varying_uplink_is_reported_as_its_group(tmp_path):
    spec = shuffled(6, 8, seed=5, varying=[Varying("uplink", 2, low=0.05)])
    model = synthetic_model(spec, seed=5)
    f = find_slow_links(model)
    rack = racks_of(spec, model)
    group = int(np.bincount(f.groups[rack == 2]).argmax())
    assert f.noisy_groups == [group]
    assert f.noisy_nodes == [] and f.noisy_blocks == []
    assert f.noisy_pairs and {p.scope for p in f.noisy_pairs} == {"group"}
    through = {(i, j) for i in range(48) for j in range(48) if (rack[i] == 2) != (rack[j] == 2)}
    limited = limited_by_varying_link(spec, tmp_path)
    assert limited < through and len(limited) > 0.75 * len(through)  # not those via a slower degraded NIC
    assert {(p.src, p.dst) for p in f.noisy_pairs} == limited


def test_varying_uplink_between_two_groups_is_their_block(tmp_path):
    """Two groups: one uplink carries half of all pairs (the typical pair
    varies), and the numbers cannot tell which of the two uplinks it is."""
    spec = shuffled(2, 16, seed=7, varying=[Varying("uplink", 1, low=0.05)])
    f = find_slow_links(synthetic_model(spec, seed=7))
    assert f.noisy_blocks == [(0, 1)] and f.noisy_groups == [] and f.noisy_nodes == []
    assert {(p.src, p.dst) for p in f.noisy_pairs} == limited_by_varying_link(spec, tmp_path)
    assert {p.scope for p in f.noisy_pairs} == {"block"}


def test_varying_node_link_is_reported_as_the_node():
    spec = shuffled(6, 8, seed=6, varying=[Varying("node", 11)])
    f = find_slow_links(synthetic_model(spec, seed=6))
    assert f.noisy_nodes == [11] and f.noisy_groups == [] and f.noisy_blocks == []
    assert {p.scope for p in f.noisy_pairs} == {"node"}
    assert all(11 in (p.src, p.dst) for p in f.noisy_pairs)


def test_varying_nic_read_low_is_not_a_slow_nic():
    """A NIC whose bandwidth varies, measured mostly while low, has a low median bandwidth;
    its fastest round trips still reach the others' (a narrow NIC caps every one of them)."""
    model = synthetic_model(shuffled(6, 8, seed=6, degraded_share=0), seed=6)
    size = float(model.sizes[-1])
    model.rtt_min[..., -1] = size * model.beta
    for node, narrow in ((11, False), (20, True)):
        for cell in ((node, slice(None)), (slice(None), node)):
            model.beta[cell] *= 2.0
            if narrow:
                model.rtt_min[cell + (-1,)] *= 2.0
            else:
                model.jitter[cell + (slice(-2, None),)] = 0.5
    f = find_slow_links(model)
    assert f.slow_nodes == [20]
    assert f.noisy_nodes == [11]


def test_jitter_at_large_sizes_only_is_seen():
    """A bandwidth that varies shows only in large transfers: the median over
    all sizes would be the quiet small sizes' jitter."""
    model = synthetic_model(shuffled(2, 4, seed=1, degraded_share=0), seed=1)
    model.jitter[:] = 0.01
    model.jitter[0, 1, -1] = 0.5
    var = pair_variation(model)
    assert var[0, 1] == pytest.approx(0.5)
    assert var[1, 0] == pytest.approx(0.01)
    assert model.pair_jitter[0, 1] == pytest.approx(0.01)


# ------------------------------------------------------ one simulated probe


@pytest.mark.parametrize("ranks_per_node", [1, 2])
def test_simulated_probe_of_shuffled_racks_with_degraded_nodes(tmp_path, ranks_per_node):
    """SimGrid, 40 of 48 nodes in 6 racks dealt in shuffled order, two NICs
    at 1/8 of the bandwidth and 20x the latency, one rack uplink whose
    bandwidth varies over time down to 5 % (a limit even for one pair)."""
    base = PlatformSpec(racks=6, nodes_per_rack=8, cores=2, shuffle_racks=True, seed=3)
    rack = base.rack_of_node
    varying_rack = int(rack[0])
    slow = [int(np.flatnonzero(rack[:40] == r)[1]) for r in sorted(set(rack[:40]) - {varying_rack})[:2]]
    spec = PlatformSpec(**{**base.to_dict(), "degraded": [Degraded("node", i, **SLOW_NIC) for i in slow],
                           "varying": [Varying("uplink", varying_rack, low=0.05)]})
    gen = generate(spec, tmp_path / "plat")
    options = ProbeOptions()
    model = probe_sim(gen.platform_xml, tmp_path / "m.rwm", options, ranks_per_node=ranks_per_node, nodes=40,
                      show_progress=False)
    f = find_slow_links(model)
    assert adjusted_rand_index(f.groups, rack[:40]) >= 0.95
    assert f.slow_nodes == sorted(slow)
    group = int(np.bincount(f.groups[rack[:40] == varying_rack]).argmax())
    assert f.noisy_groups == [group]
    assert f.noisy_nodes == []


@pytest.mark.parametrize("racks,per_rack,seed", [(8, 4, 1), (6, 6, 2), (5, 8, 3), (4, 6, 4)])
def test_slow_uplinks_are_named_as_uplinks_not_as_slow_nodes(racks, per_rack, seed):
    """Two rack uplinks at a third of the bandwidth and 3x the latency and one slow NIC, racks dealt in
    shuffled order: the nodes behind the slow uplinks stay in their racks (every one of them was a slow
    node in a group of its own: their rows differ from most others' by the uplink's latency, as a slow
    NIC's would), the two uplinks are named as uplinks and the NIC as the only slow node."""
    spec = shuffled(racks, per_rack, seed, degraded_share=0)
    nic = int(np.random.default_rng(seed).integers(racks * per_rack))
    spec = PlatformSpec(**{**spec.__dict__, "degraded": [
        Degraded("uplink", 1, bw_factor=1 / 3, lat_factor=3.0), Degraded("uplink", racks - 2, bw_factor=1 / 3,
                                                                          lat_factor=3.0),
        Degraded("node", nic, **SLOW_NIC)]})
    model = synthetic_model(spec)
    rack = racks_of(spec, model)
    f = find_slow_links(model)
    assert adjusted_rand_index(f.groups, rack) == 1.0
    assert f.slow_nodes == [nic]
    group_of_rack = {int(rack[i]): int(f.groups[i]) for i in range(model.n_nodes)}
    assert sorted(f.slow_uplinks) == sorted({group_of_rack[1], group_of_rack[racks - 2]})


def test_two_groups_name_no_uplink():
    """With two groups a slow uplink cannot be told from the other: the block stays a block."""
    spec = PlatformSpec(racks=2, nodes_per_rack=6, cores=1, seed=1,
                        degraded=[Degraded("uplink", 1, bw_factor=1 / 3, lat_factor=3.0)])
    f = find_slow_links(synthetic_model(spec))
    assert f.slow_uplinks == []


# ------------------------------------- longer routes and slow shared links (issue 21, item 1)


ROUTED = ["torus:4,4,2", "dragonfly:3,2,4", "fat-tree3:3,2,6"]


@pytest.mark.parametrize("topology", ROUTED)
def test_longer_routes_are_no_fault(topology):
    """Hop counts on a torus, two-hop routes on a dragonfly, cross-pod routes on a three-level
    tree: pairs farther apart are slower by design, in whole steps of the distance classes. A
    healthy network gives no slow relation, uplink or node (a torus gave hundreds of relations)."""
    for seed in range(3):
        f = find_slow_links(synthetic_model(PlatformSpec(topology=topology, seed=seed), seed=seed))
        assert f.slow_blocks == [] and f.slow_uplinks == [] and f.slow_nodes == [], seed


SLOW_LINKS = [("torus:4,4,2", "x", 3), ("dragonfly:3,2,4", "global", 1), ("fat-tree3:3,2,6", "uplink", 2)]


@pytest.mark.parametrize("topology,kind,index", SLOW_LINKS)
def test_a_slow_shared_link_is_named_on_the_pairs_that_cross_it(tmp_path, topology, kind, index):
    """A router link (or a leaf uplink) at 0.3 of its bandwidth and 2.5x its latency, and a
    degraded NIC: the NIC is the only slow node, and every slow relation or uplink named lies on
    the link (most of its pairs cross it), while the longer routes around it stay unnamed."""
    from rankwise.sim.faults import crossing_pairs

    spec = PlatformSpec(topology=topology, seed=4, degraded=[Degraded(kind, index, 0.3, 2.5),
                                                             Degraded("node", 5, **SLOW_NIC)])
    gen = generate(spec, tmp_path / "plat")
    on = crossing_pairs(gen)[[k for k, link in enumerate(gen.links) if link.kind == kind and link.index == index]]
    on = on.any(axis=0)
    on |= on.T  # a ping-pong crosses the link when either direction's route holds it
    f = find_slow_links(synthetic_model(spec, seed=4))
    assert f.slow_nodes == [5]
    g = f.groups
    named = [(g[:, None] == a) & (g[None, :] == b) for a, b in f.slow_blocks]
    named += [(g[:, None] == x) ^ (g[None, :] == x) for x in f.slow_uplinks]
    named += [hop_pairs(len(g), u, v) for u, v in f.slow_links]
    assert named, "the slow link is not named"
    clean = np.ones_like(on)
    clean[5, :] = clean[:, 5] = False
    for cell in named:
        assert on[cell & clean].mean() >= 0.5


def test_a_slow_router_link_is_named_from_the_stress_tests_paths(tmp_path):
    """A dragonfly's global link at 0.4 of its bandwidth, its latency unchanged (3 groups of 2
    routers of 4 nodes): still wider than one NIC, so no lone pair sees it and the ping-pong alone
    names nothing; the stress test reads the paths between the routers it joins low both ways,
    and those relations are named, every one on the link. The same link varying over time is read
    low on a path phase's moment, not both ways alike: no slow relation."""
    from rankwise.sim.faults import crossing_pairs

    fast = ProbeOptions(sizes="8,64K,1M", repetitions=2, rounds=1, mode="isolated", capacities="after")
    spec = PlatformSpec(topology="dragonfly:3,2,4", seed=4, degraded=[Degraded("global", 1, bw_factor=0.4)])
    gen = generate(spec, tmp_path / "slow")
    on = crossing_pairs(gen)[[k for k, link in enumerate(gen.links) if link.kind == "global" and link.index == 1]]
    on = on.any(axis=0)
    on |= on.T
    model = probe_sim(gen.platform_xml, tmp_path / "slow.rwm", fast, show_progress=False)
    f = find_slow_links(model)
    g = f.groups
    named = np.zeros_like(on)
    for a, b in f.slow_blocks:
        cell = (g[:, None] == a) & (g[None, :] == b)
        assert on[cell].mean() >= 0.5
        named |= cell
    assert named[on].mean() == 1.0 and f.slow_nodes == [] and f.slow_uplinks == []
    model.links = [link for link in model.links if not link.name.startswith("path-")]
    assert find_slow_links(model).slow_blocks == []

    spec = PlatformSpec(topology="dragonfly:3,2,4", seed=4, varying=[Varying("global", 1, period=0.05, steps=10, low=0.1)])
    gen = generate(spec, tmp_path / "varying")
    f = find_slow_links(probe_sim(gen.platform_xml, tmp_path / "varying.rwm", fast, show_progress=False))
    assert f.slow_blocks == [] and f.slow_uplinks == []


def test_round_mates_of_a_relation_vary_by_contention_not_a_varying_link():
    """A dragonfly's router pair (3 groups of 2 routers of 4 nodes): the concurrent probe's circle
    method puts most of its pairs in rounds with pairs of the same relation, and those vary by
    contention on the links they share (jitter 0.4), the few that ran without one do not. No link
    varies: nothing is named, where the same jitter on pairs measured one at a time (isolated
    mode) names the relation. Between two racks every pair meets mates of its relation, so
    nothing sets them apart: all are judged, and a varying link between them is still named (a
    relation with a few pairs alone and the rest with mates is not: too few to tell)."""
    from dataclasses import replace

    from rankwise.model.anomalies import _round_mates

    model = synthetic_model(PlatformSpec(topology="dragonfly:3,2,4", seed=1), seed=1)
    g = model.groups().astype(int)
    assert model.settings.mode == "concurrent"
    cell = (np.minimum(g[:, None], g[None, :]) == 0) & (np.maximum(g[:, None], g[None, :]) == 1)
    crowded = cell & _round_mates(model, g)
    assert 0 < crowded.sum() < cell.sum()
    model.jitter[crowded] = 0.4
    assert find_slow_links(model).noisy_blocks == []
    model.settings = replace(model.settings, mode="isolated")
    assert find_slow_links(model).noisy_blocks == [(0, 1)]
    two = synthetic_model(PlatformSpec(racks=2, nodes_per_rack=8, cores=1, seed=1), seed=1)
    across = two.groups()[:, None] != two.groups()[None, :]
    assert _round_mates(two, two.groups().astype(int))[across].all()
    two.jitter[across] = 0.4
    assert find_slow_links(two).noisy_blocks == [(0, 1)]


def hop_pairs(n: int, u: int, v: int) -> np.ndarray:
    """The pairs of a direct network's link between nodes u and v, both directions."""
    m = np.zeros((n, n), dtype=bool)
    m[u, v] = m[v, u] = True
    return m


def with_round_trips(model: Model, contended=(), share: float = 1 / 3) -> Model:
    """The round trips the model's fit came from (s bytes out, an empty reply: alpha_ij + alpha_ji +
    s x beta_ij), each node its own group as a torus probe stores them, refitted. The pairs in
    `contended` share a link with round-mates during their 64 KiB transfers in both directions (the
    concurrent probe runs both in one round): `share` of the rate there."""
    s = model.sizes.astype(float)
    rtt = (model.alpha + model.alpha.T)[..., None] + model.beta[..., None] * s
    for i, j in contended:
        for a, b in ((i, j), (j, i)):
            rtt[a, b] += np.where(model.sizes == 65536, (1 / share - 1) * s * model.beta[a, b], 0.0)
    model.rtt_min, model.rtt_median, model.rtt_max = rtt.copy(), rtt.copy(), rtt.copy()
    model.group_of = np.arange(model.n_nodes, dtype=np.int32)
    model.refit()
    return model


def test_contention_at_large_sizes_makes_no_slow_relation(tmp_path):
    """Round-mates sharing a link at large sizes tilt a pair's Hockney fit: its alpha rises off the
    distance classes (0.4 step here) while its smallest messages still take the route's latency.
    Relations are judged from those: no slow relation (the fitted alpha gave six), and a slow
    router link is still named."""
    contended = [(0, 10), (5, 31), (3, 25)]  # 3-4 hops apart
    model = with_round_trips(synthetic_model(PlatformSpec(topology="torus:4,4,2", seed=1), seed=1, noise=0.0),
                             contended)
    f = find_slow_links(model)
    alpha = (model.alpha + model.alpha.T) / 2
    assert not f.classes.explained(np.array([alpha[p] for p in contended])).any()  # the fit moved them
    assert f.slow_blocks == [] and f.slow_nodes == [] and f.slow_uplinks == []

    from rankwise.sim.faults import crossing_pairs

    spec = PlatformSpec(topology="torus:4,4,2", seed=1, degraded=[Degraded("x", 3, 0.3, 2.5)])
    gen = generate(spec, tmp_path / "plat")
    on = crossing_pairs(gen)[[k for k, link in enumerate(gen.links) if link.name == "x-3"]].any(axis=0)
    on |= on.T
    f = find_slow_links(with_round_trips(synthetic_model(spec, seed=1, noise=0.0)))
    g = f.groups
    assert (f.slow_blocks or f.slow_links) and f.slow_nodes == []
    for a, b in f.slow_blocks:
        assert on[(g[:, None] == a) & (g[None, :] == b)].mean() >= 0.5
    for u, v in f.slow_links:
        assert on[hop_pairs(len(g), u, v)].all()


def test_a_pair_halved_by_a_round_mate_names_no_link(tmp_path):
    """A round-mate on one pair's route halves that pair steadily (its rounds repeat the same
    mates): no other pair of its two nodes is capped, so no link is named. The pairs a slow
    router link caps (0.3 of its rate) come in families and are still named."""
    spec = PlatformSpec(topology="torus:4,4,2", seed=1)
    model = synthetic_model(spec, seed=1, noise=0.0)
    model.group_of = np.arange(model.n_nodes, dtype=np.int32)  # as a torus probe stores them
    model.beta[0, 10] *= 2.3  # 0.43 of its rate, as the study's tori read such pairs
    assert find_slow_links(model).slow_blocks == []

    from rankwise.sim.faults import crossing_pairs

    spec = PlatformSpec(topology="torus:4,4,2", seed=1, degraded=[Degraded("x", 3, 0.3, 1.0)])
    gen = generate(spec, tmp_path / "plat")
    on = crossing_pairs(gen)[[k for k, link in enumerate(gen.links) if link.name == "x-3"]].any(axis=0)
    model = synthetic_model(spec, seed=1, noise=0.0)
    model.group_of = np.arange(model.n_nodes, dtype=np.int32)
    f = find_slow_links(model)
    g = f.groups
    assert f.slow_blocks and all(on[(g[:, None] == a) & (g[None, :] == b)].all() for a, b in f.slow_blocks)



def test_a_slow_torus_hop_is_named_between_its_two_nodes(tmp_path):
    """A torus link at 3.6x its latency and 0.46 of its bandwidth (as the study's seed 209): the
    pairs whose route crosses it one way are 1.3 steps farther than their hop count, between
    two classes: no relation held a majority of them here (nothing was named), a score of
    relations did on the study's platform. The hop is named once, between the two nodes it
    joins, and no relation is left."""
    from rankwise.sim.faults import crossing_pairs

    spec = PlatformSpec(topology="torus:4,4,2", seed=2, degraded=[Degraded("y", 6, 0.46, 3.6)])
    gen = generate(spec, tmp_path / "plat")
    on = crossing_pairs(gen)[[k for k, link in enumerate(gen.links) if link.name == "y-6"]].any(axis=0)
    model = synthetic_model(spec, seed=2, noise=0.0)
    model.group_of = np.arange(model.n_nodes, dtype=np.int32)  # as a torus probe stores them
    f = find_slow_links(model)
    assert f.slow_links == [(6, 10)]  # y-6 joins node 6 to its +y neighbour
    assert on[hop_pairs(model.n_nodes, 6, 10)].all()
    assert f.slow_blocks == [] and f.slow_nodes == []
    from rankwise.report.model import summarize

    assert summarize(model).structure.slow_hops == [f"{model.names[6]} <-> {model.names[10]}"]  # `show` names it


def test_pairs_halved_into_one_node_name_no_link_on_a_torus():
    """Four pairs into one node halved by round-mates (seed 209 of the study: 5.7 GB/s where
    their class gets 12) share a cap, but no hop of their routes is capped: contention, no link.
    A narrow hop would cap its own two nodes' pair first."""
    model = synthetic_model(PlatformSpec(topology="torus:4,4,2", seed=1), seed=1, noise=0.0)
    model.group_of = np.arange(model.n_nodes, dtype=np.int32)
    for src in (2, 8, 13, 24):  # 2-4 hops from node 31, routes through different last hops
        model.beta[src, 31] *= 2.1
    f = find_slow_links(model)
    assert f.slow_blocks == [] and f.slow_links == [] and f.slow_nodes == []


@pytest.mark.parametrize("varies", [False, True])
def test_a_nic_below_a_narrower_torus_is_named_from_its_caps(varies):
    """A NIC at 0.42 of its rate on a torus whose links run at half a NIC's (seed 221 of the
    study): every lone pair is capped by the links, the node's at 0.84 of the others', which the
    threshold does not flag; the stress test reads its caps at 0.42 both ways. Named slow when
    its pairs are steady; when they vary (a NIC whose load varies, read at a low moment) it is
    not named slow."""
    spec = PlatformSpec(topology="torus:4,4,2", seed=3, oversubscription=2.0,
                        degraded=[Degraded("node", 9, bw_factor=0.42, lat_factor=1.0)])
    model = synthetic_model(spec, seed=3, noise=0.0)
    model.group_of = np.arange(model.n_nodes, dtype=np.int32)
    model.inject = np.full(model.n_nodes, spec.node_bw)
    model.eject = np.full(model.n_nodes, spec.node_bw)
    model.inject[9] = model.eject[9] = 0.42 * spec.node_bw
    if varies:
        model.jitter[9, :] = model.jitter[:, 9] = 0.8
    f = find_slow_links(model)
    assert (9 in f.slow_nodes) is not varies
    if varies:
        assert f.noisy_nodes == [9]
    else:
        assert f.slow_blocks == [] and f.slow_links == []

def test_a_nic_latency_in_a_group_is_named():
    """A NIC at 3.2x its latency adds about a whole step to every pair of its node: its nearest
    pair is a class farther than every other node's. On a torus the probe may group a few nodes
    around a slow link; the node's group is no cover (its mates are its nearest pairs too)."""
    spec = PlatformSpec(topology="torus:4,4,2", seed=1, degraded=[Degraded("node", 5, bw_factor=1.0, lat_factor=3.2)])
    model = synthetic_model(spec, seed=1, noise=0.0)
    stored = np.arange(model.n_nodes)
    stored[[1, 4, 6, 9]] = 5  # node 5 and its four neighbours in x and y
    model.group_of = np.unique(stored, return_inverse=True)[1].astype(np.int32)
    f = find_slow_links(model)
    assert (f.groups == f.groups[5]).sum() == 5
    assert f.slow_nodes == [5] and f.slow_blocks == []


# ------------------------------------------ time variation localised (issue 21, item 3)


def contention(model: Model, seed: int, high: float) -> Model:
    """Every pair of a concurrent round varies a bit: jitter up to `high` on every pair and size,
    kept where the model has more (a varying link's pairs)."""
    rng = np.random.default_rng(seed)
    model.jitter = np.fmax(model.jitter, rng.uniform(0.0, high, model.jitter.shape))
    return model


def test_contention_jitter_names_no_varying_link():
    model = contention(synthetic_model(shuffled(6, 8, seed=3, degraded_share=0), seed=3), seed=3, high=0.4)
    f = find_slow_links(model)
    assert f.varying_links == [] and f.noisy_pairs == []
    assert f.noisy_nodes == [] and f.noisy_groups == [] and f.noisy_blocks == []


@pytest.mark.parametrize("varying,expect", [(Varying("node", 11, low=0.2), "node"),
                                            (Varying("uplink", 2, low=0.05), "group")])
def test_a_varying_link_is_named_among_contention_jitter(varying, expect):
    """A varying NIC or uplink under contention jitter of up to 15 % on every pair: the link is
    named, with the pairs it limits, and the pairs that do not cross it are not flagged."""
    spec = shuffled(6, 8, seed=6, degraded_share=0, varying=[varying])
    model = contention(synthetic_model(spec, seed=6), seed=6, high=0.15)
    f = find_slow_links(model)
    assert [v.kind for v in f.varying_links] == [expect]
    if expect == "node":
        assert f.noisy_nodes == [11] and all(11 in (p.src, p.dst) for p in f.noisy_pairs)
    else:
        rack = racks_of(spec, model)
        assert f.noisy_groups == [int(np.bincount(f.groups[rack == 2]).argmax())]
        assert all((rack[p.src] == 2) != (rack[p.dst] == 2) for p in f.noisy_pairs)
    assert f.noisy_pairs and {p.scope for p in f.noisy_pairs} == {expect}


@pytest.mark.parametrize("varying", [None, Varying("x", 3, low=0.1)])
def test_a_varying_torus_hop_is_named_between_its_two_nodes(tmp_path, varying):
    """A torus link whose bandwidth walks down to x0.1, under contention jitter on every pair (the
    study's seed 11: no group, relation or node took its pairs, all left as pairs alone): named
    once, between the two nodes it joins, with pairs whose shortest routes may cross it; without
    it, no link."""
    from rankwise.sim.faults import crossing_pairs

    spec = PlatformSpec(topology="torus:4,4,2", seed=3, varying=[varying] if varying else [])
    model = contention(synthetic_model(spec, seed=3, noise=0.0), seed=3, high=0.15)
    model.group_of = np.arange(model.n_nodes, dtype=np.int32)  # as a torus probe stores them
    f = find_slow_links(model)
    if varying is None:
        assert f.noisy_links == [] and f.varying_links == []
        return
    gen = generate(spec, tmp_path / "plat")
    on = crossing_pairs(gen)[[k for k, link in enumerate(gen.links) if link.name == "x-3"]].any(axis=0)
    assert len(f.noisy_links) == 1 and [v.kind for v in f.varying_links] == ["hop"]
    assert on[hop_pairs(model.n_nodes, *f.noisy_links[0])].all()
    assert f.noisy_nodes == [] and f.noisy_groups == [] and f.noisy_blocks == []
    assert {p.scope for p in f.noisy_pairs} == {"hop"}
    from rankwise.report.model import summarize

    u, v = f.noisy_links[0]
    assert summarize(model).structure.variable_links[0].startswith(f"the link {model.names[u]} <-> {model.names[v]} (")


def test_a_torus_read_as_one_group_under_contention_names_no_varying_link():
    """A torus probe that found no group structure stores one group: its only relation is inside
    it, with nothing left to compare its pairs' jitter with (the fidelity study's random platform seeds 5 and 215, jitter
    19 %). Contention jitter alone names no link there."""
    spec = PlatformSpec(topology="torus:4,4,2", seed=5)
    model = contention(synthetic_model(spec, seed=5, noise=0.0), seed=5, high=0.4)
    model.group_of = np.zeros(model.n_nodes, dtype=np.int32)
    f = find_slow_links(model)
    assert np.median(model.jitter) > 0.05  # above the floor: only the missing reference stops it
    assert f.varying_links == [] and f.noisy_blocks == [] and f.noisy_groups == []


@pytest.mark.parametrize("faulty", [False, True])
def test_a_128_node_torus_is_read_as_one(faulty):
    """At 128 nodes a torus's neighbours (6 of 127 pairs a node) are too few to make the nearest
    distance class, and its antipodes (128 pairs) too few for the farthest: the hop graph was not
    found and every antipodal relation was slow. Healthy: nothing named; with a slow and a varying
    link, each between the two nodes it joins (y-6: node 6 and its +y neighbour, x-3: 3 and 4)."""
    spec = PlatformSpec(topology="torus:8,4,4", seed=3,
                        degraded=[Degraded("y", 6, 0.46, 3.6)] if faulty else [],
                        varying=[Varying("x", 3, low=0.1)] if faulty else [])
    model = contention(synthetic_model(spec, seed=3, noise=0.0), seed=3, high=0.15)
    model.group_of = np.arange(model.n_nodes, dtype=np.int32)
    f = find_slow_links(model)
    assert f.slow_blocks == [] and f.slow_nodes == [] and f.noisy_groups == [] and f.noisy_nodes == []
    assert f.slow_links == ([(6, 14)] if faulty else [])
    assert f.noisy_links == ([(3, 4)] if faulty else [])


def test_a_torus_nodes_readings_that_vary_name_no_uplink():
    """A torus node's up and down phases cross its links to its neighbours: readings that vary
    (4x, where a neighbouring link's load varied; the study's seed 23) are no uplink of a group of
    one node, which is neither named varying nor kept from the jitter's steps."""
    model = synthetic_model(PlatformSpec(topology="torus:4,4,2", seed=3), seed=3, noise=0.0)
    model.group_of = np.arange(model.n_nodes, dtype=np.int32)
    model.spreads = [Spread(f"{side}-{x}", lo, lo, 1e10, 0.0, 4) for x in range(model.n_nodes)
                     for side in ("up", "down") for lo in ([2.5e9] if x == 18 else [1e10])]
    g = find_slow_links(model).groups
    assert capacity_spreads(model, g) == {}
    assert find_slow_links(model).noisy_groups == []


# ---------------------------- uplinks slow in bandwidth alone: the stress test's capacities


@pytest.mark.parametrize("oversubscription", [1.0, 2.0])
def test_an_uplink_slow_in_bandwidth_alone_is_named_from_the_stress_test(tmp_path, oversubscription):
    """4 racks of 4, rack 2's uplink at 0.4 of the others' and no extra latency: still wider than
    one NIC, so no lone pair sees it and the ping-pong alone names nothing; the stress test's
    capacity names rack 2's uplink, and a design's oversubscription (2:1, every rack alike) names
    no other."""
    spec = PlatformSpec(racks=4, nodes_per_rack=4, cores=1, seed=3, oversubscription=oversubscription,
                        degraded=[Degraded("uplink", 2, bw_factor=0.4)])
    gen = generate(spec, tmp_path / "plat")
    fast = dict(sizes="8,64K,1M", repetitions=2, rounds=1, mode="isolated")
    alone = find_slow_links(probe_sim(gen.platform_xml, tmp_path / "a.rwm", ProbeOptions(**fast),
                                      show_progress=False))
    assert alone.slow_uplinks == [] and alone.slow_nodes == []
    model = probe_sim(gen.platform_xml, tmp_path / "b.rwm", ProbeOptions(**fast, capacities="after"),
                      show_progress=False)
    f = find_slow_links(model)
    rack = racks_of(spec, model)
    assert adjusted_rand_index(f.groups, rack) == 1.0
    behind = {int(f.groups[i]) for i in np.flatnonzero(rack == 2)}
    assert f.slow_uplinks == sorted(behind) and f.slow_nodes == []


# ------------------------ a slow shared uplink vs a busy one: capacities read at separate times


def test_capacity_read_at_separate_times_tells_a_busy_uplink_from_a_slow_one(tmp_path):
    """4 racks of 4: rack 2's uplink at 0.4 of the others' in bandwidth alone, rack 1's walking
    between x0.1 and x1 every 10 ms. The stress test catches rack 1's link at some moment below
    rack 2's and, read once, both pass for slow. Read at 4 separate times, rack 2's readings agree
    (slow), rack 1's do not (varying, named from its capacity with how low it fell); an older
    model without the readings still names rack 2."""
    spec = PlatformSpec(racks=4, nodes_per_rack=4, cores=1, seed=3, degraded=[Degraded("uplink", 2, bw_factor=0.4)],
                        varying=[Varying("uplink", 1, period=0.01, steps=10, low=0.1)])
    gen = generate(spec, tmp_path / "plat")
    model = probe_sim(gen.platform_xml, tmp_path / "m.rwm",
                      ProbeOptions(sizes="8,64K,1M", repetitions=2, rounds=1, mode="isolated", capacities="after"),
                      show_progress=False)
    f = find_slow_links(model)
    rack = racks_of(spec, model)
    assert adjusted_rand_index(f.groups, rack) == 1.0
    busy, slow = int(f.groups[rack == 1][0]), int(f.groups[rack == 2][0])
    assert f.slow_uplinks == [slow] and f.slow_nodes == []
    assert f.noisy_groups == [busy]
    [link] = f.varying_links
    assert (link.kind, link.where, link.seen_by) == ("group", str(busy), "capacity") and link.low < 0.5
    assert capacity_spreads(model, f.groups)[slow].varying is False
    model.spreads = []
    assert slow in find_slow_links(model).slow_uplinks


def spread_model(readings: dict[int, tuple[float, float, float]]) -> tuple[Model, np.ndarray]:
    """A model of 4 racks of 4 whose stress test read each group's up and down link at 4 times as
    (low / high, noise, high)."""
    model = synthetic_model(PlatformSpec(racks=4, nodes_per_rack=4, cores=1, seed=1), seed=1)
    g = model.groups().astype(int)
    model.group_of = g.astype(np.int32)
    model.spreads = [Spread(f"{side}-{x}", ratio * high, (1 + ratio) / 2 * high, high, noise, 4)
                     for x, (ratio, noise, high) in readings.items() for side in ("up", "down")]
    return model, g


def test_a_noisy_stack_names_no_busy_uplink_and_a_neighbour_is_not_named():
    """Readings that all differ by 1.5-2.5x with as much noise between repetitions (a loaded real
    stack) name nothing; on a quiet network one link read 10x apart is named, and readings moved by
    1.4x (a busy neighbour's share of an up phase's flows) are not; a model without readings
    (format 4 and older) gives none."""
    noisy, g = spread_model({0: (1 / 1.5, 0.6, 5e10), 1: (1 / 2.5, 0.9, 5e10), 2: (1 / 2, 0.7, 5e10),
                             3: (1 / 1.8, 0.8, 5e10)})
    assert not any(sp.varying for sp in capacity_spreads(noisy, g).values())
    quiet, g = spread_model({0: (1.0, 0.0, 5e10), 1: (0.1, 0.0, 5e10), 2: (1 / 1.4, 0.0, 5e10), 3: (1.0, 0.0, 5e10)})
    found = capacity_spreads(quiet, g)
    assert [x for x, sp in found.items() if sp.varying] == [1] and found[1].low == pytest.approx(0.1)
    quiet.spreads = []
    assert capacity_spreads(quiet, g) == {}


def test_a_downlink_moved_by_a_varying_sender_is_not_named():
    """Slow senders cannot take up what a varying uplink leaves: a receiving group's down reading
    moves 1.5x with it (seed 0 of the fidelity study, 2 ranks per node). The link that varies in
    a direction no other group's readings explain is named, the receiver is not; with one
    direction each, nothing tells the two apart and both are named."""
    model, g = spread_model({x: (1.0, 0.0, 5e10) for x in range(4)})
    model.spreads = [Spread(name, lo, (lo + hi) / 2, hi, 0.0, 4) for name, lo, hi in (
        ("up-0", 6.8e10, 6.8e10), ("down-0", 4.4e10, 6.7e10), ("up-1", 4.2e10, 6.8e10),
        ("down-1", 4.2e10, 5.4e10), ("up-2", 1.5e10, 1.5e10), ("down-2", 1.5e10, 1.5e10),
        ("up-3", 2.0e10, 2.0e10), ("down-3", 2.0e10, 2.0e10))]
    found = capacity_spreads(model, g)
    assert [x for x, sp in found.items() if sp.varying] == [1]
    model.spreads[3] = Spread("down-1", 5.4e10, 5.4e10, 5.4e10, 0.0, 4)
    found = capacity_spreads(model, g)
    assert sorted(x for x, sp in found.items() if sp.varying) == [0, 1]


def test_a_slow_pod_from_the_stress_tests_pod_links():
    """Racks 0-1, 2-3 and 4-5 as three pods (6 racks of 4): the stress test kept pod 1's links at
    15 GB/s, steady, where the pods' phases read 50: pod 1 (racks 2, 3) is slow. The same link read
    at a moment of a varying load (its readings 15-50 apart) says nothing; nor do two pods, whose up
    and down phases carry the same flows (pod_up_1 is pod_down_0): both read the narrow one."""
    from rankwise.model.model import Link

    model = synthetic_model(PlatformSpec(racks=6, nodes_per_rack=4, cores=1, seed=2), seed=2)
    g = model.groups().astype(int)
    model.group_of = g.astype(np.int32)
    rack = lambda r: int(g[r * 4])  # synthetic_model's racks are in node order
    pods = [(rack(0), rack(1)), (rack(2), rack(3)), (rack(4), rack(5))]
    others = tuple(x for x in range(6) if x not in pods[1])
    model.links = [Link("pod-up-1", 1.5e10, pods[1], others), Link("pod-down-1", 1.5e10, others, pods[1])]
    model.spreads = [Spread(f"pod-{side}-{p}", r, r, r, 0.0, 4) for p, r in enumerate((5e10, 1.5e10, 5e10))
                     for side in ("up", "down")]
    assert find_slow_links(model).slow_pods == [tuple(sorted(pods[1]))]
    from rankwise.report.model import summarize

    assert summarize(model).structure.slow_pods == [sorted(pods[1])]  # `rankwise show` names it
    model.spreads[2] = Spread("pod-up-1", 1.5e10, 4e10, 5e10, 0.0, 4)
    model.spreads[3] = Spread("pod-down-1", 1.5e10, 4e10, 5e10, 0.0, 4)
    assert find_slow_links(model).slow_pods == []
    model.spreads = [Spread(f"pod-{side}-{p}", 1.5e10, 1.5e10, 1.5e10, 0.0, 4) for p in (0, 1)
                     for side in ("up", "down")]
    assert find_slow_links(model).slow_pods == []


def test_a_slow_pod_of_two_read_when_other_groups_stand_outside_both():
    """Two of three pods found (racks 4, 5 stand outside both): pod 1's links kept at 15 GB/s where
    pod 0's phases read 50, and pod 0's down phase, whose flows come from racks 4-5 too, read 50:
    pod 1 is slow. Where its up phase's flows are pod 0's down phase's (pod-down-0 reads as low),
    the two pods hold every group between them and nothing tells which is narrow."""
    from rankwise.model.model import Link

    model = synthetic_model(PlatformSpec(racks=6, nodes_per_rack=4, cores=1, seed=2), seed=2)
    g = model.groups().astype(int)
    model.group_of = g.astype(np.int32)
    rack = lambda r: int(g[r * 4])  # synthetic_model's racks are in node order
    pods = [(rack(0), rack(1)), (rack(2), rack(3))]
    others = tuple(x for x in range(6) if x not in pods[1])
    model.links = [Link("pod-up-1", 1.5e10, pods[1], others), Link("pod-down-1", 1.5e10, others, pods[1])]
    model.spreads = [Spread(f"pod-{side}-{p}", r, r, r, 0.0, 4) for p, r in enumerate((5e10, 1.5e10))
                     for side in ("up", "down")]
    assert find_slow_links(model).slow_pods == [tuple(sorted(pods[1]))]
    model.spreads[1] = Spread("pod-down-0", 1.5e10, 1.5e10, 1.5e10, 0.0, 4)
    model.links = model.links[:1]
    assert find_slow_links(model).slow_pods == []


def test_an_uplink_as_narrow_as_the_networks_own_links_is_not_slow():
    """8 groups of 4 nodes, group 3's up and down links read at a quarter of what its NICs carry.
    Alone among the links kept, that is a slow uplink; where the path phases kept 20 links between
    groups no wider (a dragonfly's local and global links, which one router's flows may all cross
    by design), it is the network's own width, and nothing is named."""
    model = synthetic_model(PlatformSpec(racks=8, nodes_per_rack=4, cores=1, seed=2), seed=2, noise=0.0)
    g = model.groups().astype(int)
    model.group_of = g.astype(np.int32)
    nic = float(np.nanmedian(np.where(model.state == MEASURED, model.bandwidth, np.nan)))
    x = int(g[12])
    narrow = [Link(f"up-{x}", nic, (x,), None), Link(f"down-{x}", nic, None, (x,))]
    model.links = narrow
    assert find_slow_links(model).slow_uplinks == [x]
    others = [y for y in range(8) if y != x]
    model.links = narrow + [Link(f"path-{a}-{b}", 0.98 * nic, (a,), (b,)) for a in others for b in others
                            if a != b][:20]
    assert find_slow_links(model).slow_uplinks == []


@pytest.mark.parametrize("lat_factor", [1.0, 2.0])
def test_a_nic_slow_in_latency_alone_is_named_under_long_routes(lat_factor):
    """A three-level tree (2 pods of 2 racks of 8): node 27's NIC at twice the latency, its bandwidth
    whole. Over all its pairs, most across pods, the extra microsecond is under the 1.3x ratio;
    on each of its rack's pairs it is half the route, and the node is named (nothing at x1.0)."""
    spec = PlatformSpec(topology="fat-tree3:2,2,8", seed=5,
                        degraded=[Degraded("node", 27, bw_factor=1.0, lat_factor=lat_factor)])
    model = synthetic_model(spec, seed=5)
    f = find_slow_links(model)
    assert [model.names[i] for i in f.slow_nodes] == (["node-27"] if lat_factor > 1 else [])
    assert f.slow_uplinks == []


def test_narrow_nics_in_one_rack_are_no_slow_uplink():
    """4 racks of 4: two NICs of rack x at 0.34 and 0.7 of the others' caps bring its nodes' mean
    1.3x below the other racks', but its up and down phases ran at their NICs' pace (no link kept):
    no slow uplink. The same rack with an up link kept at 0.4 of its NICs' sum is one."""
    model = synthetic_model(PlatformSpec(racks=4, nodes_per_rack=4, cores=1, seed=4), seed=4, noise=0.0)
    g = model.groups().astype(int)
    model.group_of = g.astype(np.int32)
    nic = float(np.nanmedian(np.where(model.state == MEASURED, model.bandwidth, np.nan)))
    model.inject = np.full(model.n_nodes, nic)
    model.eject = np.full(model.n_nodes, nic)
    x, y = int(g[0]), int(g[-1])
    narrow = np.flatnonzero(g == x)[1:3]
    model.inject[narrow] = model.eject[narrow] = [0.34 * nic, 0.7 * nic]
    model.links = [Link(f"up-{y}", 3.8 * nic, (y,), None)]
    assert x not in find_slow_links(model).slow_uplinks
    model.links.append(Link(f"up-{x}", 0.4 * 4 * nic, (x,), None))
    assert x in find_slow_links(model).slow_uplinks


@pytest.mark.parametrize("own_pairs_vary", [True, False])
def test_a_varying_nic_is_seen_by_its_pairs_inside_its_rack(own_pairs_vary):
    """4 racks of 8, node 5's NIC walking down to x0.2; every pair across racks varies 30-70 % by
    contention (a concurrent probe's round-mates share the uplinks), so its pairs as a whole stand
    out from no others. Inside its rack nothing is shared and the other pairs are calm: its pairs
    there vary, and the NIC is named; calm there too, nothing is."""
    spec = PlatformSpec(racks=4, nodes_per_rack=8, cores=1, seed=6,
                        varying=[Varying("node", 5, period=0.01, steps=6, low=0.2)])
    model = synthetic_model(spec, seed=6)
    g = model.groups().astype(int)
    rng = np.random.default_rng(6)
    across = g[:, None] != g[None, :]
    model.jitter[across] = rng.uniform(0.3, 0.7, (int(across.sum()), len(model.sizes)))
    if not own_pairs_vary:
        inside = ~across & ((np.arange(32) == 5)[:, None] | (np.arange(32) == 5)[None, :])
        model.jitter[inside] = 0.01
    f = find_slow_links(model)
    assert f.noisy_nodes == ([5] if own_pairs_vary else [])


@pytest.mark.parametrize("apart", [1.0, 1.15])
def test_an_uplink_whose_readings_moved_is_varying_not_slow(apart):
    """4 racks of 4, rack 2's uplink slow to its pairs (x0.1, 3x latency). The stress test read every
    uplink 4 times: agreeing, rack 2's is slow; rack 2's 1.15x apart (short of the 1.5x gap, far
    beyond the others' and their noise), a narrow link would have read the same every time: its
    load varies, and it is named varying, not slow."""
    spec = PlatformSpec(racks=4, nodes_per_rack=4, cores=1, seed=7,
                        degraded=[Degraded("uplink", 2, bw_factor=0.1, lat_factor=3.0)])
    model = synthetic_model(spec, seed=7, noise=0.0)
    g = model.groups().astype(int)
    model.group_of = g.astype(np.int32)
    rack = racks_of(spec, model)
    x = int(g[rack == 2][0])
    model.spreads = [Spread(f"{side}-{y}", 5e10 / (apart if y == x else 1.0), 5e10, 5e10, 0.0, 4)
                     for y in range(4) for side in ("up", "down")]
    f = find_slow_links(model)
    if apart == 1.0:
        assert f.slow_uplinks == [x] and f.noisy_groups == []
    else:
        assert f.slow_uplinks == [] and f.noisy_groups == [x]
