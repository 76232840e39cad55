"""The triple trinary tree broadcast, reduce and allreduce (RANKWISE_COLL_BCAST=trinary, Ajima 2018): the
MPI's own results under Open MPI and SMPI (coll_check: datatypes, IN_PLACE where MPI has it, every root, counts 0, 1, 7 and
one not divisible by 3, many segments), once under AddressSanitizer, and on a small simulated torus
faster than the binomial tree and within 15 % of the predictor."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_coll_lib import (ASAN_ENV, asan_coll_check, check_mpi, check_smpi, checks_passed, needs_mpi,  # noqa: F401
                           needs_smpi, ran, run_mpi)

from rankwise.predict.predictor import placement
from rankwise.sim.platform import PlatformSpec, generate

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "studies" / "coll"))
import tofu_collectives as study  # noqa: E402


def trinary_env(**extra: str) -> dict[str, str]:
    return {"RANKWISE_COLL_BCAST": "trinary", "RANKWISE_COLL_REDUCE": "trinary", "RANKWISE_COLL_ALLREDUCE": "trinary",
            "RANKWISE_COLL_TRACE": "1", **extra}


def ran_trinary(stderr: str) -> None:
    """bcast, reduce and allreduce ran the trinary trees (non-commutative reductions pass through)."""
    algs = ran(stderr)
    assert all("trinary" in algs.get(op, set()) for op in ("bcast", "reduce", "allreduce")), algs


# (ranks, segment bytes or None): 2 and 3 ranks share edges between the trees; 100 bytes makes the
# thirds of the large count many segments, more than the receive window and the ring of sends
MPI_CASES = [(2, None), (3, None), (4, None), (5, "100"), (7, None), (8, "7")]


@needs_mpi
@pytest.mark.parametrize("n,segment", MPI_CASES)
def test_trinary_gives_the_mpi_results_under_open_mpi(check_mpi, n, segment):  # noqa: F811
    env = trinary_env(**({"RANKWISE_COLL_SEGMENT": segment} if segment else {}))
    r = run_mpi([str(check_mpi), "2001"], n, env, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    assert checks_passed(r.stdout) > 1000
    ran_trinary(r.stderr)


@needs_mpi
def test_trinary_under_address_sanitizer(tmp_path):
    exe = asan_coll_check(tmp_path)
    r = run_mpi([str(exe), "999"], 5, {**trinary_env(RANKWISE_COLL_SEGMENT="300"), **ASAN_ENV}, timeout=300)
    assert "AddressSanitizer" not in r.stderr and "runtime error" not in r.stderr, r.stderr[-4000:]
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    checks_passed(r.stdout)


@needs_smpi
@pytest.mark.parametrize("n", [7, 10])
def test_trinary_gives_the_mpi_results_under_smpi(check_smpi, small_platform, tmp_path, n):  # noqa: F811
    hosts = small_platform.hostfile.read_text().split()
    hostfile = tmp_path / "hosts"
    hostfile.write_text("".join(f"{hosts[r // 2]}\n" for r in range(n)))
    env = {**os.environ, **trinary_env(RANKWISE_COLL_SEGMENT="1000")}
    env.pop("SMPI_PRETEND_CC", None)
    r = subprocess.run(["smpirun", "-np", str(n), "-platform", str(small_platform.platform_xml), "-hostfile",
                        str(hostfile), "--log=root.thres:critical", "--cfg=smpi/simulate-computation:no",
                        str(check_smpi), "301"], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    assert checks_passed(r.stdout) > 1000
    ran_trinary(r.stderr)


@needs_smpi
def test_trinary_beats_binomial_on_a_torus_as_predicted(tmp_path):
    """3x3x2 torus, one rank per node, 1 MiB from rank 0: at least 1.5x faster than the binomial tree,
    faster than SMPI's scatter + allgather broadcasts, the predictor within 15 %."""
    exe = study.build(tmp_path)
    plat = generate(PlatformSpec(topology="torus:3,3,2", cores=1, seed=1), tmp_path / "torus")
    hosts = study.hostfile(plat, 18, tmp_path / "hosts")
    size = 1 << 20
    t = {v: study.measure(exe, plat, hosts, 18, v, [size])[size]
         for v in ("trinary", "binomial", "smpi:scatter_rdb_allgather", "smpi:scatter_LR_allgather")}
    assert t["binomial"] / t["trinary"] >= 1.5, t
    assert t["trinary"] < min(t["smpi:scatter_rdb_allgather"], t["smpi:scatter_LR_allgather"]), t
    net = study.PredictNetwork.from_ground_truth(plat.out_dir).with_overheads(study.OVERHEAD, study.OVERHEAD)
    predicted = study.predict_library(net, placement(1, 18), "bcast", "trinary", size)
    assert abs(predicted / t["trinary"] - 1) <= 0.15, (predicted, t["trinary"])


