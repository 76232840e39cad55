"""Open MPI's own dynamic rules file from the predictor's choices among Open MPI's algorithms
(`rankwise coll tune --format ompi-rules`; rankwise.coll.ompi_rules, engine/src/coll/ompi_choice.c).

- The file reads as Open MPI 4.1 reads it (coll_tuned_dynamic_file.c, mirrored below): numbers only, '#'
  comments, every message-size list from 0 up, communicator sizes in order.
- The choice: the fastest of the algorithms Open MPI can be told to run, only when predicted min_gain faster
  than its fixed decision, whose predicted time is the passthrough's of `coll predict`.
- Real Open MPI runs what the file says, for its communicator size only: a commutative user operation sees
  whole vectors under recursive doubling and halves under Rabenseifner's allreduce (tests/engine/mpi/
  ompi_op_lengths.c), with MPI_SUM's results."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from conftest import assert_one_line_error, run_cli
from rankwise.coll.selection import OmpiAlgorithm, OmpiChoice, TuneOptions, decide, ompi_choose
from rankwise.util.errors import RankwiseError
from rankwise.coll.ompi_rules import OMPI_OPS, OmpiRow, format_ompi_rules, message_rules, tune_ompi
from rankwise.predict.predictor import PredictNetwork, placement
from test_coll_lib import MPI_SOURCES, _compile, needs_mpi, run_mpi
from test_coll_tune import networks

# Open MPI 4.1's collective numbers and its highest algorithm number per collective
# (coll_base_functions.h; coll_tuned_*_decision.c)
OMPI_IDS = {"allgather": 0, "allreduce": 2, "alltoall": 3, "bcast": 7, "gather": 9, "reduce": 11, "scatter": 15}
MAX_ALG = {0: 6, 2: 6, 3: 5, 7: 9, 9: 3, 11: 7, 15: 3}
# algorithms that are wrong for non-commutative operations: never in a rules file
UNSAFE = {2: {4, 5}, 11: {2, 3, 4}}


def read_like_open_mpi(text: str) -> dict[int, list[tuple[int, list[tuple[int, int, int, int]]]]]:
    """The rules as Open MPI's reader takes them: {collective: [(comm size, [(bytes, alg, faninout,
    segsize)])]}; fails where Open MPI would ignore the file."""
    numbers = []
    for line in text.splitlines():
        body = line.split("#", 1)[0]
        for word in body.split():
            assert re.fullmatch(r"[1-9]\d*|0", word), f"not a decimal number Open MPI reads: {word!r} in {line!r}"
            numbers.append(int(word))
    it = iter(numbers)
    rules = {}
    for _ in range(next(it)):
        cid = next(it)
        assert cid in MAX_ALG and cid not in rules
        comms = []
        for _ in range(next(it)):
            size, msgs = next(it), []
            for k in range(next(it)):
                msg = (next(it), next(it), next(it), next(it))
                assert (msg[0] == 0) == (k == 0), "the first message size is 0, the others above it"
                assert not msgs or msg[0] > msgs[-1][0]
                assert 0 <= msg[1] <= MAX_ALG[cid] and msg[1] not in UNSAFE.get(cid, ())
                msgs.append(msg)
            assert msgs and (not comms or size > comms[-1][0])
            comms.append((size, msgs))
        rules[cid] = comms
    assert next(it, None) is None, "numbers after the last collective"
    return rules


def ompi_rule(rules, op: str, comm_size: int, nbytes: int) -> int:
    """The algorithm Open MPI runs (coll_tuned_dynamic_rules.c): the last communicator size not above
    comm_size (else the first), the last message size not above nbytes."""
    comms = rules[OMPI_IDS[op]]
    size_rule = [c for c in comms if c[0] <= comm_size] or comms[:1]
    return [m for m in size_rule[-1][1] if m[0] <= nbytes][-1][1]


@settings(max_examples=30, deadline=None)
@given(networks(), st.sampled_from(OMPI_OPS), st.sampled_from([8, 512, 4096, 100_000, 1 << 21]))
def test_the_choice_is_the_fastest_and_min_gain_faster_than_the_fixed_decision(net_place, op, nbytes):
    net, node_of = net_place
    opts = TuneOptions(max_evals=20)
    c = ompi_choose(net, node_of, op, nbytes, opts)
    assert c.algorithms[0].id == 0 and all(a.id > 0 for a in c.algorithms[1:])
    fastest = min(c.algorithms[1:], key=lambda a: a.time, default=None)
    if c.chosen:
        assert c.choice is fastest and c.choice.time <= 0.95 * c.fixed.time
        assert c.gain == pytest.approx(1 - c.choice.time / c.fixed.time)
    else:
        # kept where nothing is faster enough, or the fixed decision cannot be costed (or costs nothing)
        assert (fastest is None or not fastest.time <= 0.95 * c.fixed.time or not c.fixed.time > 0
                or not np.isfinite(c.fixed.time))
    # the fixed decision is the passthrough `coll predict` and the library's rules are scored against
    d = decide(net, node_of, op, nbytes, 0, opts)
    assert c.fixed.name == d.passthrough.algorithm
    assert c.fixed.time == pytest.approx(d.passthrough.time, rel=1e-9)


def choice(op: str, nbytes: int, name: str, alg: int, segment: int = 0) -> OmpiChoice:
    fixed = OmpiAlgorithm("fixed", 0, 0, 2.0)
    return OmpiChoice(op, nbytes, [fixed, OmpiAlgorithm(name, alg, segment, 1.0)] if alg else [fixed],
                      1 if alg else 0, 0.5 if alg else 0.0)


def test_bytes_are_counted_as_open_mpi_counts_them():
    """Open MPI sizes gather, scatter, allgather and alltoall by the whole communicator's data."""
    rows = [OmpiRow("gather", 0, 1023, choice("gather", 8, "", 0)),
            OmpiRow("gather", 1024, 65535, choice("gather", 1024, "binomial", 2)),
            OmpiRow("gather", 65536, 1 << 40, choice("gather", 65536, "binomial", 2))]
    assert message_rules(rows, 16) == [(0, 0, 0, 0, ""), (16 * 1024, 2, 0, 0, "binomial")]
    rows = [OmpiRow("bcast", 0, 1023, choice("bcast", 8, "linear", 1)),
            OmpiRow("bcast", 1024, 1 << 40, choice("bcast", 1024, "pipeline", 3, 65536))]
    assert message_rules(rows, 16) == [(0, 1, 0, 0, "linear"), (1024, 3, 0, 65536, "pipeline")]


