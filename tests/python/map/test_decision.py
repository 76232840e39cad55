"""The predictor decides the mapping (rankwise.map.decision): workloads with
collective calls costed by their algorithms, the congestion search, the
readings against a probe's noise, and the two cases the sum objective got
wrong, measured under SMPI."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from rankwise.traffic import patterns
from rankwise.traffic.collective_calls import CollectiveCall
from rankwise.map.congestion import Congestion, relabel_search
from rankwise.map.decision import decide, steady_caps
from rankwise.map.mapping import Network, map_ranks
from rankwise.traffic.matrix import CommMatrix
from rankwise.model.model import Model
from rankwise.workflows.optimize import plan
from rankwise.predict.predictor import PredictNetwork, predict_collective
from rankwise.measure.probe import LIGHT_SIM_PROBE, probe_sim
from rankwise.cluster.benchmark_programs import run_benchmark
from rankwise.sim.platform import Degraded, PlatformSpec, generate
from rankwise.predict.workload import Phase, Schedule, exchange_time, workload_of
from rankwise.util.errors import RankwiseError


class ProfiledMatrix(CommMatrix):
    """A matrix carrying grouped collective calls, as profiles will."""

    __slots__ = ("collectives",)


def uniform_network(n: int, bw: float = 10e9, alpha: float = 2e-6, caps: bool = True) -> PredictNetwork:
    a = np.full((n, n), alpha)
    b = np.full((n, n), 1 / bw)
    np.fill_diagonal(a, 0.2e-6)
    np.fill_diagonal(b, 1 / 50e9)
    cap = np.full(n, bw) if caps else None
    return PredictNetwork([f"n{i}" for i in range(n)], a, b, inject=cap, eject=None if cap is None else cap.copy())


# ------------------------------------------------------------------ workloads
def test_a_collective_pattern_is_one_call_costed_by_its_algorithm():
    w = workload_of(patterns.generate("collective:ranks=8,bytes=1M,op=bcast,iterations=3"))
    assert w.p2p is None and len(w.calls) == 1
    call = w.calls[0]
    assert call.call.calls == 3 and call.stages == [Schedule("bcast", "binomial", 1 << 20, 0)]
    # allreduce under SMPI's default selector: a reduce onto 0, then a binomial bcast
    w = workload_of(patterns.generate("collective:ranks=8,bytes=4K,op=allreduce"))
    kinds = [type(s) for s in w.calls[0].stages]
    assert kinds == [Phase, Schedule] and w.calls[0].stages[1] == Schedule("bcast", "binomial", 4096, 0)
    # What the search sees is the tree's 7 messages, not the root's 7 logical ones alone: same
    # count, but sent by inner ranks too.
    sent = workload_of(patterns.generate("collective:ranks=8,bytes=1K,op=bcast")).sent()
    assert sent.nnz == 7 and set(sent.src.tolist()) == {0, 2, 4, 6}


def test_a_bcast_is_costed_as_its_tree_not_as_root_to_all():
    net = uniform_network(8)
    node_of = np.arange(8)
    w = workload_of(patterns.generate("collective:ranks=8,bytes=1M,op=bcast"))
    tree = predict_collective(net, "bcast", "binomial", 1 << 20, node_of).time
    assert w.time(net, node_of) == pytest.approx(tree)
    # root-to-all as one phase would be 7 MiB through the root's NIC: over twice the tree's time
    flat = workload_of(CommMatrix(8, np.zeros(7), np.arange(1, 8), np.ones(7), np.full(7, 1 << 20)))
    assert flat.time(net, node_of) > 2 * tree


def test_recorded_calls_leave_the_point_to_point_part():
    p2p = patterns.generate("ring:ranks=8,bytes=64K,bidirectional=1")
    bcast = patterns.collective(8, 4096, op="bcast", root=2, iterations=5)
    sub = patterns.collective(4, 1024, op="allreduce")
    members = np.array([1, 3, 5, 7])
    parts = [p2p, bcast, CommMatrix(8, members[sub.src], members[sub.dst], sub.msgs, sub.bytes)]
    m = ProfiledMatrix(8, *[np.concatenate([getattr(p, f) for p in parts]) for f in ("src", "dst", "msgs", "bytes")])
    m.collectives = [CollectiveCall("bcast", 4096, calls=5, root=2),
                     CollectiveCall("allreduce", 1024, ranks=(1, 3, 5, 7))]
    w = workload_of(m)
    for f in ("src", "dst", "msgs", "bytes"):
        assert np.array_equal(getattr(w.p2p, f), getattr(p2p, f)), f
    assert [c.call.op for c in w.calls] == ["bcast", "allreduce"]
    assert w.calls[1].ranks.tolist() == [1, 3, 5, 7]


def test_the_pairwise_exchange_is_the_predictors_pairwise_alltoall():
    net = uniform_network(8)
    node_of = np.repeat(np.arange(8), 2)
    for size in (1, 4096, 1 << 20):  # eager, and rendezvous sends
        m = patterns.alltoall(16, size)
        want = predict_collective(net, "alltoall", "pair", size, node_of).time
        assert exchange_time(net, m, 1, node_of) == pytest.approx(want, rel=1e-9)


def test_groups_are_costed_as_the_alltoallv_the_program_runs():
    w = workload_of(patterns.generate("groups:groups=4,per_group=4,bytes=64K,link_bytes=4K,iterations=2"))
    assert w.exchange and w.iterations == 2 and not w.calls


@pytest.mark.parametrize("mpi, n, at_once", [
    ("smpi", 16, False), ("openmpi", 2, False), ("openmpi", 4, True), ("openmpi", 63, True),
    ("openmpi", 64, False), ("openmpi", 128, True), ("openmpi", 256, False), ("openmpi", 1024, True),
    ("hydra", 8, True), ("other", 8, False),
])
def test_a_real_mpi_runs_the_groups_alltoallv_as_its_default_does(mpi, n, at_once):
    spec = f"groups:groups=2,per_group={n // 2},bytes=256K,link_bytes=256K,skip=1,iterations=5,seed=0"
    w = workload_of(patterns.generate(spec), mpi=mpi)
    assert w.exchange == (not at_once) and w.iterations == 5
    fft = workload_of(patterns.generate("fft:grid=16x16x16,ranks=16"), mpi=mpi)
    assert fft.exchange  # its rows' and columns' exchanges stay pairwise


def test_at_once_a_slow_nic_costs_its_bytes_not_every_step_that_waits_for_it():
    # 8 ranks in 2 groups of 4, one node at a quarter: the pairwise exchange makes every
    # rank wait for the slow one's steps; posted at once, only its own bytes wait for it.
    net = uniform_network(8, caps=True)
    net.inject[3] = net.eject[3] = net.inject[0] / 4
    net.beta[3, :] = net.beta[:, 3] = 4 / 10e9
    m = patterns.generate("groups:groups=2,per_group=4,bytes=256K,link_bytes=256K,skip=1,iterations=5,seed=0")
    slow, fast = np.arange(8), np.array([0, 1, 2, 4, 5, 6, 7, 4])
    pair, once = workload_of(m, mpi="smpi"), workload_of(m, mpi="openmpi")
    assert once.time(net, slow) < pair.time(net, slow)
    assert once.time(net, slow) / once.time(net, fast) != pytest.approx(pair.time(net, slow) / pair.time(net, fast),
                                                                      rel=0.05)


def test_optimize_costs_the_job_as_its_launcher_runs_it(tmp_path):
    from rankwise.workflows.optimize import job_mpi

    assert job_mpi(None, None) == "smpi"
    assert job_mpi("mpirun -np 4", object()) == "smpi"  # under the simulator: rankwise's pinned SMPI
    fake = tmp_path / "mpirun"
    fake.write_text("#!/bin/sh\necho 'mpirun (Open MPI) 4.1.4'\n")
    fake.chmod(0o755)
    assert job_mpi(f"{fake} -np 4", None) == "openmpi"
    fake.write_text("#!/bin/sh\necho 'HYDRA build details:'\n")
    assert job_mpi(f"{fake} -np 4", None) == "hydra"
    fake.write_text("#!/bin/sh\nexit 1\n")
    assert job_mpi(f"{fake} -np 4", None) == "other"
    with pytest.raises(RankwiseError, match="launcher .* not found"):  # before any mapping is written
        job_mpi(f"{tmp_path}/missing -np 4", None)


# ------------------------------------------------------------------ congestion
def test_the_congestion_search_moves_ranks_off_a_slow_nic():
    net = uniform_network(16)
    net.inject[5] = net.eject[5] = net.inject[0] / 4
    m = patterns.alltoall(16, 1 << 20)
    block = np.repeat(np.arange(8), 2)
    objective = Congestion(net, m, 16)
    moved = relabel_search(objective, block, np.full(16, 2))
    assert 5 not in set(moved.tolist()) and np.bincount(moved, minlength=16).max() == 2
    assert objective.cost(moved)[0] < objective.cost(block)[0] / 3


def test_steady_caps_forget_noise_but_keep_a_slow_nic():
    net = uniform_network(6)
    net.inject[:] = [10e9, 10.7e9, 9.6e9, 2.5e9, 10e9, 10.2e9]
    steady = steady_caps(net)
    assert steady.inject.tolist() == [10e9] * 3 + [2.5e9] + [10e9] * 2


def test_a_gain_found_in_the_caps_noise_is_not_taken():
    # A reduce onto rank 0: moving the root to the node whose cap is the
    # luckiest sample (+8 %) looks faster on the caps as measured.
    net = uniform_network(8)
    net.eject[3] = net.eject[3] * 1.08
    hosts = Network(net.names, np.full(8, 2), net.alpha, net.beta)
    m = patterns.generate("collective:ranks=16,bytes=1M,op=reduce")
    d = decide(m, hosts, net)
    assert any(c.time < d.default.time * 0.97 for c in d.candidates[1:])  # the lure is there
    assert d.result.algorithm == "block" and d.gain == 1.0


# ------------------------------------------------------------------ measured under SMPI
def _measure(xml, program, args, table, hosts_before, hosts_after):
    runs = [run_benchmark(program, args, sim=xml, hosts=h) for h in (hosts_before, hosts_after)]
    before, after = (np.asarray((r[table] if table else r.table).median_us) for r in runs)
    return before / after


@pytest.fixture(scope="module")
def racks(tmp_path_factory):
    """2 racks x 4 nodes x 2 cores: node 5 at a quarter of the bandwidth,
    node 2 at 4x the latency, rack 1's uplink at 0.3 of non-blocking. Probed
    without the reference pass (`--no-references`): the round-mates' contention
    left in the pairs is what lured the old objective, and the guard below must
    hold on such a model too (with the pass, the old objective finds no gain)."""
    out = tmp_path_factory.mktemp("decision-racks")
    spec = PlatformSpec(racks=2, nodes_per_rack=4, cores=2, seed=3,
                        degraded=[Degraded("node", 5, bw_factor=0.25), Degraded("node", 2, lat_factor=4.0),
                                  Degraded("uplink", 1, bw_factor=0.3)])
    gen = generate(spec, out / "platform")
    return gen, probe_sim(gen.platform_xml, out / "model.rwm", replace(LIGHT_SIM_PROBE, references=False), ranks_per_node=2,
                          show_progress=False)


def test_a_broadcast_on_a_fixed_allocation_is_no_longer_made_slower(racks):
    """Issue: a bcast on a fixed allocation predicted x1.06, measured x0.85 at
    1 MiB (the root-to-all matrix is not what the tree sends)."""
    gen, model = racks
    hosts = [(h, 2) for h in model.names]  # 16 slots, 16 ranks: only the arrangement can change
    m = patterns.generate("collective:ranks=16,bytes=1M,op=bcast")
    net = Network.from_model(model, hosts)
    args = ["--collectives", "bcast", "--sizes", "1M", "--iterations", "2"]
    block = [net.names[v] for v in np.repeat(np.arange(8), 2)]
    # Before: the sum objective on the logical matrix moved ranks and called it a gain.
    old = map_ranks(m, net)
    old_measured = _measure(gen.platform_xml, "collectives", args, "bcast", block,
                            [net.names[v] for v in old.node_of])[0]
    assert old.gain > 1.02 and old_measured < 0.98
    # Now: kept, or a gain that is measured.
    p = plan(model, m, hosts)
    measured = _measure(gen.platform_xml, "collectives", args, "bcast", p.before_hosts, p.after_hosts)[0]
    assert measured >= 0.98
    assert abs(p.result.gain / measured - 1) <= 0.20


def test_many_flows_through_a_slow_nic_are_seen(tmp_path):
    """Issue: NAS-IS-like all-to-all, 16 ranks on a 16-node platform whose
    node 5 has a quarter of the bandwidth; many small messages make the sum
    objective blind to it, and it kept node 5 in the job."""
    spec = PlatformSpec(racks=1, nodes_per_rack=16, cores=2, seed=2, degraded=[Degraded("node", 5, bw_factor=0.25)])
    gen = generate(spec, tmp_path / "platform")
    model = probe_sim(gen.platform_xml, tmp_path / "model.rwm", LIGHT_SIM_PROBE, ranks_per_node=2,
                      show_progress=False)
    hosts = [(h, 2) for h in model.names]
    keys = patterns.alltoall(16, 4096, iterations=10)  # the key exchange
    counts = patterns.alltoall(16, 4, iterations=100)  # bucket counts, small and many
    m = CommMatrix(16, *[np.concatenate([getattr(keys, f), getattr(counts, f)]) for f in ("src", "dst", "msgs", "bytes")])
    net = Network.from_model(model, hosts)
    slow = model.names.index("node-5")
    assert slow in map_ranks(m, net).node_of  # the sum objective's choice holds the slow NIC
    p = plan(model, m, hosts)
    assert slow not in p.result.node_of and p.result.gain > 1.3
    measured = _measure(gen.platform_xml, "alltoall", ["--sizes", "4K", "--iterations", "2"], None,
                        p.before_hosts, p.after_hosts)[0]
    predicted = p.predicted_speedup(workload_of(patterns.alltoall(16, 4096)))
    assert measured > 1.3 and abs(predicted / measured - 1) <= 0.20


def test_map_prints_the_predictors_decision(tmp_path):
    from conftest import run_cli

    spec = PlatformSpec(racks=1, nodes_per_rack=16, cores=2, seed=2, degraded=[Degraded("node", 5, bw_factor=0.25)])
    gen = generate(spec, tmp_path / "platform")
    probe_sim(gen.platform_xml, tmp_path / "model.rwm", LIGHT_SIM_PROBE, ranks_per_node=2, show_progress=False)
    keys, counts = patterns.alltoall(16, 4096, iterations=10), patterns.alltoall(16, 4, iterations=100)
    CommMatrix(16, *[np.concatenate([getattr(keys, f), getattr(counts, f)])
                     for f in ("src", "dst", "msgs", "bytes")]).save(tmp_path / "is.rwc")
    r = run_cli("map", "--model", tmp_path / "model.rwm", "--slots", "2", "--matrix", tmp_path / "is.rwc",
                "--format", "slurm", "-o", tmp_path / "hosts")
    assert r.returncode == 0, r.stderr
    assert "time (predictor, decides)" in r.stdout
    hosts = (tmp_path / "hosts").read_text().split()
    assert len(hosts) == 16 and "node-5" not in hosts


def test_a_forwarding_stencil_is_costed_phase_by_phase():
    m = patterns.generate("stencil3d:grid=4x4x4,bytes=16K,mode=3d")
    w = workload_of(m)
    assert w.phases is not None and len(w.phases) == 3
    assert sum(p.nnz for p in w.phases) == m.nnz
    # axis by axis: 1, 3 and 9 blocks
    assert [int(p.bytes.max()) for p in w.phases] == [16384, 3 * 16384, 9 * 16384]
    net = uniform_network(64)
    one_phase = workload_of(CommMatrix(64, m.src, m.dst, m.msgs, m.bytes))
    assert w.time(net, np.arange(64)) > one_phase.time(net, np.arange(64))