@needs_smpi
def test_segments_go_on_in_order_as_predicted(tmp_path):
    """8 ranks on one rack, no overheads: where a third ends in a short segment (60 and 80 KiB: 8 KiB
    segments, the last 4 and 2.7 KiB) the short one arrives first, but the library forwards (reduce: folds)
    segments in order. The broadcast, reduce and allreduce within 2 % of SMPI at those sizes and at 72 KiB
    (whole segments); the predictor forwarded the short segment on arrival and was 7.6-12.2 % short."""
    exe = study.build(tmp_path)
    plat = generate(PlatformSpec(racks=1, nodes_per_rack=8, cores=1, seed=1), tmp_path / "rack")
    hosts = study.hostfile(plat, 8, tmp_path / "hosts")
    net = study.PredictNetwork.from_ground_truth(plat.out_dir)
    sizes = [61440, 73728, 81920]
    for op in ("bcast", "reduce", "allreduce"):
        measured = study.measure(exe, plat, hosts, 8, "trinary", sizes, op, overhead=0.0)
        for size in sizes:
            predicted = study.predict_library(net, 8, op, "trinary", size)
            assert abs(predicted / measured[size] - 1) <= 0.02, (op, size, predicted, measured[size])


@pytest.fixture(scope="module")
def small_torus(tmp_path_factory):
    return generate(PlatformSpec(topology="torus:3,3,2", cores=1, seed=1), tmp_path_factory.mktemp("torus"))


def test_the_tuner_chooses_trinary_for_long_broadcasts_and_the_rules_name_it(small_torus, tmp_path):
    from rankwise.coll.selection import Rules
    from rankwise.coll.tune import format_rules, tune_allocation
    from rankwise.predict.predictor import placement

    net = study.PredictNetwork.from_ground_truth(small_torus.out_dir).with_overheads(study.OVERHEAD, study.OVERHEAD)
    node_of = placement(1, net.n_nodes)
    rules = tune_allocation(net, node_of, ["bcast"], [1024, 1 << 20], [0])
    big = next(r.decision for r in rules if r.lo <= 1 << 20 <= r.hi)
    assert big.choice.algorithm == "trinary" and big.choice.parents is None
    # its prediction is the library's schedule's
    assert big.choice.time == pytest.approx(study.predict_library(net, node_of, "bcast", "trinary", 1 << 20))
    text = format_rules(rules, node_of.size, ranks_per_node="1", eager_limit=65536, min_gain=0.05, model="torus",
                        nodes=net.names)
    assert "alg=trinary segment=0" in text
    path = tmp_path / "rules.rwr"
    path.write_text(text)
    assert Rules(path).lookup("bcast", node_of.size, 0, 1 << 20).algorithm == "trinary"


def test_trinary_rule_for_another_collective_is_one_line(tmp_path):
    from rankwise.coll.selection import Rules
    from rankwise.util.errors import RankwiseError

    path = tmp_path / "rules.rwr"
    path.write_text("rankwise-coll-rules 1\ncomm-size 4\nrule op=gather root=0 bytes=0:10 alg=trinary\n")
    with pytest.raises(RankwiseError) as err:
        Rules(path)
    assert "rules.rwr:3: alg=trinary is for bcast, reduce and allreduce only" in str(err.value)
    assert "\n" not in str(err.value)
    # the reduce and the allreduce take it
    path.write_text("rankwise-coll-rules 1\ncomm-size 4\nrule op=reduce root=0 bytes=0:10 alg=trinary\n"
                    "rule op=allreduce root=* bytes=0:10 alg=trinary\n")
    rules = Rules(path)
    assert rules.lookup("reduce", 4, 0, 5).algorithm == rules.lookup("allreduce", 4, -1, 5).algorithm == "trinary"