def test_the_file_reads_as_open_mpi_reads_it_and_holds_for_its_size_only(small_platform):
    net = PredictNetwork.from_ground_truth(small_platform.out_dir)
    node_of = placement(2, len(net.names))
    sizes = [8, 64, 1024, 16384, 262144, 1 << 21]
    rows = tune_ompi(net, node_of, OMPI_OPS, sizes, TuneOptions(max_evals=20))
    p = node_of.size
    rules = read_like_open_mpi(format_ompi_rules(rows, p, model="plat\n1 2 3", min_gain=0.05))
    assert sorted(rules) == sorted(OMPI_IDS.values())
    for r in rows:
        at = max(r.lo, 1) * (p if r.op in ("gather", "scatter", "allgather", "alltoall") else 1)
        want = r.choice.choice.id if r.choice.chosen else 0
        assert ompi_rule(rules, r.op, p, at) == want, (r.op, r.lo)
        assert ompi_rule(rules, r.op, p - 1, at) == 0 and ompi_rule(rules, r.op, p + 1, at) == 0
    # something other than the fixed decision was chosen on this platform (else the test says little)
    assert any(r.choice.chosen for r in rows)


def test_coll_tune_writes_open_mpi_rules(small_platform, tmp_path):
    out = tmp_path / "ompi.rules"
    r = run_cli("coll", "tune", "--platform", small_platform.out_dir, "--ranks", "8", "--format", "ompi-rules",
                "--sizes", "8:1M", "-o", out)
    assert r.returncode == 0, r.stderr
    rules = read_like_open_mpi(out.read_text())
    assert len(rules) == 7 and all(c[1][0] == 8 for c in rules.values())
    assert "coll_tuned_dynamic_rules_filename" in r.stdout and "fixed decision" in r.stdout
    r = run_cli("coll", "tune", "--platform", small_platform.out_dir, "--ranks", "8", "--format", "ompi-rules",
                "--roots", "0,3", "-o", tmp_path / "x")
    assert_one_line_error(r, "cannot depend on the root")
    r = run_cli("coll", "tune", "--platform", small_platform.out_dir, "--ranks", "8", "--format", "mpich",
                "-o", tmp_path / "x")
    assert_one_line_error(r, "--format: unknown format 'mpich'")
    r = run_cli("coll", "tune", "--platform", small_platform.out_dir, "--ranks", "8", "--format", "ompi-rules",
                "--verify", " ", "-o", tmp_path / "x")
    assert_one_line_error(r, "--verify: the launcher is empty")
    assert not (tmp_path / "x").exists()


