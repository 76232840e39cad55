"""The predictor (rankwise.predict.predictor) against SMPI with the algorithm pinned, on small generated
platforms; the closed-form formulas; Luo et al. 2018 Tables 5-6; the binding's errors."""

from __future__ import annotations

import importlib.util
import time
from pathlib import Path

import numpy as np
import pytest

from rankwise.traffic import patterns
from rankwise.util.errors import RankwiseError
from rankwise.predict.predictor import (
    SMPI_ALGORITHM,
    PredictNetwork,
    SharedLink,
    algorithms,
    luo_pairwise,
    placement,
    predict_collective,
    predict_traffic,
)
from rankwise.measure.probe import ProbeOptions, probe_sim
from rankwise.cluster.benchmark_programs import run_benchmark
from rankwise.sim.platform import Degraded, PlatformSpec, generate
from rankwise.sim.smpi import COLLECTIVE_OVERHEADS, overhead_settings

US = 1e-6
ROOT = Path(__file__).resolve().parents[3]
ALLTOALL_SIZES = "1K,16K,256K,1M"
COLL_SIZES = "1K,64K,1M"


def tiny_spec(**kw) -> PlatformSpec:
    """2 racks x 4 nodes x 2 cores; node 1 at half bandwidth and 3x latency; rack 1's uplink
    congested to half of an already 2:1 oversubscribed uplink (10 GB/s for 4 nodes of 10 GB/s)."""
    args = dict(racks=2, nodes_per_rack=4, cores=2, node_bw=10e9, node_lat=1 * US, oversubscription=2.0,
                uplink_lat=2 * US, loopback_bw=40e9, loopback_lat=0.5 * US,
                degraded=[("node", 1, 0.5, 3.0)], congested=[(1, 0.5)], seed=7)
    args.update(kw)
    return PlatformSpec(**args)


@pytest.fixture(scope="module")
def platform(tmp_path_factory):
    return generate(tiny_spec(), tmp_path_factory.mktemp("predict-platform"))


def rel_errors(pred, meas) -> np.ndarray:
    pred, meas = np.asarray(pred, dtype=float), np.asarray(meas, dtype=float)
    return np.abs(pred - meas) / meas


def compare(net: PredictNetwork, gp, op: str, alg: str, ppn: int, sizes: str, n_nodes: int = 8,
            overheads: tuple[float, float] | None = None):
    """(sizes, SMPI median us, predicted us, Hockney us) for one pinned algorithm; overheads
    (send, receive, s) set in SMPI and in the network."""
    cfg = [f"smpi/{op}:{SMPI_ALGORITHM[op, alg]}"]
    if overheads is not None:
        cfg += overhead_settings(*overheads)
        net = net.with_overheads(*overheads)
    if op == "alltoall":
        r = run_benchmark("alltoall", ["--sizes", sizes, "--iterations", "2", "--warmup", "1"],
                          sim=gp.platform_xml, ranks_per_node=ppn, nodes=n_nodes, smpi_cfg=cfg)
        tab = r.table
    else:
        r = run_benchmark("collectives", ["--collectives", op, "--sizes", sizes, "--iterations", "2",
                                          "--warmup", "1"], sim=gp.platform_xml, ranks_per_node=ppn,
                          nodes=n_nodes, smpi_cfg=cfg)
        tab = r[op]
    node_of = placement(ppn, n_nodes)
    pred = [predict_collective(net, op, alg, s, node_of).span / US for s in tab.size]
    hock = [predict_collective(net, op, alg, s, node_of, contention=False).span / US
            for s in tab.size]
    return np.asarray(tab.size), np.asarray(tab.median_us), np.asarray(pred), np.asarray(hock)


def show(label, sizes, meas, pred, hock):
    for s, m, p, h in zip(sizes, meas, pred, hock):
        print(f"{label:32} {s:>8} smpi {m:10.2f} us  predicted {p:10.2f} ({(p - m) / m:+.1%})"
              f"  hockney {h:10.2f} ({(h - m) / m:+.1%})")


# --- against SMPI, network from the ground truth ---------------------------------------------------


