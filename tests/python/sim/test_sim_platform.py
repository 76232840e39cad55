"""Simulated-cluster platform: generator, ground truth, platform/hostfile readers, SMPI run."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from rankwise.util.errors import RankwiseError
from rankwise.sim.platform import (
    Congested,
    Degraded,
    PlatformSpec,
    Varying,
    build_links,
    default_spec,
    generate,
    load_generated,
    route,
)
from rankwise.sim.platform_file import MAX_RADICAL_HOSTS, hostfile_for, parse_radical, read_platform
from rankwise.cluster.hostfile import read_hostfile, write_hostfile

US = 1e-6


def tiny_spec(**kw) -> PlatformSpec:
    """2 racks x 2 nodes; node 1 degraded (bw/2, lat x3), uplink 1 congested to 2.5 GB/s."""
    args = dict(
        racks=2,
        nodes_per_rack=2,
        cores=2,
        node_bw=10e9,
        node_lat=1 * US,
        oversubscription=2.0,  # uplink = 10e9 * 2 / 2 = 10 GB/s
        uplink_lat=2 * US,
        loopback_bw=40e9,
        loopback_lat=0.5 * US,
        degraded=[("node", 1, 0.5, 3.0)],
        congested=[(1, 0.25)],
        seed=7,
    )
    args.update(kw)
    return PlatformSpec(**args)


# --- ground truth ---------------------------------------------------------------------------


def test_tiny_platform_ground_truth_matches_hand_computation(tmp_path):
    gp = generate(tiny_spec(), tmp_path)
    a, b = 1 * US, 3 * US  # node link latency: normal, degraded node 1
    u = 2 * US
    lb = 0.5 * US
    expected_alpha = [
        [lb, a + b, a + u + u + a, a + u + u + a],
        [b + a, lb, b + u + u + a, b + u + u + a],
        [a + u + u + a, a + u + u + b, lb, a + a],
        [a + u + u + a, a + u + u + b, a + a, lb],
    ]
    g, h, c = 10e9, 5e9, 2.5e9  # normal node, degraded node 1, congested uplink 1
    expected_bw = [
        [40e9, h, c, c],
        [h, 40e9, c, c],
        [c, c, 40e9, g],
        [c, c, g, 40e9],
    ]
    np.testing.assert_allclose(gp.alpha, expected_alpha, rtol=1e-12)
    np.testing.assert_allclose(gp.bandwidth, expected_bw, rtol=1e-12)
    np.testing.assert_array_equal(gp.bandwidth_min, gp.bandwidth)  # nothing varies

    gt = json.loads((tmp_path / "ground_truth.json").read_text())
    assert gt["nodes"] == ["node-0", "node-1", "node-2", "node-3"]
    assert gt["cores"] == [2, 2, 2, 2]
    assert gt["rack_of_node"] == [0, 0, 1, 1]
    np.testing.assert_array_equal(np.array(gt["alpha"]), gp.alpha)
    np.testing.assert_array_equal(np.array(gt["bandwidth"]), gp.bandwidth)
    altered = {d["name"]: d for d in gt["altered_links"]}
    assert set(altered) == {"node-1", "up-1"}
    assert altered["node-1"]["reasons"] == ["degraded"]
    assert altered["node-1"]["nominal"] == {"bandwidth": 10e9, "latency": 1 * US}
    assert altered["node-1"]["configured"]["bandwidth"] == 5e9
    assert altered["node-1"]["configured"]["latency"] == pytest.approx(3 * US, rel=1e-12)
    assert altered["up-1"]["reasons"] == ["congested"]
    assert altered["up-1"]["configured"]["bandwidth"] == 2.5e9
    # Every pair touches node 1 or crosses up-1, except the pair inside rack 1.
    off_diagonal = {(i, j) for i in range(4) for j in range(4) if i != j}
    assert {tuple(p) for p in gt["affected_pairs"]} == off_diagonal - {(2, 3), (3, 2)}
    assert gt["spec"]["degraded"] == [{"kind": "node", "index": 1, "bw_factor": 0.5, "lat_factor": 3.0}]
    assert (tmp_path / "hostfile").read_text() == "node-0\nnode-1\nnode-2\nnode-3\n"


def test_ground_truth_equals_route_by_route_computation(tmp_path):
    spec = PlatformSpec(
        racks=3,
        nodes_per_rack=3,
        jitter_sigma=0.1,
        degraded=[Degraded("uplink", 2, 0.5, 2.0)],
        varying=[Varying("node", 4, period=0.02, steps=5, low=0.5)],
        unreachable=[8],
    )
    links = build_links(spec)
    gp = generate(spec, tmp_path)
    for i in range(spec.n_nodes):
        for j in range(spec.n_nodes):
            ids = route(spec, i, j)
            if not ids:
                assert gp.alpha[i, j] == spec.loopback_lat and gp.bandwidth[i, j] == spec.loopback_bw
                continue
            assert gp.alpha[i, j] == pytest.approx(sum(links[k].latency for k in ids), rel=1e-12)
            assert gp.bandwidth[i, j] == min(links[k].bandwidth for k in ids)
            assert gp.bandwidth_min[i, j] == min(links[k].bandwidth_min for k in ids)
            assert gp.affected[i, j] == any(links[k].reasons for k in ids)
    assert gp.alpha[0, 8] > 1000  # unreachable node 8
    assert gp.bandwidth_min[0, 4] < gp.bandwidth[0, 4]  # through the varying link


def test_affected_and_changed_pairs(tmp_path):
    # Uplink 0 congested to half: 4 nodes * 10 GB/s / 2 = 20 GB/s, still above a node link,
    # so its pairs are affected (route holds it) but an isolated ping-pong sees no change.
    spec = PlatformSpec(
        racks=3,
        nodes_per_rack=4,
        node_bw=10e9,
        congested=[Congested(0, 0.5)],
        degraded=[Degraded("node", 9, bw_factor=0.1)],
    )
    gp = generate(spec, tmp_path)
    rack = gp.rack_of_node
    n = spec.n_nodes
    expected_affected = {
        (i, j)
        for i in range(n)
        for j in range(n)
        if i != j and (9 in (i, j) or (rack[i] != rack[j] and 0 in (rack[i], rack[j])))
    }
    expected_changed = {(i, j) for i in range(n) for j in range(n) if i != j and 9 in (i, j)}
    assert set(gp.affected_pairs) == expected_affected
    assert set(gp.changed_pairs) == expected_changed
    gt = json.loads(gp.ground_truth.read_text())
    assert {tuple(p) for p in gt["changed_pairs"]} == expected_changed


def test_jitter_makes_links_differ_but_not_altered(tmp_path):
    gp = generate(PlatformSpec(racks=2, nodes_per_rack=4, jitter_sigma=0.05), tmp_path)
    node_bw = [link.bandwidth for link in gp.links if link.kind == "node"]
    assert len(set(node_bw)) == len(node_bw)
    assert all(abs(bw / 12.5e9 - 1) < 0.3 for bw in node_bw)
    assert gp.affected_pairs == [] and gp.changed_pairs == []
    flat = generate(PlatformSpec(racks=2, nodes_per_rack=4), tmp_path / "flat")
    assert len({link.bandwidth for link in flat.links if link.kind == "node"}) == 1


def test_unreachable_node_gets_huge_latency(tmp_path):
    gp = generate(PlatformSpec(racks=1, nodes_per_rack=3, unreachable=[2], unreachable_lat=1000.0), tmp_path)
    link = gp.links[2]
    assert link.latency == 1000.0 and link.reasons == ("unreachable",)
    assert gp.alpha[0, 2] == pytest.approx(1000.0 + 1 * US)
    assert gp.alpha[0, 1] == pytest.approx(2 * US)


# --- files ------------------------------------------------------------------------------------


def _xml_number(text: str, unit: str) -> float:
    assert text.endswith(unit), text
    return float(text[: -len(unit)])


def test_xml_is_written_from_the_link_table(tmp_path):
    spec = dataclasses.replace(default_spec(), jitter_sigma=0.02)
    gp = generate(spec, tmp_path)
    root = ET.parse(gp.platform_xml).getroot()
    assert root.tag == "platform" and root.get("version") == "4.1"
    props = {p.get("id"): p.get("value") for p in root.find("config")}
    assert float(props["network/loopback-bw"]) == spec.loopback_bw
    assert float(props["network/loopback-lat"]) == spec.loopback_lat
    assert props["network/crosstraffic"] == "0"
    assert "network/model" not in props  # smpirun's command line would override it anyway
    zone = root.find("zone")
    assert zone.get("routing") in ("Dijkstra", "DijkstraCache")
    xml_links = {link.get("id"): link for link in zone.iter("link")}
    assert len(xml_links) == len(gp.links)
    for link in gp.links:
        x = xml_links[link.name]
        assert _xml_number(x.get("bandwidth"), "Bps") == link.bandwidth
        assert _xml_number(x.get("latency"), "s") == link.latency
        assert x.get("sharing_policy") == "SPLITDUPLEX"
        assert x.get("bandwidth_file") == link.profile_file
    routes = [(r.get("src"), r.get("dst"), r.find("link_ctn").get("id")) for r in zone.iter("route")]
    assert ("node-17", "leaf-1", "node-17") in routes and ("leaf-3", "spine", "up-3") in routes
    assert len(routes) == spec.n_nodes + spec.racks
    assert read_platform(gp.platform_xml) == [(f"node-{i}", 4) for i in range(64)]


def test_varying_link_profile(tmp_path):
    spec = PlatformSpec(racks=2, nodes_per_rack=2, varying=[Varying("uplink", 1, period=0.05, steps=5, low=0.3)])
    gp = generate(spec, tmp_path)
    (profile,) = gp.profiles
    assert profile == tmp_path / "profiles" / "up-1.profile"
    lines = [ln for ln in profile.read_text().splitlines() if not ln.startswith("#")]
    steps = [tuple(map(float, ln.split())) for ln in lines[:-1]]
    uplink = spec.uplink_bw
    assert steps[0] == (0.0, uplink)  # the XML value holds at time 0
    assert [t for t, _ in steps] == [0.0, 0.01, 0.02, 0.03, 0.04]
    assert all(0.3 * uplink <= v <= uplink for _, v in steps)
    assert lines[-1] == "LOOPAFTER 0.01"  # last step at 0.04 + 0.01 = period
    link = gp.links[-1]
    assert link.bandwidth_min == min(v for _, v in steps)
    assert 'bandwidth_file="profiles/up-1.profile"' in gp.platform_xml.read_text()


def test_same_spec_same_bytes_and_seed_matters(tmp_path):
    spec = dataclasses.replace(default_spec(), jitter_sigma=0.03, unreachable=[60])
    a, b = generate(spec, tmp_path / "a"), generate(spec, tmp_path / "b")
    files = sorted(p.relative_to(a.out_dir) for p in a.out_dir.rglob("*") if p.is_file())
    assert Path("profiles/node-30.profile") in files
    assert files == sorted(p.relative_to(b.out_dir) for p in b.out_dir.rglob("*") if p.is_file())
    for rel in files:
        assert (a.out_dir / rel).read_bytes() == (b.out_dir / rel).read_bytes(), rel
    c = generate(dataclasses.replace(spec, seed=2), tmp_path / "c")
    assert c.platform_xml.read_bytes() != a.platform_xml.read_bytes()
    assert c.profiles[0].read_bytes() != a.profiles[0].read_bytes()


def test_regenerating_removes_stale_profiles(tmp_path):
    generate(PlatformSpec(racks=1, nodes_per_rack=2, varying=[("node", 0)]), tmp_path)
    assert (tmp_path / "profiles" / "node-0.profile").exists()
    gp = generate(PlatformSpec(racks=1, nodes_per_rack=2, varying=[("node", 1)]), tmp_path)
    assert sorted(p.name for p in (tmp_path / "profiles").iterdir()) == ["node-1.profile"]
    assert not any(".tmp" in p.name for p in tmp_path.rglob("*"))
    assert gp.profiles == [tmp_path / "profiles" / "node-1.profile"]


def _corruptions(gt):
    """Hand edits of a ground truth: each top-level entry removed, then
    replaced by a value of the wrong type, and a link's and the spec's keys."""
    for key in gt:
        if key not in ("format", "units", "loopback", "altered_links"):  # those three only inform
            yield f"no {key}", {k: v for k, v in gt.items() if k != key}
            yield f"{key} a string", {**gt, key: "x"}
            yield f"{key} null", {**gt, key: None}
    link = dict(gt["links"][0])
    del link["kind"]
    yield "a link without kind", {**gt, "links": [link, *gt["links"][1:]]}
    yield "a spec without racks", {**gt, "spec": {k: v for k, v in gt["spec"].items() if k != "racks"}}
    yield "a list", [gt]


def test_a_hand_edited_ground_truth_is_one_error_naming_the_file(tmp_path):
    generate(PlatformSpec(racks=1, nodes_per_rack=2, varying=[("node", 1)]), tmp_path)
    path = tmp_path / "ground_truth.json"
    gt = json.loads(path.read_text())
    for what, edited in _corruptions(gt):
        path.write_text(json.dumps(edited))
        with pytest.raises(RankwiseError) as e:
            load_generated(tmp_path)
        assert str(path) in str(e.value) and "\n" not in str(e.value), what


def test_load_generated_round_trip(tmp_path):
    spec = default_spec()
    gp = generate(spec, tmp_path)
    back = load_generated(tmp_path)
    assert back.spec == spec
    assert back.links == gp.links
    assert back.nodes == gp.nodes
    for name in ("alpha", "bandwidth", "bandwidth_min", "affected", "changed", "cores", "rack_of_node"):
        np.testing.assert_array_equal(getattr(back, name), getattr(gp, name), err_msg=name)
    assert PlatformSpec.from_dict(json.loads(json.dumps(spec.to_dict()))) == spec


def test_default_spec():
    spec = default_spec()
    assert (spec.n_nodes, spec.racks, spec.nodes_per_rack, spec.cores, spec.seed) == (64, 4, 16, 4, 1)
    links = {link.name: link for link in build_links(spec) if link.reasons}
    assert set(links) == {"node-5", "node-22", "node-41", "node-30", "up-3"}
    assert links["up-3"].bandwidth == spec.node_bw * 16 / 4
    assert links["node-5"].bandwidth == spec.node_bw / 4
    assert links["node-22"].latency == pytest.approx(5 * spec.node_lat)
    assert links["node-41"].reasons == ("degraded",)
    degraded_racks = {link.index // 16 for link in links.values() if link.reasons == ("degraded",)}
    assert degraded_racks == {0, 1, 2}  # spread over racks; rack 3 has the congested uplink
    assert links["node-30"].profile


@pytest.mark.parametrize(
    "kw, words",
    [
        (dict(racks=0), "racks"),
        (dict(degraded=[("switch", 0, 0.5, 1.0)]), "kind"),
        (dict(degraded=[("node", 64, 0.5, 1.0)]), "out of range"),
        (dict(congested=[(4, 0.5)]), "out of range"),
        (dict(congested=[(0, 0.0)]), "positive"),
        (dict(varying=[("node", 1), ("node", 1)]), "twice"),
        (dict(varying=[Varying("node", 1, low=1.5)]), "low"),
        (dict(unreachable=[-1]), "out of range"),
        (dict(node_bw=-1.0), "node_bw"),
        (dict(node_lat="1us"), "node_lat must be a number"),
        (dict(cores=2.5), "cores must be an integer"),
        (dict(shuffle_racks="yes"), "shuffle_racks must be true or false"),
        (dict(degraded=[("node", 1, "half")]), "factors must be positive numbers"),
        (dict(degraded=[("node",)]), r"degraded item \('node',\) is not \(kind, index, bw_factor, lat_factor\)"),
    ],
)
def test_invalid_spec(kw, words):
    with pytest.raises(RankwiseError, match=words):
        PlatformSpec(**kw)


def test_unknown_spec_field():
    with pytest.raises(RankwiseError, match="colour"):
        PlatformSpec.from_dict({"colour": "blue"})


# --- hostfiles ------------------------------------------------------------------------------


def test_hostfile_for(tmp_path):
    nodes = [("node-0", 4), ("node-1", 4)]
    assert hostfile_for(nodes, 2, tmp_path / "hf") == ["node-0", "node-0", "node-1", "node-1"]
    assert (tmp_path / "hf").read_text() == "node-0\nnode-0\nnode-1\nnode-1\n"
    with pytest.raises(RankwiseError, match="node-1' has 2 core"):
        hostfile_for([("node-0", 4), ("node-1", 2)], 3)
    with pytest.raises(RankwiseError, match="at least 1"):
        hostfile_for(nodes, 0)


def test_write_hostfile(tmp_path):
    write_hostfile(tmp_path / "sub" / "hf", ["a", "b"])
    assert (tmp_path / "sub" / "hf").read_text() == "a\nb\n"
    assert [p.name for p in (tmp_path / "sub").iterdir()] == ["hf"]
    with pytest.raises(RankwiseError, match="host name"):
        write_hostfile(tmp_path / "hf2", ["a b"])
    assert not (tmp_path / "hf2").exists()


def test_read_hostfile_forms(tmp_path):
    path = tmp_path / "hosts"
    path.write_text(
        "# cluster A\n"
        "alpha\n"
        "\n"
        "beta:4\n"
        "gamma slots=8   # big node\n"
        "delta slots=2 max_slots=4\n"
        "  epsilon  \n"
    )
    assert read_hostfile(path) == [("alpha", 1), ("beta", 4), ("gamma", 8), ("delta", 2), ("epsilon", 1)]


def test_read_hostfile_repeated_bare_lines_add_slots(tmp_path):
    path = tmp_path / "hosts"
    path.write_text("a\nb\na\na\n")
    assert read_hostfile(path) == [("a", 3), ("b", 1)]


@pytest.mark.parametrize(
    "text, line, message",
    [
        ("a\nb:x\n", 2, "slot count 'x' is not an integer"),
        ("a\nb:0\n", 2, "slot count must be positive, got 0"),
        ("a slots=-2\n", 1, "slots must be positive, got -2"),
        ("a slots=1_0\n", 1, "slots '1_0' is not an integer"),
        ("a\n\nb cpus=3\n", 3, "unexpected 'cpus=3'"),
        ("a slots=4 max_slots=2\n", 1, "max_slots=2 is below slots=4"),
        ("a:2 slots=2\n", 1, "slots given twice"),
        ("a slots=2\n# c\na\n", 3, "duplicate host 'a' (first listed on line 1)"),
        ("a\na:2\n", 2, "duplicate host 'a' (first listed on line 1)"),
        (":3\n", 1, "missing host name"),
    ],
)
def test_read_hostfile_errors(tmp_path, text, line, message):
    path = tmp_path / "hosts"
    path.write_text(text)
    with pytest.raises(RankwiseError) as e:
        read_hostfile(path)
    assert str(e.value).startswith(f"{path}:{line}: ")
    assert message in str(e.value)


def test_read_hostfile_whole_file_errors(tmp_path):
    with pytest.raises(RankwiseError, match=rf"^{tmp_path}/missing: cannot read hostfile"):
        read_hostfile(tmp_path / "missing")
    (tmp_path / "empty").write_text("# nothing\n\n")
    with pytest.raises(RankwiseError, match=rf"^{tmp_path}/empty: no host"):
        read_hostfile(tmp_path / "empty")


# --- platform files -------------------------------------------------------------------------

NESTED = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="world" routing="Full">
    <zone id="a" routing="Full">
      <host id="login" speed="1Gf"/>
      <host id="big" speed="1Gf" core="32"/>
    </zone>
    <cluster id="c" prefix="c-" suffix=".lan" radical="0-3,8,10-11" speed="1Gf" core="4" bw="1GBps" lat="1us"/>
    <cabinet id="cab" prefix="k" suffix="" radical="1-2" speed="1Gf" bw="1GBps" lat="1us"/>
  </zone>
</platform>
"""