@pytest.fixture(scope="module")
def op_lengths(tmp_path_factory):
    out = tmp_path_factory.mktemp("ompi-rules") / "ompi_op_lengths"
    _compile(["mpicc", "-O1", str(MPI_SOURCES / "ompi_op_lengths.c"), "-o", str(out)])
    return out


def lengths(stdout: str) -> dict[str, list[list[int]]]:
    out: dict[str, list[list[int]]] = {}
    for label, rank, seen in re.findall(r"^(world|pair) (\d+):(.*)$", stdout, re.M):
        out.setdefault(label, []).append([int(x) for x in seen.replace(",", " ").split()])
    return out


@needs_mpi
def test_open_mpi_runs_what_the_file_says(op_lengths, tmp_path):
    def run(alg: int | None):
        args = [str(op_lengths), "1024"]
        if alg is not None:
            path = tmp_path / f"rules{alg}"
            row = OmpiRow("allreduce", 0, 1 << 40, choice("allreduce", 4096, "x", alg))
            path.write_text(format_ompi_rules([row], 4, model="test", min_gain=0.05))
            args = ["--mca", "coll_tuned_use_dynamic_rules", "1", "--mca", "coll_tuned_dynamic_rules_filename",
                    str(path)] + args
        r = run_mpi(args, 4, {}, timeout=120)
        assert r.returncode == 0, r.stdout + r.stderr  # results equal MPI_SUM's
        return lengths(r.stdout)

    fixed, rdb, rabenseifner = run(None), run(3), run(6)
    assert rdb["world"] == [[1024, 1024]] * 4  # recursive doubling: whole vectors, log2(4) steps
    assert rabenseifner["world"] == [[512, 256]] * 4  # recursive halving
    assert run(0)["world"] == fixed["world"]  # algorithm 0: Open MPI's fixed decision
    # the 2-rank communicator keeps the fixed decision whatever the 4-rank rules say
    assert rdb["pair"] == rabenseifner["pair"] == fixed["pair"]


class FakeTable:
    def __init__(self, times: dict[int, float]):
        self.times = times

    def at(self, size: int) -> float:
        return self.times[size]


