"""`rankwise sim platform --node-synthetic` and `rankwise node probe --sim`: the intra-node probe
under SMPI on a node made of one host per NUMA domain, its figures against the platform's
ground truth, by level and by domain pair."""

from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import assert_one_line_error, run_cli

from rankwise.model.model import Model
from rankwise.model.node import LEVELS
from rankwise.sim.domains import load_domains

NODE = "pack:2 numa:2 core:4 pu:1"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    out = tmp_path_factory.mktemp("cluster")
    r = run_cli("sim", "platform", "-o", out / "platform", "--racks", "1", "--nodes-per-rack", "2",
                "--node-synthetic", NODE)
    assert r.returncode == 0, r.stderr
    assert "2 nodes of 4 domains (16 cores; 8 hosts)" in r.stdout
    r = run_cli("probe", "--sim", out / "platform" / "platform.xml", "--nodes", "2", "-o", out / "net.rwm",
                "--sizes", "8,1M", "--rounds", "1", "--repetitions", "1")
    assert r.returncode == 0, r.stderr
    return out


def test_the_node_probe_finds_each_level_of_the_simulated_node(cluster):
    dp = load_domains(cluster / "platform")
    r = run_cli("node", "probe", "--sim", cluster / "platform", "--node", "node-1", "--sizes", "8,64K,1M",
                "--rounds", "3", "--model", cluster / "net.rwm", "-o", cluster / "node.rwm")
    assert r.returncode == 0, r.stderr
    assert "8 ranks on node-1's domains" in r.stdout and "node-1-d3: core 13" in r.stdout
    assert re.search(r"probe cost \d+\.\d\d s wall, \d+\.\d+ ms simulated", r.stdout)
    m = Model.load(cluster / "node.rwm")
    for level, (alpha, bandwidth) in dp.level_figures().items():
        k = LEVELS.index(level)
        assert m.node_alpha[k] == pytest.approx(alpha, rel=0.01, abs=1e-9), level
        assert 1 / m.node_beta[k] == pytest.approx(bandwidth, rel=0.01), level
    assert np.isnan(m.node_alpha[LEVELS.index("cache")])  # no cache shared below the domain
    # by domain pair: 0-1 and 2-3 share a package, 0-2 does not
    cells = [line.replace("│", " ").split() for line in r.stdout.splitlines() if re.match(r"│ \d-\d ", line)]
    rows = {c[0]: c[1] for c in cells}
    assert rows == {"0-0": "domain", "0-1": "package", "0-2": "node", "0-3": "node", "1-1": "domain",
                    "1-2": "node", "1-3": "node", "2-2": "domain", "2-3": "package", "3-3": "domain"}


def test_a_node_the_platform_lacks_is_a_one_line_error(cluster):
    r = run_cli("node", "probe", "--sim", cluster / "platform", "--node", "node-9")
    assert_one_line_error(r, "'node-9' is no node of the platform")


def test_more_ranks_per_domain_than_cores(cluster):
    r = run_cli("node", "probe", "--sim", cluster / "platform", "--per-domain", "5")
    assert_one_line_error(r, "--per-domain 5: a domain of this node has 4 cores")


def test_sim_takes_the_node_from_the_platform(cluster):
    r = run_cli("node", "probe", "--sim", cluster / "platform", "--synthetic", NODE)
    assert r.returncode == 2
    assert_one_line_error(r, "--sim reads the node from the platform")


def test_a_plain_platform_has_no_domains(tmp_path):
    assert run_cli("sim", "platform", "-o", tmp_path, "--racks", "1", "--nodes-per-rack", "2").returncode == 0
    r = run_cli("node", "probe", "--sim", tmp_path)
    assert_one_line_error(r, "not a rankwise-domains/1 file")


@pytest.mark.parametrize("extra, text", [
    (["--cores", "4"], "drop --cores"),
    (["--topology", "torus:2,2,1"], "--topology"),
    (["--shuffle"], "drop --shuffle"),
])
def test_options_nodes_with_domains_do_not_take(tmp_path, extra, text):
    r = run_cli("sim", "platform", "-o", tmp_path / "p", "--node-synthetic", NODE, *extra)
    assert r.returncode == 2
    assert_one_line_error(r, text)
    assert not (tmp_path / "p").exists()


def test_a_node_hwloc_refuses(tmp_path):
    r = run_cli("sim", "platform", "-o", tmp_path / "p", "--node-synthetic", "pack:2 kiwi:2")
    assert r.returncode == 2
    assert_one_line_error(r, "synthetic topology 'pack:2 kiwi:2' is not valid")


def test_rankwise_probe_measures_the_network_by_node_and_one_node_inside(cluster):
    """`rankwise probe --sim` on a platform with domains: the model's nodes are the nodes (not
    their domain hosts), and the node-cost lines come from one node standing for all (they are
    built alike)."""
    dp = load_domains(cluster / "platform")
    r = run_cli("probe", "--sim", cluster / "platform" / "platform.xml", "-o", cluster / "whole.rwm",
                "--sizes", "8,1M", "--rounds", "1", "--repetitions", "1")
    assert r.returncode == 0, r.stderr
    assert "inside the node: node-0 for 2 node(s) built alike" in r.stdout
    m = Model.load(cluster / "whole.rwm")
    assert m.names == ["node-0", "node-1"] and m.ranks_per_node.tolist() == [2, 2]  # as probed
    for level, (alpha, bandwidth) in dp.level_figures().items():
        k = LEVELS.index(level)
        assert m.node_alpha[k] == pytest.approx(alpha, rel=0.01, abs=1e-9), level
        assert 1 / m.node_beta[k] == pytest.approx(bandwidth, rel=0.01), level
    # the network between nodes: NIC + domain and package links on both sides (one rack)
    h = dp.hosts.index
    assert m.alpha[0, 1] == pytest.approx(dp.alpha[h("node-0-d0"), h("node-1-d0")], rel=0.05)
    r = run_cli("probe", "--sim", cluster / "platform" / "platform.xml", "-o", cluster / "bare.rwm",
                "--sizes", "8,1M", "--rounds", "1", "--repetitions", "1", "--no-intra")
    assert r.returncode == 0, r.stderr
    assert np.all(np.isnan(Model.load(cluster / "bare.rwm").node_alpha))


def test_a_platform_with_domains_is_probed_whole(cluster):
    r = run_cli("probe", "--sim", cluster / "platform" / "platform.xml", "-o", cluster / "x.rwm",
                "--pairs", "node-0:node-1")
    assert r.returncode == 2
    assert_one_line_error(r, "a platform with domains is probed whole")
    assert not (cluster / "x.rwm").exists()


@pytest.mark.parametrize("args, text", [
    (["--per-domain", "2"], "--per-domain applies to a simulated cluster"),
    (["--node", "node-0"], "--node applies to a simulated cluster"),
])
def test_simulated_options_need_sim(args, text):
    r = run_cli("node", "probe", "--synthetic", NODE, *args)
    assert r.returncode == 2
    assert_one_line_error(r, text)


def test_sim_runs_no_launcher(cluster):
    r = run_cli("node", "probe", "--sim", cluster / "platform", "--launcher", "mpirun -np 4")
    assert r.returncode == 2
    assert_one_line_error(r, "drop --launcher")


def test_the_default_platform_varies_a_link_domains_do_not_take(tmp_path):
    r = run_cli("sim", "platform", "-o", tmp_path / "p", "--default", "--node-synthetic", NODE)
    assert r.returncode == 2
    assert_one_line_error(r, "nor --default")
