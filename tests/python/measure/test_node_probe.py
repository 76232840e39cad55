import numpy as np
import pytest

from rankwise.util.errors import RankwiseError
from rankwise.model.node import LEVELS, NodeTopology
from rankwise.measure.node_probe import cores_of_cpus, fit_level_costs

NODE = "pack:2 numa:2 core:4 pu:1"  # 16 cores, 4 domains of 4, 2 packages
TRUE_ALPHA = np.array([0.3e-6, 0.5e-6, 1.0e-6, 2.0e-6])
TRUE_BETA = np.array([1e-11, 2e-11, 5e-11, 1e-10])


def ping_pongs(topo, cores, pairs, sizes, noise=0.0, seed=1):
    rng = np.random.default_rng(seed)
    rows = []
    for a, b in pairs:
        lv = topo.level(cores[a], cores[b])
        for s in sizes:
            rows.append((a, b, s, (TRUE_ALPHA[lv] + TRUE_BETA[lv] * s) * (1 + noise * rng.standard_normal())))
    return rows


def test_each_level_is_recovered_from_pairs_attributed_by_their_cpu():
    topo = NodeTopology.load(synthetic=NODE)
    cores = np.array([0, 1, 4, 8, 12, 3])  # ranks on cores sharing every level with rank 0
    pairs = [(0, k) for k in range(1, cores.size)] + [(2, 3), (4, 5)]
    alpha, beta = fit_level_costs(topo, topo.cpu_of[cores], ping_pongs(topo, cores, pairs, [0, 1 << 10, 1 << 20]))
    # synthetic caches: the node has none shared below the domain, so level 0 holds no pair
    measured = [lv for lv in range(len(LEVELS)) if not np.isnan(alpha[lv])]
    assert measured == sorted(set(topo.level(cores[[a for a, _ in pairs]], cores[[b for _, b in pairs]]).tolist()))
    assert np.allclose(alpha[measured], TRUE_ALPHA[measured], rtol=1e-6)
    assert np.allclose(beta[measured], TRUE_BETA[measured], rtol=1e-6)


def test_noisy_pairs_keep_levels_in_order():
    topo = NodeTopology.load(synthetic=NODE)
    cores = np.arange(16)
    pairs = [(a, b) for a in range(16) for b in range(a + 1, 16)]
    alpha, beta = fit_level_costs(topo, topo.cpu_of, ping_pongs(topo, cores, pairs, [8, 4096, 1 << 20], noise=0.05))
    ok = ~np.isnan(beta)
    assert np.all(np.diff(beta[ok]) > 0)
    assert np.allclose(beta[ok], TRUE_BETA[ok], rtol=0.1)


def test_a_cpu_outside_the_topology_names_the_rank():
    topo = NodeTopology.load(synthetic=NODE)
    with pytest.raises(RankwiseError, match=r"rank 1 reports cpu 99, which is the first cpu of no core"):
        cores_of_cpus(topo, [0, 99])


def test_bad_samples_are_refused():
    topo = NodeTopology.load(synthetic=NODE)
    with pytest.raises(RankwiseError, match="outside 0..1"):
        fit_level_costs(topo, [0, 1], [(0, 2, 8, 1e-6)])
    with pytest.raises(RankwiseError, match="with itself"):
        fit_level_costs(topo, [0, 1], [(1, 1, 8, 1e-6)])


def test_fitted_figures_go_into_the_model_as_node_cost_lines(tmp_path):
    from rankwise.model.model import Model
    from rankwise.model.node import NodeCosts

    topo = NodeTopology.load(synthetic=NODE)
    pairs = [(0, 1), (0, 4), (0, 8)]  # domain, package, node
    m = Model.empty(["a", "b"], [8, 1024])
    m.node_alpha, m.node_beta = fit_level_costs(topo, topo.cpu_of, ping_pongs(topo, np.arange(16), pairs, [8, 1 << 16]))
    m.save(tmp_path / "m.rwm")
    text = (tmp_path / "m.rwm").read_text()
    assert text.splitlines()[0] == "rankwise-model 3"
    assert [line.split()[1] for line in text.splitlines() if line.startswith("node-cost")] == ["domain", "package", "node"]
    c = NodeCosts.from_model(Model.load(tmp_path / "m.rwm"))
    assert np.allclose(c.beta[1:], TRUE_BETA[1:], rtol=1e-6)


def test_parse_output_keeps_pairs_alone_and_at_once_apart():
    from rankwise.measure.node_probe import parse_output

    text = "launcher noise\ncpu 0 4\ncpu 1 0\npp 0 1 8 1.5e-06\nbw 0 1 8 2.5e-06\n"
    cpus, alone, loaded = parse_output(text)
    assert cpus.tolist() == [4, 0]
    assert alone.tolist() == [[0, 1, 8, 1.5e-06]] and loaded.tolist() == [[0, 1, 8, 2.5e-06]]
    with pytest.raises(RankwiseError, match="no cpu for its ranks: mpirun: oops"):
        parse_output("pp 0 1 8 1e-6\nmpirun: oops\n")


def test_pair_costs_are_fitted_per_pair_of_domains():
    from rankwise.measure.node_probe import fit_pair_costs

    domain_of = np.array([0, 0, 1, 2])
    truth = {(0, 0): (1e-7, 1e-11), (0, 1): (3e-7, 2e-11), (0, 2): (7e-7, 5e-11), (1, 2): (6e-7, 4e-11)}
    rows = []
    for a in range(4):
        for b in range(a + 1, 4):
            al, be = truth[min(domain_of[a], domain_of[b]), max(domain_of[a], domain_of[b])]
            rows += [(a, b, s, al + be * s) for s in (8, 1 << 16, 1 << 20)]
    got = fit_pair_costs(domain_of, rows)
    assert got.keys() == truth.keys()
    for key, (al, be) in truth.items():
        assert got[key] == pytest.approx((al, be), rel=1e-6), key


def test_parse_extras_reads_hosts_and_the_span():
    from rankwise.measure.node_probe import parse_extras

    text = "cpu 0 3\ncpu 1 5\nhost 1 node-0-d1\nhost 0 node-0-d0\npp 0 1 8 1e-6\ntime 1.5e-03\n"
    assert parse_extras(text) == (["node-0-d0", "node-0-d1"], 1.5e-3)
