"""Inside the node (rankwise.model.node over engine/src/node): hwloc topologies from
synthetic descriptions and XML, and the placement of a node's ranks on its
cores. On synthetic 2-package / 4-NUMA nodes the domain cut of the pattern
generators' stencils and synthetic groups (Getmansky et al. 2015, §3) must
equal the best possible, found here by exhaustive search."""

from __future__ import annotations

from functools import lru_cache
from itertools import combinations

import numpy as np
import pytest

from rankwise.util.errors import RankwiseError, UsageError
from rankwise.model.node import LEVELS, NodeCosts, NodeTopology, export_xml
from rankwise.traffic.patterns import generate

from conftest import run_cli

NODE = "pack:2 numa:2 core:4 pu:1"  # 16 cores, 4 domains of 4


def best_domain_cut(matrix, ranks, cap: int, n_domains: int) -> int:
    """The smallest bytes between domains over every way of putting `ranks`
    into n_domains domains of cap cores (exhaustive, by subsets)."""
    idx = {r: k for k, r in enumerate(ranks)}
    n = len(ranks)
    w = np.zeros((n, n), dtype=np.int64)
    for s, d, b in zip(matrix.src.tolist(), matrix.dst.tolist(), matrix.bytes.tolist()):
        if s in idx and d in idx and s != d:
            w[idx[s], idx[d]] += b
    sym = w + w.T
    total = int(w.sum())
    full = (1 << n) - 1

    @lru_cache(maxsize=None)
    def inside(mask: int) -> int:
        members = [i for i in range(n) if mask >> i & 1]
        return int(sym[np.ix_(members, members)].sum() // 2)

    @lru_cache(maxsize=None)
    def best(mask: int, left: int) -> int:
        if mask == full:
            return 0
        if left == 0:
            return -(1 << 62)
        free = [i for i in range(n) if not mask >> i & 1]
        first, rest = free[0], free[1:]
        out = -(1 << 62)
        for size in range(0, min(cap, len(free)) ):
            for others in combinations(rest, size):
                group = (1 << first) | sum(1 << i for i in others)
                out = max(out, inside(group) + best(mask | group, left - 1))
        return out

    return total - best(0, n_domains)


CASES = [
    "stencil2d:grid=4x4,bytes=1K",
    "stencil2d:grid=4x4,periodic=1,bytes=1K",
    "stencil3d:grid=2x2x4,bytes=1K",
    "stencil3d:grid=4x2x2,neighbours=26,bytes=1K",
    "groups:groups=4,per_group=4,bytes=1M,link_bytes=1K",
    "groups:groups=4,per_group=4,bytes=1M,link_bytes=1K,seed=7",
    "groups:groups=2,per_group=8,bytes=1M,link_bytes=1K",
    "groups:groups=8,per_group=2,bytes=64K,link_bytes=32K",
    "ring:ranks=16,bytes=1K",
]


@pytest.fixture(scope="module")
def node():
    return NodeTopology.load(synthetic=NODE)


@pytest.mark.parametrize("spec", CASES)
def test_the_domain_cut_of_a_full_node_is_the_best_possible(node, spec):
    m = generate(spec)
    ranks = np.arange(m.n_ranks)[::-1]  # the node's ranks in any order
    cores = node.place(m, ranks)
    assert sorted(cores.tolist()) == list(range(16))
    cut, total = node.domain_cut(m, ranks, cores)
    assert cut == best_domain_cut(m, ranks.tolist(), 4, 4)
    assert total == int(m.bytes.sum())
    # never dearer than the launchers' rank-order cores
    assert node.cost(m, ranks, cores) <= node.cost(m, ranks, np.argsort(np.argsort(ranks))) * (1 + 1e-12)


@pytest.mark.parametrize("spec", ["stencil3d:grid=2x2x4,bytes=1K", "groups:groups=4,per_group=4,bytes=1M,link_bytes=1K"])
def test_the_domain_cut_of_part_of_a_job_is_the_best_possible(node, spec):
    """12 of a 16-rank job's ranks on this node (the others elsewhere)."""
    m = generate(spec)
    ranks = np.arange(2, 14)
    cores = node.place(m, ranks)
    assert len(set(cores.tolist())) == 12
    assert node.domain_cut(m, ranks, cores)[0] == best_domain_cut(m, ranks.tolist(), 4, 4)


def test_the_known_optimum_of_a_grid_on_four_domains(node):
    """A 4x4 grid in four domains of four: 2x2 blocks cut 8 edges (both ways)."""
    m = generate("stencil2d:grid=4x4,bytes=1K")
    cores = node.place(m, np.arange(16))
    assert node.domain_cut(m, np.arange(16), cores)[0] == 8 * 2 * 1024
    blocks = node.domain_of[cores].reshape(4, 4)
    assert all(len(set(blocks[y:y + 2, x:x + 2].ravel().tolist())) == 1 for y in (0, 2) for x in (0, 2))


def test_the_known_optimum_of_a_cube_on_eight_domains():
    """A 4x4x4 grid (144 edges) in eight domains of eight: eight grid points
    hold at most 12 edges (a 2x2x2 cube), so at least 144 - 8 * 12 = 48
    edges are cut, as 2x2x2 blocks do."""
    node = NodeTopology.load(synthetic="pack:2 numa:4 core:8 pu:1")
    m = generate("stencil3d:grid=4x4x4,bytes=1K")
    ranks = np.arange(64)
    cores = node.place(m, ranks)
    assert node.domain_cut(m, ranks, cores)[0] == 48 * 2 * 1024
    # and the two packages hold two halves of the cube: 16 edges between them
    pkg = node.package_of[cores]
    between = sum(b for s, d, b in zip(m.src.tolist(), m.dst.tolist(), m.bytes.tolist()) if pkg[s] != pkg[d])
    assert between == 16 * 2 * 1024


def test_rank_order_is_the_worst_for_shuffled_groups(node):
    """Shuffled groups placed in rank order spread every group: the mapper finds them."""
    m = generate("groups:groups=4,per_group=4,bytes=1M,link_bytes=1K")
    ranks = np.arange(16)
    cut_block = node.domain_cut(m, ranks, ranks)[0]
    cut = node.domain_cut(m, ranks, node.place(m, ranks))[0]
    assert cut < cut_block / 10


def test_synthetic_topology_by_core():
    t = NodeTopology.load(synthetic="pack:2 numa:2 l3:2 core:2 pu:2")
    assert (t.n_packages, t.n_domains, t.n_caches, t.n_cores, t.n_pus) == (2, 4, 8, 16, 32)
    assert t.package_of.tolist() == [c // 8 for c in range(16)]
    assert t.domain_of.tolist() == [c // 4 for c in range(16)]
    assert t.core_in_package.tolist() == [c % 8 for c in range(16)]
    assert t.cpu_of.tolist() == [2 * c for c in range(16)]
    assert [LEVELS[x] for x in t.level(np.zeros(4, int), np.array([1, 2, 4, 8]))] == \
        ["cache", "domain", "package", "node"]


def test_this_machine():
    t = NodeTopology.load()
    assert t.source == "this machine"
    assert t.n_cores >= 1 and t.n_pus >= t.n_cores


def test_xml_round_trip(tmp_path):
    out = tmp_path / "node.xml"
    export_xml(out, synthetic=NODE)
    a, b = NodeTopology.load(synthetic=NODE), NodeTopology.load(xml=out)
    for name in ("package_of", "domain_of", "cache_of", "core_in_package", "cpu_of"):
        assert getattr(a, name).tolist() == getattr(b, name).tolist()
    assert b.source == str(out)


def _with_devices(xml_text: str) -> str:
    """An exported synthetic node with I/O objects added as hwloc writes them: a GPU (two OS
    devices of one PCI device) under the second domain of package 1, a coprocessor under package
    0, and a network card under the machine."""
    import xml.etree.ElementTree as ET

    root = ET.fromstring(xml_text)
    gp = iter(range(1000, 2000))

    def pci(parent, busid, devices):
        bridge = ET.SubElement(parent, "object", {"type": "Bridge", "gp_index": str(next(gp)), "bridge_type": "0-1",
                                                  "depth": "0", "bridge_pci": f"{busid[:7]}[00-ff]"})
        dev = ET.SubElement(bridge, "object", {"type": "PCIDev", "gp_index": str(next(gp)), "pci_busid": busid,
                                               "pci_type": "0302 [10de:1db4] [10de:1212] a1",
                                               "pci_link_speed": "0.000000"})
        for name, osdev_type in devices:
            ET.SubElement(dev, "object", {"type": "OSDev", "gp_index": str(next(gp)), "name": name,
                                          "osdev_type": str(osdev_type)})

    machine = root.find("object")
    packages = [o for o in machine if o.get("type") == "Package"]
    groups = [o for o in packages[1] if o.get("type") == "Group"]
    pci(groups[1], "0000:3b:00.0", [("card0", 1), ("cuda0", 5)])  # osdev_type 1: GPU; CUDA shows as 5
    pci(packages[0], "0000:5e:00.0", [("mic0", 5)])  # 5: coprocessor
    pci(machine, "0000:00:03.0", [("eth0", 2)])  # 2: network, not a device rankwise lists
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode")


def test_gpus_and_coprocessors_with_where_they_attach(tmp_path):
    path = tmp_path / "node.xml"
    export_xml(path, synthetic="pack:2 numa:2 core:2 pu:1")
    path.write_text(_with_devices(path.read_text()))
    topo = NodeTopology.load(xml=path)
    assert topo.n_cores == 8 and topo.n_domains == 4
    assert [(d.name, d.kind, d.pci, d.package, d.domain) for d in topo.devices] == [
        ("mic0", "coproc", "0000:5e:00.0", 0, -1),  # under the package: both its domains are local
        ("card0", "gpu", "0000:3b:00.0", 1, 3),  # one per PCI device: cuda0 is the same GPU
    ]
    r = run_cli("node", "show", "--xml", path)
    assert r.returncode == 0, r.stderr
    assert "gpu card0 (PCI 0000:3b:00.0): attached to package 1, domain 3" in r.stdout
    assert "coproc mic0 (PCI 0000:5e:00.0): attached to package 0" in r.stdout
    # a synthetic node has no I/O
    assert NodeTopology.load(synthetic="pack:2 numa:2 core:2 pu:1").devices == ()


def test_bad_topologies(tmp_path):
    with pytest.raises(UsageError, match="'pack:2 kiwi:3' is not valid"):
        NodeTopology.load(synthetic="pack:2 kiwi:3")
    with pytest.raises(UsageError, match="not both"):
        NodeTopology.load(synthetic=NODE, xml=tmp_path / "x.xml")
    bad = tmp_path / "bad.xml"
    bad.write_text("<topology><object type='Machine'")
    with pytest.raises(RankwiseError, match=f"{bad}: not a topology hwloc can read"):
        NodeTopology.load(xml=bad)
    with pytest.raises(RankwiseError, match="No such file"):
        NodeTopology.load(xml=tmp_path / "missing.xml")


def test_costs(node):
    c = NodeCosts.default()
    assert list(c.alpha) == sorted(c.alpha) and list(c.beta) == sorted(c.beta)
    m = generate("ring:ranks=4,bytes=1K")
    with pytest.raises(RankwiseError, match="must not decrease"):
        node.place(m, np.arange(4), NodeCosts((1e-6, 1e-7, 1e-6, 1e-6), c.beta))
    with pytest.raises(RankwiseError, match="5 ranks on one node of 4 cores"):
        NodeTopology.load(synthetic="pack:1 core:4 pu:1").place(generate("ring:ranks=5,bytes=1K"), np.arange(5))


def test_the_model_keeps_figures_inside_the_node(tmp_path):
    """Format 3: node-cost lines; a model without them is still written as version 2."""
    from rankwise.model.model import Model

    m = Model.empty(["a", "b"], [8, 1024])
    m.save(tmp_path / "old.rwm")
    assert (tmp_path / "old.rwm").read_text().splitlines()[0] == "rankwise-model 2"
    m.node_alpha = np.array([3e-7, np.nan, 9e-7, 2e-6])
    m.node_beta = np.array([5e-11, np.nan, 2e-10, 1e-10])  # node below package: noise
    m.save(tmp_path / "new.rwm")
    text = (tmp_path / "new.rwm").read_text()
    assert text.splitlines()[0] == "rankwise-model 3"
    assert "node-cost package 9e-07 2e-10" in text and "node-cost domain" not in text
    back = Model.load(tmp_path / "new.rwm")
    assert np.allclose(back.node_alpha, m.node_alpha, equal_nan=True)
    c = NodeCosts.from_model(back)
    d = NodeCosts.default()
    assert c.alpha == (3e-7, max(3e-7, d.alpha[1]), 9e-7, 2e-6)
    assert c.beta[3] == c.beta[2] == 2e-10  # raised to the level below
    assert NodeCosts.from_model(m.empty(["a"], [8])) is None


@pytest.mark.parametrize("line,message", [
    ("node-cost socket 1e-6 1e-10", "unknown level 'socket'"),
    ("node-cost cache -1 1e-10", "field 2"),
    ("node-cost cache 1e-6", "takes 3 fields"),
])
def test_bad_node_cost_lines_name_their_line(tmp_path, line, message):
    from rankwise.model.model import Model

    path = tmp_path / "m.rwm"
    path.write_text(f"rankwise-model 3\nsizes 8\n{line}\nnodes 1\nnode 0 a 1\n")
    with pytest.raises(RankwiseError, match=f"{path}:3: .*{message}"):
        Model.load(path)
    path.write_text(f"rankwise-model 2\nsizes 8\nnode-cost cache 1e-6 1e-10\nnodes 1\nnode 0 a 1\n")
    with pytest.raises(RankwiseError, match="needs model format version 3"):
        Model.load(path)