def test_read_platform_nested_zones_and_clusters(tmp_path):
    path = tmp_path / "p.xml"
    path.write_text(NESTED)
    cluster = [f"c-{r}.lan" for r in (0, 1, 2, 3, 8, 10, 11)]
    assert read_platform(path) == [("login", 1), ("big", 32)] + [(h, 4) for h in cluster] + [("k1", 1), ("k2", 1)]


def test_read_platform_shared_object(tmp_path):
    so = tmp_path / "platform.so"
    so.write_bytes(b"\x7fELF")
    assert read_platform(so) is None
    with pytest.raises(RankwiseError, match="not found"):
        read_platform(tmp_path / "other.so")


def test_parse_radical():
    assert parse_radical("0-15") == list(range(16))
    assert parse_radical("0-3,8,10-11") == [0, 1, 2, 3, 8, 10, 11]
    assert parse_radical(" 5 ") == [5]


HEAD = "<?xml version='1.0'?>\n<platform version=\"4.1\">\n<zone id=\"z\" routing=\"Full\">\n"


@pytest.mark.parametrize(
    "text, line, message",
    [
        (HEAD + '<host id="a" speed="1Gf">\n</zone>\n</platform>\n', 5, "XML syntax error: mismatched tag"),
        ("<?xml version='1.0'?>\n\n<zone id='z'/>\n", 3, "root element is <zone>, expected <platform>"),
        (HEAD + '<host id="a" speed="1Gf"/>\n<host id="a" speed="1Gf"/>\n</zone></platform>', 5,
         "duplicate host 'a' (first defined on line 4)"),
        (HEAD + '<host id="a" speed="1Gf" core="0"/>\n</zone></platform>', 4, "core count must be positive, got 0"),
        (HEAD + '<host id="a" speed="1Gf" core="four"/>\n</zone></platform>', 4, "core count 'four' is not an integer"),
        (HEAD + '\n<cluster id="c" prefix="n" suffix="" radical="3-1" speed="1Gf" bw="1Bps" lat="0s"/>\n'
         "</zone></platform>", 5, "bad radical '3-1'"),
        (HEAD + '<cluster id="c" prefix="n" suffix="" radical="x" speed="1Gf" bw="1Bps" lat="0s"/>\n'
         "</zone></platform>", 4, "bad radical 'x'"),
        (HEAD + '<host id="n1" speed="1Gf"/>\n<cluster id="c" prefix="n" suffix="" radical="0-1" speed="1Gf"'
         ' bw="1Bps" lat="0s"/>\n</zone></platform>', 5, "duplicate host 'n1' (first defined on line 4)"),
        (HEAD + '<host speed="1Gf"/>\n</zone></platform>', 4, "<host> without a 'id' attribute"),
    ],
)
def test_read_platform_errors_with_line(tmp_path, text, line, message):
    path = tmp_path / "bad.xml"
    path.write_text(text)
    with pytest.raises(RankwiseError) as e:
        read_platform(path)
    assert str(e.value).startswith(f"{path}:{line}: "), str(e.value)
    assert message in str(e.value)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("radical", ["0-99999999", "0-999999,2000000-2000000"])
