"""`rankwise predict` and `rankwise validate` as a user runs them: tables per
algorithm and formula, traffic per placement, the predictor against SMPI with
the algorithm pinned, and one-line errors for bad input."""

from __future__ import annotations

import csv

import numpy as np
import pytest
from conftest import assert_one_line_error, run_cli

from rankwise.model.model import MEASURED, Model
from rankwise.predict.predictor import algorithms

ALPHA, BETA = 5e-6, 1e-9  # 1 GB/s


def make_model(path, n_nodes=8, slow=()):
    """Every pair at ALPHA, BETA (the slow nodes' x10), intra-node pairs measured too."""
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
    m.intra_state[:] = MEASURED
    m.save(path)
    return path


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture()
def model_file(tmp_path):
    return make_model(tmp_path / "net.rwm")


def test_predict_prints_every_algorithm_and_the_preferred_one(tmp_path, model_file):
    out = tmp_path / "a2a.csv"
    r = run_cli("predict", "--model", model_file, "--op", "alltoall", "--ranks", "8", "--sizes", "1K:64K",
                "-o", out)
    assert r.returncode == 0, r.stderr
    for alg in algorithms("alltoall"):
        assert f" {alg} " in r.stdout
    for header in ("Hockney", "LogGP", "Luo eq.1", "Luo eq.2"):
        assert header in r.stdout
    rows = read_csv(out)
    assert [int(x["size"]) for x in rows[::4]] == [1 << k for k in range(10, 17)]
    for size in {x["size"] for x in rows}:
        group = [x for x in rows if x["size"] == size]
        assert {x["algorithm"] for x in group} == set(algorithms("alltoall"))
        best = min(group, key=lambda x: float(x["predicted_s"]))
        assert [x["algorithm"] for x in group if x["preferred"] == "1"] == [best["algorithm"]]
        # One rank per node of a uniform network: pairwise steps never share a link, so the
        # simulation is Luo et al. 2018 eq. 2 and Hockney's contention-free time.
        pair = next(x for x in group if x["algorithm"] == "pair")
        assert float(pair["predicted_s"]) == pytest.approx(float(pair["Luo eq.2_s"]), rel=1e-6)
        assert float(pair["predicted_s"]) == pytest.approx(float(pair["hockney_s"]), rel=1e-9)
    line = next(li for li in r.stdout.splitlines() if li.startswith("preferred:"))
    assert {x["algorithm"] for x in rows if x["preferred"] == "1"} == {w.strip(";") for w in line.split()[2::2]}


def test_predict_adds_luo_eq_4_with_the_switches(tmp_path, model_file):
    out = tmp_path / "a2a.csv"
    r = run_cli("predict", "--model", model_file, "--op", "alltoall", "--algorithm", "pair", "--ranks", "8",
                "--sizes", "4K", "--switch", "radix=16,hops=3,packet=32,cycle=3.2e-9,load=0.8", "-o", out)
    assert r.returncode == 0, r.stderr
    (row,) = read_csv(out)
    wait = (1 - 1 / 16) * 0.8 / (2 * (1 - 0.8))  # eq. 3, cycles
    eq4 = 7 * (ALPHA + 4096 * BETA + 4096 / 32 * 3 * wait * 3.2e-9)
    assert float(row["Luo eq.4_s"]) == pytest.approx(eq4, rel=1e-6)
    assert "Luo eq.4" in r.stdout


def test_predict_one_algorithm_with_ranks_per_node(tmp_path, model_file):
    out = tmp_path / "bcast.csv"
    r = run_cli("predict", "--model", model_file, "--op", "bcast", "--algorithm", "binomial", "--ranks", "16",
                "--ranks-per-node", "4", "--sizes", "1K,1M", "-o", out)
    assert r.returncode == 0, r.stderr
    assert "16 ranks on 4 nodes, 4 per node" in r.stdout
    rows = read_csv(out)
    assert [x["algorithm"] for x in rows] == ["binomial", "binomial"]
    assert float(rows[1]["predicted_s"]) > float(rows[0]["predicted_s"])


def test_predict_on_a_hostfile_fills_its_slots_in_order(tmp_path, model_file):
    hostfile = tmp_path / "hosts"
    hostfile.write_text("node-6 slots=4\nnode-7 slots=4\nnode-0 slots=4\n")
    r = run_cli("predict", "--model", model_file, "--hostfile", hostfile, "--op", "gather", "--ranks", "8",
                "--sizes", "1K")
    assert r.returncode == 0, r.stderr
    assert "8 ranks on 2 nodes" in r.stdout
    r = run_cli("predict", "--model", model_file, "--hostfile", hostfile, "--op", "gather", "--ranks", "13",
                "--sizes", "1K")
    assert_one_line_error(r, "13 ranks do not fit the 12 slots of")
    assert r.returncode == 2