def test_alltoall_matches_smpi_on_the_ground_truth_network(platform):
    net = PredictNetwork.from_ground_truth(platform.out_dir)
    errs, hock_errs = [], []
    for ppn in (1, 2):
        for alg in ("pair", "ring", "bruck", "linear"):
            sizes, meas, pred, hock = compare(net, platform, "alltoall", alg, ppn, ALLTOALL_SIZES)
            show(f"alltoall {alg} {8 * ppn} ranks", sizes, meas, pred, hock)
            errs += list(rel_errors(pred, meas))
            hock_errs += list(rel_errors(hock, meas))
    errs, hock_errs = np.asarray(errs), np.asarray(hock_errs)
    print(f"predictor median {np.median(errs):.1%} p90 {np.quantile(errs, 0.9):.1%}; "
          f"hockney median {np.median(hock_errs):.1%} p90 {np.quantile(hock_errs, 0.9):.1%}")
    assert np.median(errs) <= 0.10 and np.quantile(errs, 0.9) <= 0.25
    # Contention is what the per-message sum misses: large all-to-alls share node links and uplinks.
    assert np.quantile(hock_errs, 0.9) > 0.25


def test_collectives_match_smpi_on_the_ground_truth_network(platform):
    net = PredictNetwork.from_ground_truth(platform.out_dir)
    for op in ("bcast", "reduce", "allreduce", "allgather", "gather", "scatter"):
        errs, hock_errs = [], []
        for alg in algorithms(op):
            if (op, alg) not in SMPI_ALGORITHM:
                continue  # knomial: no SMPI counterpart to pin
            sizes, meas, pred, hock = compare(net, platform, op, alg, 2, COLL_SIZES)
            show(f"{op} {alg} 16 ranks", sizes, meas, pred, hock)
            errs += list(rel_errors(pred, meas))
            hock_errs += list(rel_errors(hock, meas))
        print(f"{op}: predictor median {np.median(errs):.1%}, hockney median {np.median(hock_errs):.1%}")
        assert np.median(errs) <= 0.15, op


def test_ompi_selectors_knomial_bcast_matches_smpi_at_every_size(platform):
    """The ompi selector's "knomial" broadcast is MVAPICH2's: a level's three sends posted at
    once and waited for together. Costed as blocking sends it was predicted 49.2 us where SMPI
    ran 31.7 us (32 ranks, 64 KiB: the rendezvous transfers overlap), and the tuner took
    trees 5 % slower than it for faster."""
    net = PredictNetwork.from_ground_truth(platform.out_dir)
    sizes, meas, pred, _ = compare(net, platform, "bcast", "knomial_isend", 2, "8,1K,16K,64K,256K",
                                   overheads=(1e-6, 1e-6))
    show("bcast knomial_isend 16 ranks", sizes, meas, pred, pred)
    assert np.max(rel_errors(pred, meas)) <= 0.02