def test_huge_radical_is_refused_at_once_naming_the_limit(tmp_path, radical):
    path = tmp_path / "huge.xml"
    path.write_text(HEAD + f'\n<cluster id="c" prefix="n" suffix="" radical="{radical}" speed="1Gf" bw="1Bps"'
                    ' lat="0s"/>\n</zone></platform>')
    started = time.monotonic()
    with pytest.raises(RankwiseError) as e:
        read_platform(path)
    assert time.monotonic() - started < 2  # refused before expanding, not after minutes
    assert str(e.value).startswith(f"{path}:5: radical '")
    assert f"more than {MAX_RADICAL_HOSTS:,} hosts" in str(e.value) and "\n" not in str(e.value)


def test_radical_with_a_number_too_long_for_python_is_refused(tmp_path):
    with pytest.raises(RankwiseError, match=r"^p.xml:3: bad radical '0-9999.*': a number of more than 100 digits"):
        parse_radical("0-" + "9" * 5000, "p.xml", 3)


def test_radical_limit_counts_every_cluster_of_the_file(tmp_path):
    half = MAX_RADICAL_HOSTS // 2
    clusters = "".join(f'<cluster id="c{k}" prefix="c{k}-" suffix="" radical="0-{half}" speed="1Gf" bw="1Bps"'
                       ' lat="0s"/>\n' for k in range(2))
    path = tmp_path / "two.xml"
    path.write_text(HEAD + clusters + "</zone></platform>")
    with pytest.raises(RankwiseError, match=rf"^{path}:5: the platform defines more than 1,000,000 hosts"):
        read_platform(path)
    assert len(parse_radical(f"1-{MAX_RADICAL_HOSTS}")) == MAX_RADICAL_HOSTS  # the limit itself is allowed