@needs_smpi
def test_the_library_runs_trinary_from_the_rules(small_torus, tmp_path):
    """The rules the tuner writes make MPI_Bcast run the trinary trees, to the nanosecond of the forced run."""
    from rankwise.coll.tune import format_rules, tune_allocation
    from rankwise.predict.predictor import placement
    from rankwise.sim.smpi import overhead_settings, smpirun_command

    net = study.PredictNetwork.from_ground_truth(small_torus.out_dir).with_overheads(study.OVERHEAD, study.OVERHEAD)
    n = net.n_nodes
    rules = tune_allocation(net, placement(1, n), ["bcast"], [1 << 20], [0])
    path = tmp_path / "rules.rwr"
    path.write_text(format_rules(rules, n, ranks_per_node="1", eager_limit=65536, min_gain=0.05, model="torus",
                                 nodes=net.names))
    exe = study.build(tmp_path)
    hosts = study.hostfile(small_torus, n, tmp_path / "hosts")
    forced = study.measure(exe, small_torus, hosts, n, "trinary", [1 << 20])[1 << 20]
    env = {k: v for k, v in os.environ.items() if not k.startswith("RANKWISE_COLL_")}
    env.update(RANKWISE_COLL_RULES=str(path), RANKWISE_COLL_TRACE="1")
    cmd = smpirun_command(exe, ["bcast", str(1 << 20)], small_torus.platform_xml, hosts, n,
                          overhead_settings(study.OVERHEAD, study.OVERHEAD))
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert f"rankwise-coll: bcast trinary {1 << 20} bytes (rules)" in r.stderr
    assert float(r.stdout.split()[1]) == pytest.approx(forced, abs=2e-9)


@needs_smpi
def test_trees_along_the_model_beat_rank_order_on_a_shuffled_torus(small_torus, tmp_path):
    """3x3x2 torus, its 18 ranks dealt to the nodes in a seeded random order, 1 MiB: with the platform's
    model (RANKWISE_MODEL) the library lays the trees along the network and broadcasts faster than over
    rank order; its broadcast, reduce and allreduce within 15 % of the predictor."""
    exe = study.build(tmp_path)
    hosts = study.hostfile(small_torus, 18, tmp_path / "hosts", shuffle_seed=1)
    net = study.PredictNetwork.from_ground_truth(small_torus.out_dir).with_overheads(study.OVERHEAD, study.OVERHEAD)
    model = study.model_file(net, tmp_path / "torus.rwm")
    node_of = study.placement_of(net, hosts)
    assert list(node_of) != sorted(node_of)
    size = 1 << 20
    along = study.measure(exe, small_torus, hosts, 18, "trinary", [size], "bcast", model)[size]
    rank_order = study.measure(exe, small_torus, hosts, 18, "trinary:rank", [size], "bcast", model)[size]
    assert along < 0.97 * rank_order, (along, rank_order)  # 0.176 against 0.186 ms
    for op in ("bcast", "reduce", "allreduce"):
        measured = along if op == "bcast" else study.measure(exe, small_torus, hosts, 18, "trinary", [size], op,
                                                             model)[size]
        predicted = study.predict_library(net, node_of, op, "trinary", size)
        assert abs(predicted / measured - 1) <= 0.15, (op, predicted, measured)


