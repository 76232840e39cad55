"""Torus and dragonfly platforms (`rankwise sim platform --topology`): routes, faults, ground
truth, the SimGrid file, and a simulated probe measuring what the ground truth states."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from conftest import assert_one_line_error, run_cli
from rankwise.util.errors import UsageError
from rankwise.map.mapping import Network
from rankwise.predict.predictor import SMPI_ALGORITHM, PredictNetwork, placement, predict_collective
from rankwise.cluster.benchmark_programs import run_benchmark
from rankwise.measure.probe import ProbeOptions, probe_sim
from rankwise.sim.platform import Degraded, PlatformSpec, Varying, build_links, generate, load_generated, route

US = 1e-6
FAST = dict(sizes="8,1K,64K,1M", repetitions=2, rounds=2)


def names(spec: PlatformSpec, src: int, dst: int) -> list[str]:
    links = build_links(spec)
    return [links[k].name for k in route(spec, src, dst)]


# --- routes -------------------------------------------------------------------------------


@pytest.mark.parametrize("dims", [(2, 2, 2), (3, 3, 2), (4, 4, 1), (5, 2, 3)])
def test_torus_routes_are_minimal(dims):
    spec = PlatformSpec(topology="torus:" + ",".join(map(str, dims)))
    t = spec.shape
    for i in range(t.n_nodes):
        for j in range(t.n_nodes):
            a, b = t.coord(i), t.coord(j)
            ring = sum(min((b[k] - a[k]) % dims[k], (a[k] - b[k]) % dims[k]) for k in range(3))
            assert t.hop_count(i, j) == ring, (a, b)
            # no link crossed twice, and a route ends where it should
            assert len(set(route(spec, i, j))) == len(route(spec, i, j))


def test_torus_routes_go_x_then_y_then_z_the_short_way_round():
    spec = PlatformSpec(topology="torus:4,3,2")
    t = spec.shape
    src, dst = t.node((3, 0, 0)), t.node((0, 2, 1))
    # x: 3 -> 0 over the wrap link x-3 (forward); y: 0 -> 2 backwards over y-(0,2,0);
    # z: 0 -> 1 over the single link of a ring of 2, z-(0,2,0), upwards; then the NIC down.
    assert names(spec, src, dst) == ["node-3", "x-3", "y-8", "z-8", f"node-{dst}"]
    assert [up for _, up in t.hops(src, dst)] == [True, True, False, True, False]
    # The way back is its own dimension-order route, not this one reversed: x 0 -> 3 backwards
    # over x-(3,2,1), y 2 -> 0 forwards over the wrap y-(3,2,1), z 1 -> 0 over z-(3,0,0).
    back = t.hops(dst, src)
    assert names(spec, dst, src) == [f"node-{dst}", "x-23", "y-23", "z-3", "node-3"]
    assert [up for _, up in back] == [True, False, True, False, False]


def test_dragonfly_routes_are_minimal_and_use_one_global_link():
    spec = PlatformSpec(topology="dragonfly:4,3,2")
    d = spec.shape
    links = build_links(spec)
    for i in range(d.n_nodes):
        for j in range(d.n_nodes):
            if i == j:
                continue
            kinds = [links[k].kind for k in route(spec, i, j)]
            (gi, ri), (gj, rj) = d.place(i), d.place(j)
            assert kinds[0] == kinds[-1] == "node"
            assert kinds.count("global") == (gi != gj)
            assert kinds.count("local") <= (2 if gi != gj else 1)
            if (gi, ri) == (gj, rj):
                assert kinds == ["node", "node"]
    # global links spread over a group's routers: each router of group 0 holds one of its 3
    assert sorted(d.gateway(0, g) for g in (1, 2, 3)) == [0, 1, 2]


# --- ground truth -------------------------------------------------------------------------


def test_ring_of_three_ground_truth_by_hand(tmp_path):
    spec = PlatformSpec(topology="torus:3,1,1", cores=1, node_bw=10e9, node_lat=1 * US, uplink_lat=2 * US,
                        loopback_lat=0.5 * US, loopback_bw=40e9, degraded=[Degraded("x", 1, 0.5, 3.0)])
    gp = generate(spec, tmp_path)
    a, s = 1 * US + 2 * US + 1 * US, 1 * US + 6 * US + 1 * US  # plain hop, through the slow x-1
    lb = 0.5 * US
    np.testing.assert_allclose(gp.alpha, [[lb, a, a], [a, lb, s], [a, s, lb]], rtol=1e-12)
    np.testing.assert_allclose(gp.bandwidth, [[40e9, 10e9, 10e9], [10e9, 40e9, 5e9], [10e9, 5e9, 40e9]],
                               rtol=1e-12)
    assert gp.changed_pairs == gp.affected_pairs == [(1, 2), (2, 1)]
    gt = json.loads((tmp_path / "ground_truth.json").read_text())
    assert gt["topology"] == "torus:3,1,1" and gt["coords"] == [[0, 0, 0], [1, 0, 0], [2, 0, 0]]
    x1 = next(link for link in gt["links"] if link["name"] == "x-1")
    assert x1["pairs"] == {"up": [[1, 2]], "down": [[2, 1]]}
    assert gt["altered_links"][0]["name"] == "x-1"


def test_several_nics_spread_a_node_s_peers_and_fail_together(tmp_path):
    spec = PlatformSpec(topology="torus:2,2,1", nics=2, degraded=[Degraded("node", 0, 0.5)],
                        varying=[Varying("node", 3)])
    gp = generate(spec, tmp_path)
    assert names(spec, 0, 1) == ["node-0.1", "x-0", "node-1.0"]  # leaves by NIC 1 % 2, arrives by 0 % 2
    assert names(spec, 0, 2) == ["node-0.0", "y-0", "node-2.0"]
    slow = [link.name for link in gp.links if "degraded" in link.reasons]
    assert slow == ["node-0.0", "node-0.1"]
    varying = [link for link in gp.links if "varying" in link.reasons]
    assert [link.name for link in varying] == ["node-3.0", "node-3.1"]
    assert varying[0].profile != varying[1].profile  # each NIC its own walk
    assert sorted(p.name for p in gp.profiles) == ["node-3.0.profile", "node-3.1.profile"]
    # the predictor: injection = both NICs, and each NIC a shared link over its own pairs
    net = PredictNetwork.from_ground_truth(tmp_path)
    assert net.inject[1] == pytest.approx(2 * spec.node_bw)
    nic = {link.name: link for link in net.links}["node-0.1:up"]
    assert sorted(map(tuple, nic.pairs.tolist())) == [(0, 1), (0, 3)]


def test_generation_is_byte_identical_and_reads_back(tmp_path):
    spec = PlatformSpec(topology="dragonfly:3,2,2", jitter_sigma=0.1, degraded=[Degraded("global", 1, 0.25)],
                        varying=[Varying("local", 2)], seed=5)
    first, second = generate(spec, tmp_path / "a"), generate(spec, tmp_path / "b")
    for name in ("platform.xml", "ground_truth.json", "hostfile", "profiles/local-2-0-1.profile"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    back = load_generated(tmp_path / "a")
    assert back.spec == spec
    np.testing.assert_array_equal(back.alpha, first.alpha)
    np.testing.assert_array_equal(back.bandwidth_min, second.bandwidth_min)
    np.testing.assert_array_equal(back.changed, first.changed)
    assert back.rack_of_node.tolist() == (np.arange(12) // 2).tolist()  # a router's nodes


def test_xml_routes_are_the_ground_truth_s(tmp_path):
    spec = PlatformSpec(topology="torus:3,2,2", nics=2)
    gp = generate(spec, tmp_path)
    zone = ET.parse(gp.platform_xml).getroot().find("zone")
    assert zone.get("routing") == "Full"
    links = {e.get("id") for e in zone.findall("link")}
    routes = zone.findall("route")
    n = spec.n_nodes
    assert len(routes) == n * (n - 1)
    for r in routes:
        i, j = int(r.get("src")[5:]), int(r.get("dst")[5:])
        ids = [c.get("id") for c in r.findall("link_ctn")]
        assert set(ids) <= links
        assert ids == names(spec, i, j)
        assert r.get("symmetrical") == "NO"


@pytest.mark.parametrize("kw, message", [
    (dict(topology="torus:2,2"), "torus needs 3 numbers"),
    (dict(topology="torus:2,0,2"), "at least 1"),
    (dict(topology="mesh:2,2,2"), "expected fat-tree, torus:X,Y,Z or dragonfly:G,R,N"),
    (dict(topology="torus:2,2,2", degraded=[("uplink", 0, 0.5)]), "must be one of node, x, y, z"),
    (dict(topology="torus:2,2,2", degraded=[("x", 1, 0.5)]), "along a ring of 2 only coordinate 0"),
    (dict(topology="torus:3,3,1", degraded=[("z", 0, 0.5)]), "must be one of node, x, y"),
    (dict(topology="dragonfly:3,2,2", degraded=[("global", 3, 0.5)]), "global index 3"),
    (dict(topology="torus:2,2,2", congested=[(0, 0.5)]), "degrade a link's bandwidth instead"),
    (dict(topology="torus:2,2,2", shuffle_racks=True), "shuffle_racks applies to the fat tree"),
    (dict(nics=2), "several NICs per node need a torus"),
    (dict(topology="dragonfly:2,2,2", nics=2), "a dragonfly node has one NIC"),
    (dict(topology="torus:1,1,1"), "fewer than 2 nodes"),
    (dict(topology="torus:16,16,8"), "more than 1024 nodes"),
    (dict(topology="torus:100000000,100000000,100000000"), "more than 1024 nodes"),
    (dict(topology="dragonfly:9" + "9" * 400 + ",2,2"), "more than 1024 nodes"),
    (dict(topology=5), "topology must be a string"),
    (dict(topology="torus:2,2,2", nics="2"), "nics must be an integer"),
])
def test_invalid_specs_are_refused(kw, message):
    with pytest.raises(UsageError, match=message):
        PlatformSpec(**kw)


# --- the command line ---------------------------------------------------------------------


def test_cli_writes_a_torus_with_faults(tmp_path):
    r = run_cli("sim", "platform", "--topology", "torus:3,2,2", "--nics", "2", "--degrade", "y:1:0.5:2",
                "--vary", "x:4", "--unreachable", "7", "-o", tmp_path)
    assert r.returncode == 0, r.stderr
    assert "platform with 12 nodes (torus:3,2,2, 2 NICs per node) written" in r.stdout
    gt = json.loads((tmp_path / "ground_truth.json").read_text())
    altered = {link["name"]: link["reasons"] for link in gt["altered_links"]}
    assert altered == {"node-7.0": ["unreachable"], "node-7.1": ["unreachable"], "y-1": ["degraded"],
                       "x-4": ["varying"]}
    assert (tmp_path / "profiles" / "x-4.profile").is_file()


@pytest.mark.parametrize("args, message", [
    (("--topology", "torus:2,2,2", "--racks", "2"), "--racks describes the fat tree"),
    (("--topology", "torus:2,2,2", "--default"), "--default describes the fat tree"),
    (("--topology", "torus:2,2,2", "--shuffle"), "--shuffle deals the fat tree's racks"),
    (("--topology", "fat-tree3:2,2,2", "--shared-nics"), "shared_nics applies to the two-level fat tree, not fat-tree3"),
    (("--topology", "torus:2,2,2", "--shared-nics"), "shared_nics applies to the two-level fat tree, not torus"),
    (("--node-synthetic", "pack:1 numa:2 core:2 pu:1", "--shared-nics"), "--shared-nics applies to the fat tree's node links"),
    (("--topology", "dragonfly:2,2"), "dragonfly needs 3 numbers"),
    (("--topology", "torus:2,2,2", "--degrade", "w:0:0.5"), "--degrade 'w:0:0.5': expected KIND:INDEX"),
])
def test_cli_refuses_bad_topology_options(tmp_path, args, message):
    r = run_cli("sim", "platform", *args, "-o", tmp_path / "p")
    assert r.returncode == 2
    assert_one_line_error(r, message)
    assert not (tmp_path / "p").exists()


# --- simulated probes ---------------------------------------------------------------------


def _check_probe(gen, model):
    n = len(gen.nodes)
    mask = ~np.eye(n, dtype=bool)
    expected_alpha = (gen.alpha + gen.alpha.T) / 2  # the fit sees both directions' latency
    np.testing.assert_allclose(model.alpha[mask], expected_alpha[mask], rtol=0.005)
    np.testing.assert_allclose(model.bandwidth[mask], gen.bandwidth[mask], rtol=1e-3)


def test_isolated_probe_of_a_torus_matches_the_ground_truth_and_is_deterministic(tmp_path):
    spec = PlatformSpec(topology="torus:2,2,2", cores=2, nics=2,
                        degraded=[Degraded("node", 1, 0.25), Degraded("z", 2, 0.5, 4.0)])
    gen = generate(spec, tmp_path / "plat")
    opts = ProbeOptions(mode="isolated", **FAST)
    model = probe_sim(gen.platform_xml, tmp_path / "a.rwm", opts, show_progress=False)
    _check_probe(gen, model)
    again = probe_sim(gen.platform_xml, tmp_path / "b.rwm", opts, show_progress=False)
    np.testing.assert_array_equal(again.alpha, model.alpha)
    np.testing.assert_array_equal(again.bandwidth, model.bandwidth)


def test_a_torus_has_no_racks_for_the_hierarchy_to_find(tmp_path):
    gen = generate(PlatformSpec(topology="torus:3,2,2", cores=1), tmp_path / "plat")
    model = probe_sim(gen.platform_xml, tmp_path / "m.rwm", ProbeOptions(mode="isolated", **FAST),
                      show_progress=False)
    _check_probe(gen, model)
    # Every node is one hop from its nearest neighbours: no level between node and all.
    levels, _ = Network.from_model(model).hierarchy()
    assert [len(set(level)) for level in levels] == [12, 1]


def test_isolated_probe_of_a_dragonfly_finds_its_routers(tmp_path):
    spec = PlatformSpec(topology="dragonfly:3,2,2", cores=1, degraded=[Degraded("global", 0, 0.5, 3.0)])
    gen = generate(spec, tmp_path / "plat")
    model = probe_sim(gen.platform_xml, tmp_path / "m.rwm", ProbeOptions(mode="isolated", **FAST),
                      show_progress=False)
    _check_probe(gen, model)
    levels, _ = Network.from_model(model).hierarchy()
    # a router's nodes form the first level, as a rack's do; groups are no level of their own:
    # a global link joins two routers as directly as a local one (docs/concepts/simulation.md)
    assert levels[1].tolist() == (np.arange(12) // 2).tolist()


# --- the predictor on the ground truth ----------------------------------------------------


@pytest.mark.parametrize("topology, nics", [("torus:2,2,2", 1), ("torus:2,2,2", 2), ("dragonfly:2,2,2", 1)])
def test_alltoall_predicted_from_the_ground_truth_matches_smpi(tmp_path, topology, nics):
    """The links' pairs in the ground truth make the predictor share router links and NICs as
    SimGrid does: a 16-rank all-to-all (2 per node, so shared links matter) within 3 %."""
    spec = PlatformSpec(topology=topology, nics=nics, cores=2, degraded=[Degraded("node", 1, 0.5, 3.0)])
    gp = generate(spec, tmp_path)
    net = PredictNetwork.from_ground_truth(tmp_path)
    node_of = placement(2, 8)
    for alg in ("pair", "ring"):
        r = run_benchmark("alltoall", ["--sizes", "256K,1M", "--iterations", "2", "--warmup", "1"],
                          sim=gp.platform_xml, ranks_per_node=2, nodes=8,
                          smpi_cfg=[f"smpi/alltoall:{SMPI_ALGORITHM['alltoall', alg]}"])
        for size, measured in zip(r.table.size, r.table.median_us):
            predicted = predict_collective(net, "alltoall", alg, int(size), node_of).span / US
            assert predicted == pytest.approx(measured, rel=0.03), (alg, size)


# --- what the probe found against what the platform hides ----------------------------------


def test_verdict_matches_a_slow_torus_link_through_the_routes_crossing_it(tmp_path):
    from rankwise.model.anomalies import find_slow_links
    from rankwise.sim.verdict import judge

    spec = PlatformSpec(topology="torus:3,2,2", cores=1, degraded=[Degraded("x", 4, 0.25), Degraded("node", 7, 1.0, 5.0)])
    gen = generate(spec, tmp_path / "plat")
    model = probe_sim(gen.platform_xml, tmp_path / "m.rwm", ProbeOptions(mode="isolated", **FAST),
                      show_progress=False)
    findings = find_slow_links(model)
    verdict = judge(gen, model, findings)
    assert {(v.link, v.found) for v in verdict.links} == {("x-4", True), ("node-7", True)}
    assert verdict.ok
    # x-4 is matched by its routes, not as a rack: the flagged pairs through it are real ones
    crossing = {(i, j) for i in range(12) for j in range(12) if i != j and 12 + 4 in route(spec, i, j)}
    assert findings.flagged() & crossing and findings.flagged() & crossing <= set(gen.changed_pairs)


@pytest.mark.parametrize("degraded", [(), (Degraded("global", 2, 0.25, 3.0), Degraded("node", 5, 0.25))],
                         ids=["healthy", "a-global-link-and-a-nic"])
def test_a_dragonfly_s_longer_routes_are_not_taken_for_slow_blocks(tmp_path, degraded):
    """Routers one, two or three hops apart differ in latency by design: a block as slow as a
    whole number of distance-class steps farther is explained (anomalies.distance_classes). A healthy
    dragonfly gives no finding (it gave 18 slow blocks), and the faults are found with no
    false block (16 came with them)."""
    from rankwise.model.anomalies import find_slow_links
    from rankwise.sim.verdict import judge

    gen = generate(PlatformSpec(topology="dragonfly:3,2,2", cores=1, degraded=list(degraded)), tmp_path / "plat")
    model = probe_sim(gen.platform_xml, tmp_path / "m.rwm", ProbeOptions(mode="isolated", sizes="8,64K,1M",
                                                                         repetitions=2, rounds=1),
                      show_progress=False)
    findings = find_slow_links(model)
    verdict = judge(gen, model, findings)
    assert verdict.false_blocks == [] and verdict.false_nodes == []
    assert all(v.found for v in verdict.links) and len(verdict.links) == len(degraded)
    if not degraded:
        assert findings.slow_blocks == [] and findings.slow_pairs == []


def test_synthetic_model_of_a_torus_with_two_nics_marks_the_degraded_node(tmp_path):
    from rankwise.sim.synthetic import synthetic_model

    spec = PlatformSpec(topology="torus:3,2,2", nics=2, degraded=[Degraded("node", 11, 0.25)])
    model = synthetic_model(spec, noise=0.0, slow_noise=0.05, seed=1)
    gen = generate(spec, tmp_path)
    mask = ~np.eye(12, dtype=bool)
    exact = np.isclose(model.bandwidth, gen.bandwidth)
    # only the degraded node's pairs carry the extra noise (its NICs are links 22 and 23, not 11)
    assert not exact[11][mask[11]].any() and exact[:11, :11][mask[:11, :11]].all()


def test_degrade_at_changes_every_nic_of_a_node_and_a_torus_link(tmp_path):
    r = run_cli("sim", "platform", "--topology", "torus:2,2,1", "--nics", "2", "--degrade", "node:0:0.5",
                "--degrade", "x:0:0.25:2", "--degrade-at", "0.001", "-o", tmp_path)
    assert r.returncode == 0, r.stderr
    gt = json.loads((tmp_path / "ground_truth.json").read_text())
    assert [(c["link"], sorted(set(c) & {"bandwidth", "latency"})) for c in gt["changes"]] == [
        ("node-0.0", ["bandwidth"]), ("node-0.1", ["bandwidth"]), ("x-0", ["bandwidth", "latency"])]
    links = {e.get("id"): e for e in ET.parse(tmp_path / "platform.xml").getroot().iter("link")}
    assert links["node-0.1"].get("bandwidth_file") == "profiles/node-0.1.bandwidth-at.profile"
    assert links["x-0"].get("latency_file") == "profiles/x-0.latency-at.profile"
    assert not gt["altered_links"]  # nothing altered before the change