def ompi_fanout_parents(n: int, fanout: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Open MPI's build_tree (coll_tuned_topo.cpp) from root 0: parents, and each child's
    place in its parent's list counted from the last (the tree schedule receives in reverse)."""
    parents, order = np.full(n, -1), np.zeros(n, dtype=int)
    delta, level_end = 1, 1
    for s in range(n):
        while s >= level_end:
            delta *= fanout
            level_end += delta
        for i in range(fanout):
            c = s + delta * (i + 1)
            if c < n:
                parents[c], order[c] = s, fanout - 1 - i
    return parents, order


@pytest.mark.parametrize("n", [4, 8, 16])
def test_open_mpis_generic_reduce_pays_receive_overheads_in_wait_order(tmp_path, n):
    """Open MPI's binary reduce posts both children's receives, then waits for the first
    child's, whose deeper subtree answers last: the second child's message, there first,
    pays its receive overhead after. Charged at arrival it was predicted 1-3 us short
    (16 ranks: 16.0 us for SMPI's 19.0) and the tuner kept it against faster trees."""
    from rankwise.coll.selection import predict_tree

    gp = generate(PlatformSpec(racks=1, nodes_per_rack=16, cores=1), tmp_path)
    o = 1e-6
    r = run_benchmark("collectives", ["--collectives", "reduce", "--sizes", "8,1K", "--iterations", "1",
                                      "--warmup", "1"], sim=gp.platform_xml, ranks_per_node=1, nodes=n,
                      smpi_cfg=["smpi/reduce:ompi_binary", *overhead_settings(o, o)])
    net = PredictNetwork.from_ground_truth(gp.out_dir).with_overheads(o, o)
    parents, order = ompi_fanout_parents(n)
    for size, measured in zip(r["reduce"].size.tolist(), r["reduce"].median_us.tolist()):
        predicted = predict_tree(net, np.arange(n), "reduce_ompi", parents, order, size) / US
        assert predicted == pytest.approx(measured, rel=0.01), (n, size)


def test_flows_share_a_nic_in_inverse_proportion_to_their_latency(tmp_path):
    """SimGrid's CM02 weighs each flow by 1 / its route's latency (network_cm02.cpp: the sharing
    penalty is the latency). A flat bcast from node 0 sends to a near node and to one at 20x the
    latency and 1/8 of the bandwidth: at node 0's NIC the near flows take most of the bandwidth,
    and the far one, alone on its slow link, gets less than that link while they last. Plain
    max-min sharing predicted 1 MiB 3-4 % short (a pipelined eager tree over such a node 14 %
    long, which made the tuner choose a tree 10 % slower: studies/coll/coll_tree_validate.py)."""
    gp = generate(PlatformSpec(racks=1, nodes_per_rack=4, cores=1, seed=3,
                               degraded=[Degraded("node", 2, bw_factor=0.125, lat_factor=20.0)]), tmp_path)
    net = PredictNetwork.from_ground_truth(gp.out_dir)
    sizes, meas, pred, hock = compare(net, gp, "bcast", "flat", 1, "256K,1M", n_nodes=4)
    show("flat bcast, a far slow node", sizes, meas, pred, hock)
    assert rel_errors(pred, meas).max() < 0.005


def test_open_mpis_binomial_reduce_in_1k_segments_is_costed_segment_by_segment(tmp_path):
    """SMPI's ompi_binomial reduce cuts 1 KiB segments from 2 KiB on 8 ranks and more (while
    p > 0.6016 / 1024 * bytes + 1.3496), each segment paying its overheads: costed whole, the
    passthrough was predicted up to 5x too fast (32 ranks, 8 KiB: 23.3 us for SMPI's 73.8) and the
    tuner kept it where trees measured x1.5-x8 faster. Stated tolerance 8 %: the predictor is
    still pessimistic by about 0.4 us per segment (a forwarding rank's send overhead is placed
    once its parent has posted the receive)."""
    from rankwise.coll.selection import TuneOptions, decide

    n, o = 32, 1e-6
    gp = generate(PlatformSpec(racks=1, nodes_per_rack=n, cores=1), tmp_path)
    r = run_benchmark("collectives", ["--collectives", "reduce", "--sizes", "1K,2K,4K,8K", "--iterations", "1",
                                      "--warmup", "1"], sim=gp.platform_xml, ranks_per_node=1, nodes=n,
                      smpi_cfg=["smpi/reduce:ompi_binomial", *overhead_settings(o, o)])
    net = PredictNetwork.from_ground_truth(gp.out_dir).with_overheads(o, o)
    for size, measured in zip(r["reduce"].size.tolist(), r["reduce"].median_us.tolist()):
        mpi = decide(net, np.arange(n), "reduce", int(size), 0, TuneOptions(max_evals=10)).candidates[0]
        assert mpi.algorithm == "binomial" and mpi.segment == (1024 if size >= 2048 else 0), (size, mpi)
        assert mpi.time / US == pytest.approx(measured, rel=0.08), size


def test_a_model_from_a_real_mpi_shares_links_equally(tmp_path):
    """CM02's weighting by latency is SimGrid's: a model probed under SMPI keeps it, one from a
    real MPI is shared max-min fairly, and the two predict differently where latencies differ."""
    gp = generate(PlatformSpec(racks=1, nodes_per_rack=4, cores=1, seed=3,
                               degraded=[Degraded("node", 2, bw_factor=0.125, lat_factor=20.0)]), tmp_path)
    model = probe_sim(gp.platform_xml, tmp_path / "m.rwm", ProbeOptions(mode="isolated", sizes="8,1M",
                                                                        repetitions=2, rounds=1),
                      show_progress=False)
    assert model.source.startswith("smpi") and PredictNetwork.from_model(model).sharing == "latency"
    model.source = "mpi:mpirun -np 4"
    real = PredictNetwork.from_model(model)
    assert real.sharing == "equal"
    node_of = np.arange(4)
    weighted = predict_collective(PredictNetwork.from_model(model).__class__(**{**real.__dict__, "sharing": "latency"}),
                                  "bcast", "flat", 1 << 20, node_of).span
    equal = predict_collective(real, "bcast", "flat", 1 << 20, node_of).span
    assert equal != pytest.approx(weighted, rel=1e-3)
    with pytest.raises(RankwiseError):
        PredictNetwork(real.names, real.alpha, real.beta, sharing="fair")


def test_benchmarks_start_every_rank_at_one_instant(platform):
    """A 1 KiB bcast between two nodes lasts one message, alpha + n beta, as the ranks start
    together: timed from each rank's exit of a barrier it measured up to twice that."""
    truth = PredictNetwork.from_ground_truth(platform.out_dir)
    hosts = [platform.nodes[0], platform.nodes[5]]
    r = run_benchmark("collectives", ["--collectives", "bcast", "--sizes", "1K", "--iterations", "3",
                                      "--warmup", "1"], sim=platform.platform_xml, hosts=hosts,
                      smpi_cfg=["smpi/bcast:binomial_tree"])
    one_message = truth.alpha[0, 5] + 1024 * truth.beta[0, 5]
    assert r["bcast"].median_us[0] * US == pytest.approx(one_message, rel=1e-3)
    assert "# late" not in r.output


def test_overheads_match_smpi(platform):
    """SMPI with send and receive overheads on eager messages (rankwise's setting for collective
    experiments) against the predictor charging the same: trees that send many messages from one
    rank (flat), forward segments (chain) or exchange (ring) all within 1 % at 1 KiB, where the
    overheads count most, and 5 % at every size."""
    net = PredictNetwork.from_ground_truth(platform.out_dir)
    cases = [("bcast", "binomial"), ("bcast", "flat"), ("bcast", "chain"), ("reduce", "binomial"),
             ("gather", "binomial"), ("scatter", "linear"), ("allgather", "ring"), ("allreduce", "ring")]
    for op, alg in cases:
        sizes, meas, pred, hock = compare(net, platform, op, alg, 2, "1K,16K,1M", overheads=COLLECTIVE_OVERHEADS)
        show(f"{op} {alg} 16 ranks, overheads", sizes, meas, pred, hock)
        err = rel_errors(pred, meas)
        assert err[0] < 0.01 and err.max() < 0.05, (op, alg)  # larger: a few % of contention
    # Overheads make a flat tree lose to a binomial one for small messages, as on a real MPI;
    # without them (SMPI's default) it wins.
    for overheads, flat_loses in ((COLLECTIVE_OVERHEADS, True), (None, False)):
        _, flat, _, _ = compare(net, platform, "bcast", "flat", 2, "1K", overheads=overheads)
        _, binomial, _, _ = compare(net, platform, "bcast", "binomial", 2, "1K", overheads=overheads)
        assert (flat[0] > binomial[0]) == flat_loses


def test_knomial_radix_2_is_binomial_and_flat_is_radix_p():
    n = 8
    alpha = np.full((n, n), 2e-6)
    beta = np.full((n, n), 1e-10)
    net = PredictNetwork([f"n{i}" for i in range(n)], alpha, beta).with_overheads(1e-6, 0.5e-6)
    node_of = np.arange(n)
    for size in (1024, 1 << 20):
        binomial = predict_collective(net, "bcast", "binomial", size, node_of).time
        assert predict_collective(net, "bcast", "knomial", size, node_of, radix=2).time == pytest.approx(binomial)
    # The flat tree's isends go one send overhead apart; radix 8 with blocking sends waits for none below 64 KiB.
    assert predict_collective(net, "bcast", "flat", 1024, node_of).time == pytest.approx(
        predict_collective(net, "bcast", "knomial", 1024, node_of, radix=n).time)


def test_overhead_settings_and_network_overheads():
    os_, ois, or_ = overhead_settings(1e-6, 2e-6)
    assert os_ == "smpi/os:0:1e-06:0;65535:0:0" and ois == "smpi/ois:0:1e-06:0;65535:0:0"
    assert or_ == "smpi/or:0:2e-06:0;65535:0:0"
    for bad in ((-1e-6, 0), (0, float("nan")), (2.0, 0)):
        with pytest.raises(RankwiseError, match="overhead must be >= 0"):
            overhead_settings(*bad)
    net = PredictNetwork(["a", "b"], np.zeros((2, 2)), np.zeros((2, 2)))
    with pytest.raises(RankwiseError, match="overheads must be finite"):
        net.with_overheads(-1, 0)
    assert net.with_overheads(1e-6, 2e-6).recv_overhead.tolist() == [2e-6, 2e-6]
    assert net.overhead is None  # a copy


# --- against SMPI, network from a probed model -------------------------------------------------


@pytest.fixture(scope="module")
def probed(tmp_path_factory):
    """A non-blocking platform with a slow node, probed in isolated mode with 2 ranks per node."""
    d = tmp_path_factory.mktemp("predict-probed")
    gp = generate(tiny_spec(oversubscription=1.0, congested=[], degraded=[Degraded("node", 5, bw_factor=0.25)]),
                  d / "plat")
    model = probe_sim(gp.platform_xml, d / "m.rwm", ProbeOptions(mode="isolated", sizes="8,1K,64K,1M",
                                                                 repetitions=2, rounds=2),
                      ranks_per_node=2, show_progress=False)
    return gp, model


def test_alltoall_from_a_probed_model_matches_smpi(probed):
    gp, model = probed
    net = PredictNetwork.from_model(model)
    # The probe's figures are the ground truth's (one-way alpha symmetrised, route bandwidth).
    truth = PredictNetwork.from_ground_truth(gp.out_dir)
    np.testing.assert_allclose(net.beta, truth.beta, rtol=0.02)
    errs, hock_errs = [], []
    for ppn in (1, 2):
        for alg in ("pair", "linear"):
            sizes, meas, pred, hock = compare(net, gp, "alltoall", alg, ppn, ALLTOALL_SIZES)
            show(f"probed model, alltoall {alg} {8 * ppn}", sizes, meas, pred, hock)
            errs += list(rel_errors(pred, meas))
            hock_errs += list(rel_errors(hock, meas))
    errs = np.asarray(errs)
    print(f"probed model: median {np.median(errs):.1%} p90 {np.quantile(errs, 0.9):.1%}, "
          f"hockney median {np.median(hock_errs):.1%}")
    assert np.median(errs) <= 0.10 and np.quantile(errs, 0.9) <= 0.25


def test_a_model_without_link_capacities_misses_a_congested_uplink_until_given_it(platform, tmp_path):
    """A probed model has no shared-link capacity (yet): on the congested platform the predictor
    then sees only node links, and is too optimistic for cross-rack traffic; the uplinks added
    as shared links bring it back."""
    model = probe_sim(platform.platform_xml, tmp_path / "m.rwm",
                      ProbeOptions(mode="isolated", sizes="8,1K,64K,1M", repetitions=2, rounds=2),
                      ranks_per_node=2, show_progress=False)
    bare = PredictNetwork.from_model(model)
    truth = PredictNetwork.from_ground_truth(platform.out_dir)
    with_links = PredictNetwork.from_model(model)
    with_links.links = [SharedLink(link.name, link.capacity, link.pairs) for link in truth.links]
    sizes, meas, pred_bare, _ = compare(bare, platform, "alltoall", "pair", 2, "256K,1M")
    _, _, pred_links, _ = compare(with_links, platform, "alltoall", "pair", 2, "256K,1M")
    show("probed, no links", sizes, meas, pred_bare, pred_bare)
    show("probed + uplinks", sizes, meas, pred_links, pred_links)
    assert (rel_errors(pred_bare, meas) > 0.2).all()
    assert (rel_errors(pred_links, meas) < 0.05).all()


# --- application traffic -------------------------------------------------------------------------


def test_traffic_phase_is_every_message_at_once(platform):
    net = PredictNetwork.from_ground_truth(platform.out_dir)
    node_of = placement(2, 8)
    m = patterns.alltoall(16, 65536, iterations=4)
    phase = predict_traffic(net, m, node_of, iterations=4)
    # One phase of an all-to-all matrix is the linear all-to-all (every send posted at once).
    linear = predict_collective(net, "alltoall", "linear", 65536, node_of)
    assert phase.time == pytest.approx(linear.time, rel=1e-9)
    # The whole run as one phase moves 4x the bytes (and pays each pair's 4 latencies in turn).
    whole = predict_traffic(net, m, node_of, iterations=1)
    assert 3.5 * phase.time < whole.time < 4.01 * phase.time
    # Node 1 (half bandwidth) is the bottleneck: it alone ejects 14 x 2 x 64 KiB per iteration.
    assert phase.time >= 14 * 2 * 65536 / 5e9
    with pytest.raises(RankwiseError, match="ranks a node"):
        predict_traffic(net, m, placement(1, 8))


# --- formulas and the paper ------------------------------------------------------------------------


def test_luo_tables_5_and_6_reproduced_from_the_papers_parameters():
    spec = importlib.util.spec_from_file_location("predict_luo2018", ROOT / "studies" / "predict" / "predict_luo2018.py")
    study = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(study)
    rows = study.reproduce()
    assert len(rows) == 20
    for r in rows:
        assert r["ours_eq2"] == pytest.approx(r["paper_eq2"], rel=study.TOLERANCE), r
        assert r["ours_eq4"] == pytest.approx(r["paper_eq4"], rel=study.TOLERANCE), r
    # eq. 2's difference is the same for every p and ranks per node: only the units' rounding.
    for table in (5, 6):
        ratios = [r["ours_eq2"] / r["paper_eq2"] for r in rows if r["table"] == table]
        assert max(ratios) - min(ratios) < 2e-3


def test_formulas_agree_with_the_simulation_where_they_should():
    """On a uniform network without caps the pairwise schedule is eq. 2 exactly."""
    n, a, b = 16, 2e-6, 1e-10
    alpha = np.full((n, n), a)
    beta = np.full((n, n), b)
    net = PredictNetwork([f"n{i}" for i in range(n)], alpha, beta)
    for k in (1024, 1 << 20):
        t = predict_collective(net, "alltoall", "pair", k, np.arange(n)).time
        assert t == pytest.approx(luo_pairwise(n, a, b, k), rel=1e-9)


# --- speed and errors ------------------------------------------------------------------------------


def test_a_256_rank_alltoall_prediction_is_fast(platform):
    spec = PlatformSpec(racks=4, nodes_per_rack=16, cores=4, seed=1)
    links_dir = Path(platform.out_dir).parent / "speed-platform"
    gp = generate(spec, links_dir)
    net = PredictNetwork.from_ground_truth(gp.out_dir)
    node_of = placement(4, 64)
    predict_collective(net, "alltoall", "pair", 1 << 20, node_of)  # warm the library
    t0, c0 = time.perf_counter(), time.process_time()
    p = predict_collective(net, "alltoall", "pair", 1 << 20, node_of)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(f"256-rank pairwise all-to-all of 1 MiB: predicted {p.time * 1e3:.2f} ms in {wall * 1e3:.1f} ms "
          f"({cpu * 1e3:.1f} ms CPU)")
    # Each node link carries 4 x 252 MiB at 12.5 GB/s (docs/reference/benchmark-programs.md: SMPI 85.9 ms).
    assert p.time == pytest.approx(4 * 252 * 2**20 / 12.5e9, rel=0.03)
    assert cpu < 0.10  # goal 50 ms; CPU time, as other jobs share the machine's cores


def test_bad_requests_are_one_line_errors(platform):
    net = PredictNetwork.from_ground_truth(platform.out_dir)
    node_of = placement(1, 8)
    with pytest.raises(RankwiseError, match="unknown alltoall algorithm 'nope' \\(known: pair, ring"):
        predict_collective(net, "alltoall", "nope", 1024, node_of)
    with pytest.raises(RankwiseError, match="unknown collective 'barrier'"):
        predict_collective(net, "barrier", "linear", 1024, node_of)
    with pytest.raises(RankwiseError, match="message size"):
        predict_collective(net, "bcast", "binomial", float("nan"), node_of)
    with pytest.raises(RankwiseError, match="power-of-two"):
        predict_collective(net, "alltoall", "pair", 1024, placement(1, 6))
    with pytest.raises(RankwiseError, match="rank 1 on node 9"):
        predict_collective(net, "bcast", "binomial", 1024, [0, 9])
    with pytest.raises(RankwiseError, match="one time per rank"):
        predict_collective(net, "bcast", "binomial", 1024, node_of, rank_start=[0.0])
    with pytest.raises(RankwiseError, match="ground truth"):
        PredictNetwork.from_ground_truth(Path(platform.out_dir) / "nowhere")
    with pytest.raises(RankwiseError, match="alpha and beta must be 2 x 2"):
        PredictNetwork(["a", "b"], np.zeros((3, 3)), np.zeros((3, 3)))
    bad = PredictNetwork(["a", "b"], np.zeros((2, 2)), np.full((2, 2), -1.0))
    with pytest.raises(RankwiseError, match="finite, >= 0"):
        predict_collective(bad, "bcast", "binomial", 1024, [0, 1])
    assert algorithms("reduce") == ["binomial"] and algorithms("nope") == []


def test_the_models_overheads_come_out_of_alpha_by_the_engines_one_rule(model_file):
    """from_model(overheads=True) is the rule the collectives library's RANKWISE_MODEL follows
    (rw_pnet_from_model): the model's per-node overheads (the median of the others where a node
    has none), or the ones given, taken out of alpha as with_measured_overheads does."""
    from rankwise.model.model import Model

    m = Model.load(model_file)
    m.overhead = np.array([0.2, np.nan, 0.4, 0.3]) * US
    plain = PredictNetwork.from_model(m)
    net = PredictNetwork.from_model(m, overheads=True)
    send = np.array([0.2, 0.3, 0.4, 0.3]) * US
    want = plain.with_measured_overheads(send, np.zeros(4))
    np.testing.assert_allclose(net.overhead, send, rtol=1e-12)
    assert (net.recv_overhead == 0).all()
    np.testing.assert_allclose(net.alpha, want.alpha, rtol=1e-12)
    given = PredictNetwork.from_model(m, overheads=True, send_overhead=1 * US, recv_overhead=0.5 * US)
    np.testing.assert_allclose(given.alpha, plain.with_measured_overheads(1 * US, 0.5 * US).alpha, rtol=1e-12)
    assert PredictNetwork.from_model(m, overheads=False).overhead is None
    with pytest.raises(RankwiseError, match="overheads must be finite"):
        PredictNetwork.from_model(m, overheads=True, send_overhead=-1.0)


def test_measured_links_are_not_confirmed_through_the_c_round_trip():
    """A model's stated links (no capacity spreads) are confirmed, a stress test's are not, and the
    flag survives PredictNetwork's way to C and back (coll tune decides on the C network)."""
    from rankwise.model.model import MEASURED, Link, Model, Spread
    from rankwise.predict.allocation import subset_network

    m = Model.empty([f"n{i}" for i in range(4)], [8, 1024])
    m.group_of = np.array([0, 0, 1, 1])
    m.links = [Link("up-0", 5e9, (0,), None), Link("down-0", 5e9, None, (0,))]
    for i in range(4):
        for j in range(4):
            if i != j:
                m.state[i, j], m.alpha[i, j], m.beta[i, j] = MEASURED, 2e-6, 1e-10
    stated = PredictNetwork.from_model(m)
    assert [link.confirmed for link in stated.links] == [True, True]
    m.spreads = [Spread("up-0", 5e9, 5e9, 5e9, 0.0, 4)]
    measured = PredictNetwork.from_model(m)
    assert [link.confirmed for link in measured.links] == [False, False]
    from rankwise._engine.predict import predict_lib

    ptr = measured._to_c(np.arange(4, dtype=np.int32))
    try:
        again = PredictNetwork._from_c(ptr, measured.names, lambda k: f"l{k}")
    finally:
        predict_lib().rw_pnet_free(ptr)
    assert [link.confirmed for link in again.links] == [False, False]
    assert [link.confirmed for link in subset_network(measured, [0, 2]).links] == [False, False]