@needs_smpi
def test_the_rules_carry_the_order_the_trees_were_costed_in(small_torus, tmp_path):
    """Ranks shuffled over the torus and rules only (no model in the job): the rules' trinary-order makes
    the library lay the trees as the tuner costed them, along the network, to the nanosecond of the run
    with the model; without it they went in rank order (x2.5 slower than predicted on a shuffled fat tree
    with a degraded node, docs/results/coll.md)."""
    from rankwise.coll.selection import Rules, trinary_order
    from rankwise.coll.tune import format_rules, tune_allocation
    from rankwise.sim.smpi import overhead_settings, smpirun_command

    exe = study.build(tmp_path)
    hosts = study.hostfile(small_torus, 18, tmp_path / "hosts", shuffle_seed=1)
    net = study.PredictNetwork.from_ground_truth(small_torus.out_dir).with_overheads(study.OVERHEAD, study.OVERHEAD)
    node_of = study.placement_of(net, hosts)
    size = 1 << 20
    rules = tune_allocation(net, node_of, ["bcast"], [size], [0])
    assert rules[0].decision.choice.algorithm == "trinary"
    order = trinary_order(net, node_of)
    assert sorted(order) == list(range(18)) and list(order) != list(range(18))
    path = tmp_path / "rules.rwr"
    path.write_text(format_rules(rules, 18, ranks_per_node="1", eager_limit=65536, min_gain=0.05, model="torus",
                                 nodes=net.names, trinary_order=order))
    assert list(Rules(path).trinary_order) == list(order)
    along = study.measure(exe, small_torus, hosts, 18, "trinary", [size], "bcast",
                          study.model_file(net, tmp_path / "torus.rwm"))[size]
    env = {k: v for k, v in os.environ.items() if not k.startswith("RANKWISE_COLL_") and k != "RANKWISE_MODEL"}
    env.update(RANKWISE_COLL_RULES=str(path), RANKWISE_COLL_TRACE="1")
    cmd = smpirun_command(exe, ["bcast", str(size)], small_torus.platform_xml, hosts, 18,
                          overhead_settings(study.OVERHEAD, study.OVERHEAD))
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert f"rankwise-coll: bcast trinary {size} bytes (rules)" in r.stderr
    assert float(r.stdout.split()[1]) == pytest.approx(along, abs=2e-9)


def test_the_rules_reader_gives_the_trinary_order(tmp_path):
    """(Malformed trinary-order lines: test_coll_tune.test_bad_rules_file_one_line.)"""
    from rankwise.coll.selection import Rules

    path = tmp_path / "rules.rwr"
    path.write_text("rankwise-coll-rules 1\ncomm-size 4\ntrinary-order 3,1,0,2\n")
    assert list(Rules(path).trinary_order) == [3, 1, 0, 2]
    path.write_text("rankwise-coll-rules 1\ncomm-size 4\n")
    assert Rules(path).trinary_order is None


@needs_smpi
def test_trinary_along_a_model_gives_the_mpi_results_under_smpi(check_smpi, small_torus, tmp_path):
    """The trees laid along the model's network (ranks shuffled over the torus, so not rank order): the MPI's
    own results for every datatype, root and count."""
    hosts = study.hostfile(small_torus, 18, tmp_path / "hosts", shuffle_seed=1)
    net = study.PredictNetwork.from_ground_truth(small_torus.out_dir)
    model = study.model_file(net, tmp_path / "torus.rwm")
    env = {**os.environ, **trinary_env(RANKWISE_COLL_SEGMENT="1000", RANKWISE_MODEL=str(model))}
    env.pop("SMPI_PRETEND_CC", None)
    r = subprocess.run(["smpirun", "-np", "18", "-platform", str(small_torus.platform_xml), "-hostfile",
                        str(hosts), "--log=root.thres:critical", "--cfg=smpi/simulate-computation:no",
                        str(check_smpi), "301"], capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    assert checks_passed(r.stdout) > 1000
    ran_trinary(r.stderr)
    assert "warning" not in r.stderr and "error" not in r.stderr, r.stderr[-2000:]


def test_the_tuner_costs_trinary_reduce_and_allreduce_for_long_vectors(small_torus):
    """rw_coll_decide has the trinary candidate for reduce and allreduce at and above the eager limit, costed
    with the library's schedule; not below it."""
    from rankwise.coll.tune import tune_allocation

    net = study.PredictNetwork.from_ground_truth(small_torus.out_dir).with_overheads(study.OVERHEAD, study.OVERHEAD)
    node_of = placement(1, net.n_nodes)
    for op, root in (("reduce", 0), ("allreduce", -1)):
        rules = tune_allocation(net, node_of, [op], [1024, 1 << 20], [root])
        small = next(r.decision for r in rules if r.lo <= 1024 <= r.hi)
        big = next(r.decision for r in rules if r.lo <= 1 << 20 <= r.hi)
        assert "trinary" not in [c.algorithm for c in small.candidates]
        tri = [c for c in big.candidates if c.algorithm == "trinary"]
        assert len(tri) == 1, [c.algorithm for c in big.candidates]
        assert tri[0].time == pytest.approx(study.predict_library(net, node_of, op, "trinary", 1 << 20))