def test_predict_marks_algorithms_that_do_not_apply(model_file):
    r = run_cli("predict", "--model", model_file, "--op", "alltoall", "--ranks", "6", "--sizes", "1K")
    assert r.returncode == 0, r.stderr
    assert "n/a: pair: alltoall pair needs a power-of-two rank count, not 6" in r.stdout


def test_predict_traffic_for_the_block_placement_and_a_given_one(tmp_path):
    model = make_model(tmp_path / "net.rwm", slow=(1,))
    placement = tmp_path / "placement.txt"
    # Ranks on nodes 4-7, away from the slow node 1 the block placement uses.
    placement.write_text("# rankwise placement: rank node slot\n" +
                         "".join(f"{r} node-{4 + r} 0\n" for r in range(4)))
    out = tmp_path / "traffic.csv"
    r = run_cli("predict", "--model", model, "--pattern", "alltoall:ranks=4,bytes=1M", "--ranks-per-node", "1",
                "--placement", placement, "-o", out)
    assert r.returncode == 0, r.stderr
    assert "default (block)" in r.stdout and "placement.txt" in r.stdout
    block, given = read_csv(out)
    # One phase of 3 x 1 MiB out of each rank: the slow node's links (beta x10) bound the block placement.
    assert float(given["predicted_s"]) == pytest.approx(3 * (1 << 20) * BETA + ALPHA, rel=0.02)
    assert float(block["predicted_s"]) > 5 * float(given["predicted_s"])


def test_validate_alltoall_pair_is_within_10_percent_of_smpi(tmp_path, small_platform):
    out, png = tmp_path / "v.csv", tmp_path / "v.png"
    r = run_cli("validate", "--sim", small_platform.out_dir, "--op", "alltoall", "--algorithm", "pair",
                "--ranks", "16", "--ranks-per-node", "2", "--sizes", "1K,64K,1M", "-o", out, "--plot", png)
    assert r.returncode == 0, r.stderr
    print(r.stdout)
    rows = read_csv(out)
    assert [int(x["size"]) for x in rows] == [1024, 65536, 1 << 20]
    errors = [abs(float(x["error"])) for x in rows]
    assert max(errors) < 0.10
    # The congested uplink is what Hockney's per-message sum misses at 1 MiB.
    assert abs(float(rows[-1]["hockney_error"])) > 0.25
    assert "Hockney error" in r.stdout and "|error| median" in r.stdout
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_validate_with_overheads_sets_them_in_smpi_and_the_prediction(tmp_path, small_platform):
    """--os/--or: SMPI and the predictor both charge them; a flat bcast of 1 KiB over 8 ranks
    then pays the root's 7 send overheads in turn."""
    times = {}
    for os_us in ("0", "1"):
        out = tmp_path / f"v{os_us}.csv"
        r = run_cli("validate", "--sim", small_platform.out_dir, "--op", "bcast", "--algorithm", "flat",
                    "--ranks", "8", "--sizes", "1K", "--os", os_us, "--or", os_us, "-o", out)
        assert r.returncode == 0, r.stderr
        (row,) = read_csv(out)
        assert abs(float(row["error"])) < 0.01
        times[os_us] = float(row["simulated_s"])
    # At most 7 send overheads and one receive overhead more; at least the 7th send's delay,
    # less the spread of the ranks' latencies.
    assert 6e-6 < times["1"] - times["0"] <= 8e-6 * 1.001


def test_validate_from_a_model(tmp_path, small_platform):
    """--model: the prediction uses the model's figures (here far from the platform's, so the
    error shows it was used)."""
    model = make_model(tmp_path / "net.rwm")
    out = tmp_path / "v.csv"
    r = run_cli("validate", "--sim", small_platform.platform_xml, "--op", "alltoall", "--algorithm", "ring",
                "--ranks", "4", "--sizes", "1M", "--model", model, "-o", out)
    assert r.returncode == 0, r.stderr
    (row,) = read_csv(out)
    assert float(row["predicted_s"]) == pytest.approx(3 * (ALPHA + (1 << 20) * BETA), rel=0.02)
    assert "(net.rwm)" in r.stdout