def test_read_platform_whole_file_errors(tmp_path):
    with pytest.raises(RankwiseError, match=rf"^{tmp_path}/nope.xml: cannot read platform file"):
        read_platform(tmp_path / "nope.xml")
    empty = tmp_path / "empty.xml"
    empty.write_text(HEAD + "</zone>\n</platform>\n")
    with pytest.raises(RankwiseError, match=rf"^{empty}: no host defined"):
        read_platform(empty)


# --- the platform in SMPI -------------------------------------------------------------------

PING_PONG_C = r"""
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
/* rank 0 sends m bytes to every rank k, which answers with 0 bytes; prints k m rtt */
int main(int argc, char **argv) {
  int rank, size;
  const int sizes[2] = {0, 1 << 20};
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  char *buf = malloc(1 << 20);
  for (int k = 1; k < size; k++)
    for (int s = 0; s < 2; s++) {
      if (rank == 0) {
        double t0 = MPI_Wtime();
        MPI_Send(buf, sizes[s], MPI_CHAR, k, 0, MPI_COMM_WORLD);
        MPI_Recv(buf, 0, MPI_CHAR, k, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("RTT %d %d %.12e\n", k, sizes[s], MPI_Wtime() - t0);
      } else if (rank == k) {
        MPI_Recv(buf, sizes[s], MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buf, 0, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
      }
    }
  free(buf);
  MPI_Finalize();
  return 0;
}
"""