def test_verify_keeps_only_algorithms_that_won_every_run(monkeypatch):
    """`--verify`: the runs alternate which goes first; a row stays where every run with the file beat
    every run without by 2 % (the library's verdict), else it is written as the fixed decision."""
    import rankwise.coll.ompi_verify as v

    rows = [OmpiRow("bcast", 0, 1023, choice("bcast", 8, "linear", 1)),
            OmpiRow("bcast", 1024, 65535, choice("bcast", 1024, "binary", 5)),
            OmpiRow("bcast", 65536, 1 << 40, choice("bcast", 65536, "", 0)),
            OmpiRow("reduce", 0, 1 << 40, choice("reduce", 8, "binomial", 5))]
    order = []
    # without the file: 10 us everywhere; with it: 8 B and reduce always faster,
    # 1 KiB faster in two runs and slower in one
    with_file = iter([{8: 9.0, 1024: 9.0}, {8: 9.5, 1024: 10.5}, {8: 9.7, 1024: 9.0}])

    def fake_run(cmd, env, what, simulated, **_):
        rules = "coll_tuned_dynamic_rules_filename" in " ".join(cmd)
        order.append("rules" if rules else "fixed")
        t = next(with_file) if rules else {8: 10.0, 1024: 10.0}
        return {"bcast": FakeTable(t), "reduce": FakeTable({8: 5.0 if rules else 10.0})}

    monkeypatch.setattr(v, "run_program", fake_run)
    out, checked = v.verify_ompi(rows, "mpirun -np 4", 4, repeats=3)
    assert order == ["fixed", "rules", "rules", "fixed", "fixed", "rules"]
    assert [(c.row.op, c.row.choice.nbytes, c.kept) for c in checked] == [
        ("bcast", 8, True), ("bcast", 1024, False), ("reduce", 8, True)]
    assert [r.choice.chosen for r in out] == [1, 0, 0, 1]
    rules = read_like_open_mpi(format_ompi_rules(out, 4, model="m", min_gain=0.05, note="verified under x"))
    assert ompi_rule(rules, "bcast", 4, 8) == 1 and ompi_rule(rules, "bcast", 4, 2048) == 0
    assert ompi_rule(rules, "reduce", 4, 8) == 5
    with pytest.raises(RankwiseError, match="positive count"):
        v.verify_ompi(rows, "mpirun -np 4", 4, repeats=0)


@needs_mpi
def test_coll_tune_verify_under_real_open_mpi(small_platform, tmp_path):
    """The file after verification under a real launcher: readable as Open MPI reads it, naming only the
    algorithms the verification table kept; a launcher of another size is refused before any file."""
    out = tmp_path / "ompi.rules"
    r = run_cli("coll", "tune", "--platform", small_platform.out_dir, "--ranks", "4", "--format", "ompi-rules",
                "--sizes", "8,64K", "--ops", "bcast,reduce,allreduce", "--verify", "mpirun -np 4 --oversubscribe",
                "--verify-repeats", "2", "-o", out, timeout=600, env={"COLUMNS": "200"})
    assert r.returncode == 0, r.stdout + r.stderr
    text = out.read_text()
    assert "# verified under mpirun -np 4 --oversubscribe:" in text
    rules = read_like_open_mpi(text)
    named = {(op, b) for op, b in (("bcast", 8), ("bcast", 65536), ("reduce", 8), ("reduce", 65536),
                                   ("allreduce", 8), ("allreduce", 65536)) if ompi_rule(rules, op, 4, b)}
    kept = set()
    for line in r.stdout.splitlines():
        m = re.match(r"\s*(bcast|reduce|allreduce)\s+(\S+)\s.*\byes\b", line)
        if m:
            kept.add((m.group(1), 8 if m.group(2) == "8" else 65536))
    assert named == kept
    r = run_cli("coll", "tune", "--platform", small_platform.out_dir, "--ranks", "8", "--format", "ompi-rules",
                "--verify", "mpirun -np 4 --oversubscribe", "-o", tmp_path / "x", timeout=300)
    assert_one_line_error(r, "--verify: the launcher starts 4 ranks, the rules are for --ranks 8")
    assert not (tmp_path / "x").exists()
    r = run_cli("coll", "tune", "--platform", small_platform.out_dir, "--ranks", "8", "--verify", "mpirun -np 8",
                "-o", tmp_path / "x")
    assert_one_line_error(r, "--verify: only with --format ompi-rules")