BAD = [
    (("--op", "barrier", "--ranks", "8"), 2, "unknown operation 'barrier'"),
    (("--op", "alltoall", "--algorithm", "nope", "--ranks", "8"), 2, "alltoall has no algorithm 'nope'"),
    (("--op", "alltoall", "--ranks", "8", "--sizes", "1K:4G"), 2, "--sizes: 4G is out of range"),
    (("--op", "alltoall", "--ranks", "8", "--sizes", "4M:1K"), 2, "range '4M:1K' ends below its start"),
    (("--op", "alltoall", "--ranks", "8", "--sizes", "1K,x"), 2, "--sizes: 'x' is not a size"),
    (("--op", "alltoall", "--ranks", "8", "--sizes", "64K,1K"), 2, "sizes must be increasing"),
    (("--op", "alltoall", "--ranks", "40", "--ranks-per-node", "4"), 2, "40 ranks at 4 per node need 10 nodes"),
    (("--op", "alltoall"), 2, "--op needs --ranks"),
    (("--op", "alltoall", "--algorithm", "pair", "--ranks", "6"), 1, "pair needs a power-of-two rank count"),
    (("--op", "alltoall", "--ranks", "8", "--switch", "radix=16,hops=3"), 2, "--switch lacks packet, cycle, load"),
    (("--op", "alltoall", "--ranks", "8", "--switch", "radix=16,hops=3,packet=32,cycle=1e-9,load=1"), 2,
     "0 <= load < 1"),
]


@pytest.mark.parametrize("args,code,text", BAD, ids=[t for _, _, t in BAD])
def test_predict_bad_input_is_one_line(model_file, args, code, text):
    r = run_cli("predict", "--model", model_file, *args)
    assert r.returncode == code
    assert_one_line_error(r, text)


def test_predict_a_model_without_the_pairs_is_one_line(tmp_path):
    path = tmp_path / "empty.rwm"
    Model.empty(["a", "b", "c"], [1024]).save(path)
    r = run_cli("predict", "--model", path, "--op", "alltoall", "--ranks", "3")
    assert r.returncode == 1
    assert_one_line_error(r, "the model has no measurement for a -> b")


def test_predict_a_placement_on_unknown_nodes_is_one_line(tmp_path, model_file):
    placement = tmp_path / "p.txt"
    placement.write_text("0 elsewhere 0\n1 node-0 0\n")
    r = run_cli("predict", "--model", model_file, "--pattern", "alltoall:ranks=2,bytes=1K", "--placement", placement)
    assert r.returncode == 1
    assert_one_line_error(r, "p.txt: node 'elsewhere' is not in the allocation")


VALIDATE_BAD = [
    (("--op", "bcast", "--algorithm", "knomial", "--ranks", "8"), 2, "bcast 'knomial' has no SMPI twin"),
    (("--op", "alltoall", "--ranks", "32"), 2, "32 ranks at 1 per node need 32 nodes"),
    (("--op", "alltoall", "--ranks", "8", "--network", "model"), 2, "--network model needs --model FILE"),
    (("--op", "alltoall", "--ranks", "8", "--sizes", "0"), 2, "--sizes: 0 is out of range"),
    (("--op", "alltoall", "--algorithm", "pair", "--ranks", "6"), 1, "pair needs a power-of-two rank count"),
    (("--op", "bcast", "--ranks", "8", "--os", "-1"), 2, "--os must be >= 0"),
    (("--op", "bcast", "--ranks", "8", "--or", "nan"), 2, "'--or': nan is not a finite number"),
]


@pytest.mark.parametrize("args,code,text", VALIDATE_BAD, ids=[t for _, _, t in VALIDATE_BAD])
def test_validate_bad_input_is_one_line(small_platform, args, code, text):
    r = run_cli("validate", "--sim", small_platform.out_dir, *args)
    assert r.returncode == code
    assert_one_line_error(r, text)


def test_validate_refuses_a_missing_platform_and_an_unwritable_plot(tmp_path, small_platform):
    r = run_cli("validate", "--sim", tmp_path / "nowhere", "--op", "alltoall", "--ranks", "8")
    assert r.returncode == 1
    assert_one_line_error(r, "no SimGrid platform there")
    (tmp_path / "file").write_text("x")  # a PNG whose folder cannot be made (a missing one is made, as for -o)
    r = run_cli("validate", "--sim", small_platform.out_dir, "--op", "alltoall", "--ranks", "8",
                "--plot", tmp_path / "file" / "v.png")
    assert r.returncode == 1
    assert_one_line_error(r, "Not a directory")
    assert r.stdout == ""  # refused before any simulation


def test_validate_on_a_platform_of_ones_own_asks_for_a_model(tmp_path, small_platform):
    """A SimGrid platform that rankwise did not generate has no ground truth: the one line says to
    predict from a probed model, as a user of their own platform would."""
    own = tmp_path / "own"
    own.mkdir()
    (own / "platform.xml").write_text(small_platform.platform_xml.read_text())
    r = run_cli("validate", "--sim", own, "--op", "bcast", "--ranks", "4", "--sizes", "1K")
    assert r.returncode == 2
    assert_one_line_error(r, "no ground_truth.json beside platform.xml (a platform of your own?)")
    assert "--model" in r.stderr