@pytest.mark.skipif(not (shutil.which("smpicc") and shutil.which("smpirun")), reason="SimGrid SMPI not installed")
def test_smpi_ping_pong_matches_ground_truth(tmp_path):
    (tmp_path / "pp.c").write_text(PING_PONG_C)
    subprocess.run(["smpicc", "-O2", "pp.c", "-o", "pp"], cwd=tmp_path, check=True, capture_output=True)
    # 3 racks x 2 nodes: node 1 slow (bw/4, lat x5); uplink 2 congested below a node link.
    spec = PlatformSpec(
        racks=3,
        nodes_per_rack=2,
        degraded=[Degraded("node", 1, 0.25, 5.0)],
        congested=[Congested(2, 0.1)],
        jitter_sigma=0.05,
    )
    plat = tmp_path / "plat"
    gp = generate(spec, plat)
    ranks = ["node-0", "node-0", "node-1", "node-2", "node-4"]  # intra-node, slow, plain, congested
    write_hostfile(plat / "ranks", ranks)
    run = subprocess.run(
        ["smpirun", "-np", str(len(ranks)), "-platform", "platform.xml", "-hostfile", "ranks",
         "--cfg=smpi/simulate-computation:no", str(tmp_path / "pp")],
        cwd=plat, check=True, capture_output=True, text=True, timeout=120,
    )
    rtt = {}
    for line in run.stdout.splitlines():
        if line.startswith("RTT "):
            _, k, m, t = line.split()
            rtt[int(k), int(m)] = float(t)
    assert len(rtt) == 2 * (len(ranks) - 1), run.stdout + run.stderr
    assert gp.bandwidth[0, 4] < spec.node_bw * 0.9  # the congested uplink is the bottleneck
    for k in range(1, len(ranks)):
        j = gp.nodes.index(ranks[k])
        expected_rtt0 = gp.alpha[0, j] + gp.alpha[j, 0]
        # SMPI adds a few hundredths of a microsecond (MPI_Wtime cost etc.) to each round trip.
        assert rtt[k, 0] == pytest.approx(expected_rtt0, rel=0.02, abs=0.05 * US), k
        transfer = rtt[k, 1 << 20] - rtt[k, 0]
        assert transfer == pytest.approx((1 << 20) / gp.bandwidth[0, j], rel=0.02), k


