"""Three-level fat trees (`--topology fat-tree3:P,R,N`, sim/fat_tree3.py): routes up as far as
needed, racks dealt in shuffled order, faults on rack and pod uplinks, the SimGrid file's routes,
and a simulated probe measuring what the ground truth states."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest

from conftest import run_cli
from rankwise.util.errors import UsageError
from rankwise.measure.probe import ProbeOptions, probe_sim
from rankwise.sim.platform import Degraded, PlatformSpec, build_links, generate, load_generated, route

FAST = dict(sizes="8,1K,64K,1M", repetitions=2, rounds=2)


def names(spec: PlatformSpec, src: int, dst: int) -> list[str]:
    links = build_links(spec)
    return [links[k].name for k in route(spec, src, dst)]


def test_routes_go_up_as_far_as_needed():
    spec = PlatformSpec(topology="fat-tree3:3,2,4")  # nodes 0-7 in pod 0 (racks 0, 1), 8-15 pod 1 ...
    assert spec.n_nodes == 24 and spec.rack_of_node.tolist() == (np.arange(24) // 4).tolist()
    assert names(spec, 0, 3) == ["node-0", "node-3"]
    assert names(spec, 0, 5) == ["node-0", "up-0", "up-1", "node-5"]
    assert names(spec, 5, 17) == ["node-5", "up-1", "pod-0", "pod-2", "up-4", "node-17"]
    links = {link.name: link for link in build_links(PlatformSpec(topology="fat-tree3:3,2,4", oversubscription=2))}
    node_bw = links["node-0"].bandwidth
    assert links["up-5"].bandwidth == node_bw * 4 / 2 and links["pod-2"].bandwidth == node_bw * 8 / 2
    assert len(links) == 24 + 6 + 3


def test_shuffled_racks_are_dealt_by_seed(tmp_path):
    a = PlatformSpec(topology="fat-tree3:2,3,4", shuffle_racks=True, seed=3)
    rack = a.rack_of_node
    assert sorted(np.bincount(rack).tolist()) == [4] * 6 and rack.tolist() != (np.arange(24) // 4).tolist()
    assert PlatformSpec(topology="fat-tree3:2,3,4", shuffle_racks=True, seed=3).rack_of_node.tolist() == rack.tolist()
    assert PlatformSpec(topology="fat-tree3:2,3,4", shuffle_racks=True, seed=4).rack_of_node.tolist() != rack.tolist()
    i, j = (int(k) for k in np.flatnonzero(rack == rack[0])[:2])
    assert names(a, i, j) == [f"node-{i}", f"node-{j}"]  # rack mates: through their leaf only
    gp = generate(a, tmp_path)
    assert load_generated(tmp_path).rack_of_node.tolist() == rack.tolist()
    assert gp.spec.shape.behind("uplink", int(rack[0])) == tuple(int(k) for k in np.flatnonzero(rack == rack[0]))


def test_xml_routes_are_the_ground_truth_s(tmp_path):
    spec = PlatformSpec(topology="fat-tree3:2,2,3", shuffle_racks=True, seed=1,
                        degraded=[Degraded("pod", 1, 0.5, 2.0), Degraded("uplink", 3, 0.25)])
    gp = generate(spec, tmp_path)
    zone = ET.parse(gp.platform_xml).getroot().find("zone")
    routes = zone.findall("route")
    assert len(routes) == 12 * 11
    for r in routes:
        i, j = int(r.get("src")[5:]), int(r.get("dst")[5:])
        assert [c.get("id") for c in r.findall("link_ctn")] == names(spec, i, j)
    assert {link.name for link in gp.altered_links} == {"pod-1", "up-3"}


@pytest.mark.parametrize("kw, message", [
    (dict(topology="fat-tree3:2,2"), "fat-tree3 needs 3 numbers"),
    (dict(topology="fat-tree3:2,2,2", nics=2), "a fat-tree3 node has one NIC"),
    (dict(topology="fat-tree3:2,2,2", degraded=[("pod", 2, 0.5)]), "pod index 2"),
    (dict(topology="fat-tree3:2,2,2", degraded=[("x", 0, 0.5)]), "must be one of node, uplink, pod"),
    (dict(topology="fat-tree3:2,2,2", congested=[(0, 0.5)]), "degrade a link's bandwidth instead"),
])
def test_invalid_specs_are_refused(kw, message):
    with pytest.raises(UsageError, match=message):
        PlatformSpec(**kw)


def test_cli_writes_a_shuffled_three_level_tree(tmp_path):
    r = run_cli("sim", "platform", "--topology", "fat-tree3:2,2,2", "--shuffle", "--degrade", "pod:0:0.5:3",
                "-o", tmp_path / "p")
    assert r.returncode == 0, r.stderr
    gp = load_generated(tmp_path / "p")
    assert gp.spec.shuffle_racks and [link.name for link in gp.altered_links] == ["pod-0"]


def test_isolated_probe_matches_the_ground_truth(tmp_path):
    spec = PlatformSpec(topology="fat-tree3:2,2,2", cores=1, shuffle_racks=True, seed=2,
                        degraded=[Degraded("pod", 1, 0.25, 3.0), Degraded("node", 5, 0.5)])
    gen = generate(spec, tmp_path / "plat")
    model = probe_sim(gen.platform_xml, tmp_path / "m.rwm", ProbeOptions(mode="isolated", **FAST),
                      show_progress=False)
    mask = ~np.eye(8, dtype=bool)
    np.testing.assert_allclose(model.alpha[mask], ((gen.alpha + gen.alpha.T) / 2)[mask], rtol=0.005)
    np.testing.assert_allclose(model.bandwidth[mask], gen.bandwidth[mask], rtol=1e-3)
