"""`rankwise coll predict` and `rankwise coll tune` as a user runs them: the
table per size, the rules file the library reads, one-line errors."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_one_line_error, run_cli

from rankwise.coll.selection import Rules
from rankwise.model.model import MEASURED, Model

ALPHA, BETA = 5e-6, 1e-9


def make_model(path, n_nodes=8, slow=(), knee=0):
    m = Model.empty([f"node-{i}" for i in range(n_nodes)], [8, 65536], [2] * n_nodes)
    alpha, beta = np.full((n_nodes, n_nodes), ALPHA), np.full((n_nodes, n_nodes), BETA)
    for s in slow:
        for a in (alpha, beta):
            a[s, :] *= 10
            a[:, s] *= 10
    m.alpha[:], m.beta[:] = alpha, beta
    m.state[:] = MEASURED
    np.fill_diagonal(m.state, 0)
    m.intra_alpha[:], m.intra_beta[:] = 5e-7, 1e-10
    m.knee = knee
    m.save(path)
    return path


@pytest.fixture
def model(tmp_path):
    return make_model(tmp_path / "net.rwm", slow=[3])


def test_predict_table(model):
    r = run_cli("coll", "predict", "--model", model, "--ranks", 8, "--op", "bcast", "--sizes", "8:1K",
                "--overhead", "1e-6")
    assert r.returncode == 0, r.stderr
    for word in ("size", "MPI: ", "binomial", "eager", "runs", "1K", "vs MPI"):
        assert word in r.stdout
    assert r.stdout.count("*") == 8  # one choice per size


def test_predict_one_algorithm_and_plot(model, tmp_path):
    png = tmp_path / "bcast.png"
    r = run_cli("coll", "predict", "--model", model, "--ranks", 16, "--ranks-per-node", 2, "--op", "gather",
                "--sizes", "64,512", "--algorithm", "volume", "--plot", png)
    assert r.returncode == 0, r.stderr
    assert png.read_bytes()[:4] == b"\x89PNG"
    table = r.stdout.split("vs MPI", 1)[1].split("runs:", 1)[0]  # below the header, above the summary
    assert "volume" in table and "eager" not in table  # only the volume tree is a candidate


def test_tune_writes_rules_the_engine_reads(model, tmp_path):
    out = tmp_path / "rules.rwr"
    r = run_cli("coll", "tune", "--model", model, "--ranks", 8, "--sizes", "8,1K,64K", "--roots", "0,2",
                "--overhead", "1e-6", "--max-evals", 40, "-o", out)
    assert r.returncode == 0, r.stderr
    rules = Rules(out)
    assert rules.comm_size == 8 and len(rules) >= 8  # rooted ops x 2 roots and the unrooted ones, passthrough classes merged
    text = out.read_text()
    assert "rankwise-coll-rules 1" in text and "model net.rwm" in text
    # the slow node 3 forwards to nobody in any bcast tree chosen from root 0
    c = rules.lookup("bcast", 8, 0, 8)
    if c.parents is not None:
        assert 3 not in c.parents


def test_predict_and_tune_allreduce_allgather(model, tmp_path):
    r = run_cli("coll", "predict", "--model", model, "--ranks", 16, "--ranks-per-node", 2, "--op", "allreduce",
                "--sizes", "8,16K", "--overhead", "1e-6")
    assert r.returncode == 0, r.stderr
    assert "allreduce, 16 ranks" in r.stdout and "from rank" not in r.stdout
    for word in ("MPI: ", "knomial", "recursive_doubling", "ring", "hier"):
        assert word in r.stdout
    assert r.stdout.count("*") == 2
    out = tmp_path / "rules.rwr"
    r = run_cli("coll", "tune", "--model", model, "--ranks", 16, "--ranks-per-node", 2, "--ops",
                "allreduce,allgather", "--sizes", "8,1K,64K", "--overhead", "1e-6", "-o", out)
    assert r.returncode == 0, r.stderr
    rules = Rules(out)
    text = out.read_text()
    assert "op=allreduce root=*" in text and "op=allgather root=*" in text
    for op in ("allreduce", "allgather"):
        for nbytes in (8, 1024, 1 << 20):
            assert rules.lookup(op, 16, -1, nbytes).algorithm in (
                "passthrough", "binomial", "knomial", "recursive_doubling", "ring", "hier")


def test_tune_takes_the_models_knee(tmp_path):
    model = make_model(tmp_path / "knee.rwm", knee=4096)
    out = tmp_path / "rules.rwr"
    r = run_cli("coll", "tune", "--model", model, "--ranks", 4, "--ops", "bcast", "--sizes", "8", "-o", out)
    assert r.returncode == 0, r.stderr
    assert "eager-limit 4096" in out.read_text()


def test_tune_on_a_platform_subset(small_platform, tmp_path):
    out = tmp_path / "rules.rwr"
    r = run_cli("coll", "tune", "--platform", small_platform.out_dir, "--nodes", "node-0,node-5,node-2,node-6",
                "--ranks", 8, "--ops", "bcast,scatter", "--sizes", "8,4K", "-o", out)
    assert r.returncode == 0, r.stderr
    assert "nodes node-0,node-5,node-2,node-6" in out.read_text()


@pytest.mark.parametrize("args, code, text", [
    (["predict", "--op", "scan", "--ranks", 8, "--sizes", "8"], 2, "--op: unknown operation 'scan'"),
    (["predict", "--op", "bcast", "--ranks", 8, "--algorithm", "volume"], 2,
     "--algorithm: bcast has no candidate 'volume'"),
    (["predict", "--op", "bcast", "--ranks", 8, "--sizes", "0:8"], 2, "--sizes: 0 is out of range"),
    (["predict", "--op", "bcast", "--ranks", 8, "--sizes", "4G"], 2, "--sizes: 4G is out of range"),
    (["predict", "--op", "bcast", "--ranks", 8, "--root", 8], 2, "--root: rank 8 is not one of the 8 ranks"),
    (["predict", "--op", "bcast", "--ranks", 8, "--min-gain", 1.5], 2, "--min-gain must be in [0, 1)"),
    (["predict", "--op", "bcast", "--ranks", 8, "--nodes", "node-0,nowhere"], 1,
     "node 'nowhere' is not in the model"),
    (["predict", "--op", "bcast", "--ranks", 99, "--ranks-per-node", 2], 2, "need 50 nodes"),
    (["tune", "--ranks", 8, "--ops", "bcast,scan", "-o", "x.rwr"], 2, "--ops: unknown operation 'scan'"),
    (["tune", "--ranks", 8, "--roots", "0,9", "-o", "x.rwr"], 2, "--roots: rank 9 is not one of the 8 ranks"),
])
def test_one_line_errors(model, tmp_path, args, code, text):
    r = run_cli("coll", *args[:1], "--model", model, *args[1:], cwd=tmp_path)
    assert r.returncode == code, r.stderr
    assert_one_line_error(r, text)
    assert not (tmp_path / "x.rwr").exists()


def test_network_needed_once(model, tmp_path):
    r = run_cli("coll", "predict", "--op", "bcast", "--ranks", 8)
    assert_one_line_error(r, "give the network as --model FILE")
    r = run_cli("coll", "predict", "--op", "bcast", "--ranks", 8, "--model", model, "--platform", tmp_path)
    assert_one_line_error(r, "give the network as --model FILE")


def test_missing_model_and_output_directory(tmp_path, model):
    r = run_cli("coll", "tune", "--model", tmp_path / "none.rwm", "--ranks", 4, "-o", tmp_path / "r.rwr")
    assert r.returncode == 1
    assert_one_line_error(r, "none.rwm")
    r = run_cli("coll", "tune", "--model", model, "--ranks", 4, "-o", tmp_path)
    assert_one_line_error(r, str(tmp_path))


def test_the_models_send_overhead_is_used(tmp_path):
    """A model with a per-node send overhead: the nodes without one take the
    median; --overhead replaces them all."""
    from rankwise.predict.allocation import collective_allocation as _allocation

    path = make_model(tmp_path / "o.rwm", n_nodes=4)
    m = Model.load(path)
    m.overhead = np.array([1e-6, np.nan, 3e-6, 2e-6])
    m.save(path)
    net, node_of, counts, knee, _ = _allocation(path, None, None, None, 8, 2, None, False)
    np.testing.assert_allclose(net.overhead, [1e-6, 2e-6, 3e-6, 2e-6])
    assert node_of.tolist() == [0, 0, 1, 1, 2, 2, 3, 3] and counts == [2, 2, 2, 2] and knee == 0
    net, *_ = _allocation(path, None, None, None, 8, 2, 5e-7, False)
    np.testing.assert_allclose(net.overhead, [5e-7] * 4)


def test_the_models_overheads_are_taken_out_of_alpha(tmp_path):
    """A probed alpha holds the ping-pong's send and receive overheads, which the predictor
    charges apart: both come from the model (--recv-overhead replaces the model's) and alpha
    loses them, so an eager message still costs the alpha measured."""
    from rankwise.predict.allocation import collective_allocation as _allocation

    path = make_model(tmp_path / "o.rwm", n_nodes=3)
    m = Model.load(path)
    m.overhead = np.array([1e-6, 1e-6, 1e-6])
    m.recv_overhead = np.array([2e-6, np.nan, 4e-6])
    m.save(path)
    assert path.read_text().startswith("rankwise-model 4\n")
    net, *_ = _allocation(path, None, None, None, 3, 1, None, False)
    np.testing.assert_allclose(net.recv_overhead, [2e-6, 3e-6, 4e-6])
    expect = ALPHA - 1e-6 - np.array([2e-6, 3e-6, 4e-6])[None, :]
    off = ~np.eye(3, dtype=bool)
    np.testing.assert_allclose(net.alpha[off], np.broadcast_to(expect, (3, 3))[off])
    net, *_ = _allocation(path, None, None, None, 3, 1, None, False, recv_overhead=0.0)
    np.testing.assert_allclose(net.recv_overhead, 0.0)
    np.testing.assert_allclose(net.alpha[off], ALPHA - 1e-6)


def test_alltoall_is_predicted_and_tuned(model, tmp_path):
    """The all-to-all's candidates (the MPI's, pairwise, symmetric) in `coll predict`, with the
    gain over pairwise; `coll tune --ops alltoall` writes its rules, which the library reads."""
    r = run_cli("coll", "predict", "--model", model, "--ranks", 8, "--op", "alltoall", "--sizes", "1K,1M",
                "--overhead", "1e-6")
    assert r.returncode == 0, r.stderr
    for word in ("MPI: ", "pairwise", "symmetric", "vs pairwise"):
        assert word in r.stdout
    assert "vs binomial" not in r.stdout
    for alg in ("pairwise", "symmetric"):
        r = run_cli("coll", "predict", "--model", model, "--ranks", 8, "--op", "alltoall", "--sizes", "1M",
                    "-a", alg)
        assert r.returncode == 0, r.stderr
        assert alg in r.stdout
    r = run_cli("coll", "predict", "--model", model, "--ranks", 8, "--op", "alltoall", "--sizes", "1M", "-a", "eager")
    assert_one_line_error(r, "alltoall has no candidate 'eager'")
    out = tmp_path / "rules"
    r = run_cli("coll", "tune", "--model", model, "--ranks", 8, "--ops", "alltoall", "--sizes", "1K,1M", "-o", out)
    assert r.returncode == 0, r.stderr
    rules = [line for line in out.read_text().splitlines() if line.startswith("rule ")]
    assert rules and all("op=alltoall root=*" in line for line in rules)
    from rankwise.coll.selection import Rules

    rules = Rules(out)
    assert len(rules) >= 1 and rules.lookup("alltoall", 8, 0, 4096).algorithm in ("passthrough", "pairwise",
                                                                                   "symmetric")
