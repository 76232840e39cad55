"""The simulated cluster with memory domains (rankwise.sim.domains): one SimGrid host per NUMA
domain, links inside the node, the fat tree between nodes; its ground truth, what SMPI measures
on it, and the placement inside the node paying off there."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from rankwise.util.errors import RankwiseError, UsageError
from rankwise.model.node import NodeTopology
from rankwise.traffic.patterns import generate
from rankwise.cluster.benchmark_programs import run_benchmark
from rankwise.sim.domains import (DomainSpec, block_cores, generate_domains, hosts_of_cores, load_domains)
from rankwise.sim.platform import Degraded, PlatformSpec
from rankwise.sim.platform_file import read_platform

NODE = "pack:2 numa:2 core:4 pu:1"  # 16 cores, 4 domains of 4, 2 packages
US = 1e-6


def spec(**kw) -> DomainSpec:
    net = PlatformSpec(racks=2, nodes_per_rack=1, node_bw=10e9, node_lat=1 * US, uplink_lat=2 * US,
                       loopback_bw=40e9, loopback_lat=0.25 * US, degraded=kw.pop("degraded", ()))
    return DomainSpec(network=net, node=NODE, domain_bw=20e9, domain_lat=0.1 * US, package_bw=16e9,
                      package_lat=0.3 * US, **kw)


@pytest.fixture(scope="module")
def platform(tmp_path_factory):
    return generate_domains(spec(), tmp_path_factory.mktemp("domains"))


def test_hosts_are_the_domains_of_each_node_with_their_cores(platform):
    hosts = read_platform(platform.platform_xml)
    assert hosts == [(f"node-{i}-d{k}", 4) for i in range(2) for k in range(4)]
    assert platform.hostfile.read_text().split() == [h for h, _ in hosts]
    assert (platform.out_dir / "nodes.hostfile").read_text() == "node-0 slots=16\nnode-1 slots=16\n"
    topo = NodeTopology.load(synthetic=NODE)
    assert platform.domain_of_core.tolist() == topo.domain_of.tolist()
    assert platform.package_of_domain.tolist() == [0, 0, 1, 1]


def test_ground_truth_by_level_is_the_sum_of_the_links_crossed(platform):
    h = platform.hosts.index
    a, bw = platform.alpha, platform.bandwidth
    # same domain: SimGrid's loopback
    assert a[h("node-0-d1"), h("node-0-d1")] == pytest.approx(0.25 * US) and bw[0, 0] == 40e9
    # two domains of one package: both domain links
    assert a[h("node-0-d0"), h("node-0-d1")] == pytest.approx(0.2 * US)
    assert bw[h("node-0-d0"), h("node-0-d1")] == 20e9
    # two packages: domain, package, package, domain
    assert a[h("node-0-d1"), h("node-0-d2")] == pytest.approx(0.8 * US)
    assert bw[h("node-0-d1"), h("node-0-d2")] == 16e9
    # two nodes in two racks: + NIC, uplink, uplink, NIC (uplink 10 GB/s x 1 node)
    assert a[h("node-0-d0"), h("node-1-d3")] == pytest.approx(0.8 * US + 2 * US + 4 * US)
    assert bw[h("node-0-d0"), h("node-1-d3")] == 10e9
    names = ("cache", "domain", "package", "node", "network")
    assert names[platform.level[h("node-0-d2"), h("node-0-d3")]] == "package"
    assert names[platform.level[h("node-0-d0"), h("node-0-d3")]] == "node"
    assert names[platform.level[h("node-1-d0"), h("node-0-d0")]] == "network"
    assert np.array_equal(platform.alpha, platform.alpha.T)


def test_ground_truth_reads_back(platform):
    back = load_domains(platform.out_dir)
    assert back.hosts == platform.hosts and back.spec == platform.spec
    for key in ("level", "alpha", "bandwidth", "cores_of_domain", "domain_of_core"):
        assert np.array_equal(getattr(back, key), getattr(platform, key)), key
    gt = json.loads(platform.ground_truth.read_text())
    assert gt["level_figures"]["node"] == pytest.approx([0.8 * US, 16e9])


def test_a_degraded_nic_slows_the_network_not_the_node(tmp_path):
    dp = generate_domains(spec(degraded=[Degraded("node", 1, bw_factor=0.25)]), tmp_path)
    h = dp.hosts.index
    assert dp.bandwidth[h("node-0-d0"), h("node-1-d0")] == 2.5e9
    assert dp.bandwidth[h("node-1-d0"), h("node-1-d3")] == 16e9
    root = ET.parse(dp.platform_xml).getroot()
    assert root.find(".//link[@id='node-1']").get("bandwidth") == "2500000000Bps"


def test_bad_specs_are_usage_errors(tmp_path):
    with pytest.raises(UsageError, match="not valid"):
        generate_domains(DomainSpec(node="pack:2 kiwi:2"), tmp_path)
    with pytest.raises(UsageError, match="fat tree"):
        DomainSpec(network=PlatformSpec(topology="torus:2,2,1"))
    with pytest.raises(UsageError, match="domain_bw"):
        DomainSpec(domain_bw=0)
    with pytest.raises(UsageError, match="--vary"):
        generate_domains(DomainSpec(network=PlatformSpec(racks=1, nodes_per_rack=2, varying=[("node", 0)])), tmp_path)
    assert not (tmp_path / "ground_truth.json").exists()


def test_a_plain_platform_is_not_one_with_domains(tmp_path):
    from rankwise.sim.platform import generate

    generate(PlatformSpec(racks=1, nodes_per_rack=2), tmp_path)
    with pytest.raises(RankwiseError, match="ground_truth.json: not a rankwise-domains/1 file"):
        load_domains(tmp_path)


def test_block_placement_fills_the_domains_in_order(platform):
    node, core = block_cores(20, platform.cores_per_node)
    hosts = hosts_of_cores(platform, platform.nodes, node, core)
    assert hosts[:16] == [f"node-0-d{k // 4}" for k in range(16)]
    assert hosts[16:] == ["node-1-d0"] * 4
    with pytest.raises(RankwiseError, match="rank 1 is placed on core 16"):
        hosts_of_cores(platform, platform.nodes, [0, 0], [0, 16])
    with pytest.raises(RankwiseError, match="'n9'"):
        hosts_of_cores(platform, ["n9"], [0], [0])


def test_smpi_times_each_level_as_the_ground_truth_says(platform):
    """One message of 1 MiB each way (groups of 2, MPI_Alltoallv): alpha + bytes / bandwidth."""
    h = platform.hosts.index
    for a, b in (("node-0-d1", "node-0-d1"), ("node-0-d0", "node-0-d1"), ("node-0-d1", "node-0-d2"),
                 ("node-0-d0", "node-1-d3")):
        r = run_benchmark("groups", ["--groups", "1", "--per-group", "2", "--sizes", "1M", "--iterations", "2",
                                     "--no-shuffle"], sim=platform.platform_xml, hosts=[a, b])
        expected = platform.alpha[h(a), h(b)] + (1 << 20) / platform.bandwidth[h(a), h(b)]
        assert r.table.median_us[0] * US == pytest.approx(expected, rel=0.02), (a, b)


def test_placing_a_stencil_on_the_domains_beats_block_on_one_node(tmp_path):
    """A 2x2x4 halo exchange (26 neighbours) on one node: rw_node_place keeps the heavy pairs in a
    domain and off the package link; block puts a z-line of 4 in each domain."""
    dp = generate_domains(DomainSpec(network=PlatformSpec(racks=1, nodes_per_rack=1), node=NODE), tmp_path)
    matrix = generate("stencil3d:grid=2x2x4,bytes=64K,mode=1d")
    topo = NodeTopology.load(synthetic=NODE)
    ranks = np.arange(16)
    block = hosts_of_cores(dp, dp.nodes, *block_cores(16, 16))
    placed = hosts_of_cores(dp, dp.nodes, np.zeros(16, int), topo.place(matrix, ranks))
    args = ["--grid", "2x2x4", "--mode", "1d", "--sizes", "64K", "--iterations", "2"]
    t_block = run_benchmark("stencil", args, sim=dp.platform_xml, hosts=block)["1d"].median_us[0]
    t_placed = run_benchmark("stencil", args, sim=dp.platform_xml, hosts=placed)["1d"].median_us[0]
    assert t_block / t_placed >= 1.2