# --- racks dealt in shuffled order ----------------------------------------------------------


def test_shuffled_racks_keep_sizes_and_routes_follow_them(tmp_path):
    spec = PlatformSpec(racks=4, nodes_per_rack=5, shuffle_racks=True, seed=9,
                        degraded=[Degraded("uplink", 1, 0.5, 2.0)])
    rack = spec.rack_of_node
    assert sorted(rack.tolist()) == sorted((np.arange(20) // 5).tolist())  # a permutation
    assert (rack != np.arange(20) // 5).any()
    assert (PlatformSpec(racks=4, nodes_per_rack=5, shuffle_racks=True, seed=10).rack_of_node != rack).any()
    links = build_links(spec)
    gp = generate(spec, tmp_path)
    assert (gp.rack_of_node == rack).all() and (load_generated(tmp_path).rack_of_node == rack).all()
    for i in range(20):
        for j in range(20):
            ids = route(spec, i, j)
            if i != j:
                assert len(ids) == (2 if rack[i] == rack[j] else 4)
                assert gp.alpha[i, j] == pytest.approx(sum(links[k].latency for k in ids), rel=1e-12)
                assert gp.affected[i, j] == (rack[i] != rack[j] and 1 in (rack[i], rack[j]))
    root = ET.parse(gp.platform_xml).getroot()
    leaf = {r.get("src"): r.get("dst") for r in root.iter("route") if r.get("src").startswith("node-")}
    assert all(leaf[f"node-{i}"] == f"leaf-{rack[i]}" for i in range(20))
    # The links' random draws do not depend on the shuffle.
    plain = dataclasses.replace(spec, shuffle_racks=False)
    assert build_links(plain) == links
    assert (plain.rack_of_node == np.arange(20) // 5).all()


def test_cli_sim_platform_shuffle(tmp_path):
    from conftest import run_cli

    r = run_cli("sim", "platform", "--racks", "3", "--nodes-per-rack", "4", "--shuffle", "--seed", "5", "-o", tmp_path)
    assert r.returncode == 0, r.stderr
    gp = load_generated(tmp_path)
    assert gp.spec.shuffle_racks
    assert (gp.rack_of_node == PlatformSpec(racks=3, nodes_per_rack=4, shuffle_racks=True, seed=5).rack_of_node).all()
