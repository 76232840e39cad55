"""librankwise_coll follows the measured network: a rules file of `rankwise
coll tune` (RANKWISE_COLL_RULES) on communicators holding MPI_COMM_WORLD's
ranks in order, a model (RANKWISE_MODEL) on any communicator
(docs/concepts/collectives.md, "Decision").

- Under SMPI, MPI_Bcast with the rules of `coll tune --platform` takes, to
  the nanosecond on every rank, the simulated time of rw_coll_bcast_tree
  with the rule's tree (tests/engine/mpi/coll_rules_time.c), and not the
  MPI's own time; without the rules it takes the MPI's own.
- Under Open MPI on localhost, results stay right (coll_check.c, every
  case it has, and coll_rules.c on one communicator) with rules and with a
  model whose nodes are named as `rankwise probe --group-by rank` names
  them; the trace says which path ran: the rules on the world and its
  duplicate, never on a reversed or split communicator, the model there.
- A broken rules file or model: one line naming it, the MPI's own runs.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
from pathlib import Path

import pytest

from rankwise.util import paths
from rankwise.cluster.launch import mpi_environment
from rankwise.model.model import MEASURED, Model

from conftest import run_cli
from test_coll_lib import ASAN_ENV, asan_coll_check, checks_passed, run_mpi

ROOT = Path(__file__).resolve().parents[3]
MPI_SOURCES = ROOT / "tests" / "engine" / "mpi"
LIB = paths.PACKAGE_DIR / "_lib"
BYTES_MAX = (1 << 63) - 1

needs_mpi = pytest.mark.skipif(not (shutil.which("mpicc") and shutil.which("mpirun")), reason="no Open MPI")
needs_smpi = pytest.mark.skipif(not (shutil.which("smpicc") and shutil.which("smpirun")), reason="no SimGrid")


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {**os.environ, **(extra or {})}
    env.pop("SMPI_PRETEND_CC", None)
    for key in [k for k in env if k.startswith("RANKWISE_")]:
        if key not in (extra or {}):
            env.pop(key)
    return env


def _compile(cmd: list[str]) -> None:
    r = subprocess.run(cmd, capture_output=True, text=True, env=_env())
    assert r.returncode == 0, r.stdout + r.stderr


def decided(stderr: str) -> dict[str, set[str]]:
    """Per source ("rules", "model"): the collectives it decided, from the trace."""
    out: dict[str, set[str]] = {}
    for op, _alg, src in re.findall(r"^rankwise-coll: (\w+) (\w+) \d+ bytes \((\w+)\)$", stderr, re.M):
        out.setdefault(src, set()).add(op)
    return out


def tree_rules(n: int) -> str:
    """Hand-written rules for n ranks: trees out of rank order (a
    non-commutative reduce must pass through on them), a shape for any
    root, a pipelined shape, and named algorithms for the unrooted ops."""
    chain = [-1] + [0] * (n - 1)  # 0 -> n-1 -> n-2 -> ... -> 1: reversed chain
    for r in range(1, n - 1):
        chain[r] = r + 1
    chain[n - 1] = 0
    gather = [(r + 1) % n for r in range(n)]  # rooted at n-1: a chain upwards from n-1
    gather[n - 1] = -1
    ints = lambda v: ",".join(map(str, v))  # noqa: E731
    return "\n".join([
        "rankwise-coll-rules 1",
        f"comm-size {n}",
        f"rule op=bcast root=0 bytes=0:{BYTES_MAX} alg=tree segment=100 parents={ints(chain)}",
        f"rule op=reduce root=0 bytes=0:{BYTES_MAX} alg=tree segment=0 parents={ints(chain)}",
        f"rule op=gather root={n - 1} bytes=0:{BYTES_MAX} alg=tree segment=0 parents={ints(gather)}",
        f"rule op=scatter root=* bytes=0:{BYTES_MAX} alg=flat segment=0",
        f"rule op=bcast root=* bytes=0:{BYTES_MAX} alg=chain segment=64",
        f"rule op=allreduce root=* bytes=0:{BYTES_MAX} alg=recursive_doubling segment=0",
        f"rule op=allgather root=* bytes=0:{BYTES_MAX} alg=ring segment=0",
        "",
    ])


def synthetic_model(names: list[str]) -> Model:
    """Every pair measured at 1 us and 1 GB/s, except that rank 0's links to
    ranks 2 and up take 100 us: the model's trees avoid them, the MPI's own
    (binary, binomial) does not, so the model decides for a tree."""
    n = len(names)
    m = Model.empty(names, [8, 1024])
    for i in range(n):
        for j in range(n):
            if i == j:
                continue
            a = 100e-6 if 0 in (i, j) and max(i, j) >= 2 else 1e-6
            m.state[i, j] = MEASURED
            m.alpha[i, j], m.beta[i, j], m.measured_at[i, j] = a, 1e-9, 1.79e9
            m.rtt_min[i, j] = m.rtt_median[i, j] = m.rtt_max[i, j] = [2 * a + 8e-9, 2 * a + 1024e-9]
            m.jitter[i, j], m.samples[i, j] = [0.0, 0.0], [5, 5]
    m.source, m.created, m.duration = "synthetic", 1.79e9, 1.0
    return m


# --- SMPI: the rules' tree, to the nanosecond ------------------------------------------

SMPI_CONFIG = ["--cfg=smpi/os:0:1e-6:0", "--cfg=smpi/or:0:1e-6:0", "--cfg=smpi/simulate-computation:no",
               "--log=root.thres:critical"]
SIZES = ["8", "1000", "20000", "300000"]
SIZES_POW2 = ["8", "1024", "16384", "262144"]


@pytest.fixture(scope="module")
def time_program(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("rules-smpi") / "coll_rules_time"
    _compile(["smpicc", "-O1", f"-I{ROOT / 'engine' / 'include'}", str(MPI_SOURCES / "coll_rules_time.c"),
              f"-L{LIB / 'smpi'}", "-Wl,--whole-archive", "-lrankwise_coll", "-Wl,--no-whole-archive", "-o", str(out)])
    return out


def bcast_times(program: Path, platform, rules: Path, mode: str, env: dict[str, str], sizes=SIZES):
    """({(rank, size): ns}, {size: (algorithm, segment)})."""
    r = subprocess.run(["smpirun", "-np", "8", "-platform", str(platform.platform_xml), "-hostfile",
                        str(platform.hostfile), *SMPI_CONFIG, str(program), mode, str(rules), *sizes],
                       capture_output=True, text=True, env=_env(env), timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    times, rules_seen = {}, {}
    for line in r.stdout.splitlines():
        w = line.split()
        if w[0] == "rule":
            rules_seen[int(w[1])] = (w[2], int(w[3]))
        else:
            times[(int(w[0]), int(w[1]))] = int(w[2])
    assert len(times) == 8 * len(sizes)
    return times, rules_seen


@needs_smpi
def test_mpi_bcast_runs_the_tree_of_coll_tunes_rules_under_smpi(time_program, small_platform, tmp_path):
    hosts = small_platform.hostfile.read_text().split()[:8]
    rules = tmp_path / "rules.rwr"
    r = run_cli("coll", "tune", "--platform", small_platform.platform_xml.parent, "--nodes", ",".join(hosts),
                "--ranks", "8", "--ranks-per-node", "1", "--overhead", "1e-6", "--ops", "bcast",
                "--sizes", "8,1K,16K,256K", "-o", rules)
    assert r.returncode == 0, r.stderr
    with_rules = {"RANKWISE_COLL_RULES": str(rules)}
    auto, chosen = bcast_times(time_program, small_platform, rules, "auto", with_rules)
    tree, _ = bcast_times(time_program, small_platform, rules, "tree", with_rules)
    mpi, _ = bcast_times(time_program, small_platform, rules, "pass", with_rules)
    trees = [s for s, (alg, _) in chosen.items() if alg == "tree"]
    assert trees, chosen  # the degraded platform gives coll tune trees to choose
    assert any(seg > 0 for s, (alg, seg) in chosen.items() if alg == "tree"), chosen  # one pipelined
    for (rank, size), ns in auto.items():
        assert ns == tree[(rank, size)], (rank, size)  # every size: the rule's tree or the MPI's own
    for size in trees:
        assert [auto[(r, size)] for r in range(8)] != [mpi[(r, size)] for r in range(8)], size
    # without the rules, MPI_Bcast is the MPI's own
    plain, _ = bcast_times(time_program, small_platform, rules, "auto", {})
    assert plain == mpi


def ground_truth_model(platform, hosts: list[str]) -> Model:
    """The platform's own figures as a measured model would hold them: each
    pair's route latency and bottleneck bandwidth, a send overhead of 1 us."""
    from rankwise.predict.predictor import PredictNetwork

    truth = PredictNetwork.from_ground_truth(platform.platform_xml.parent)
    where = [truth.names.index(h) for h in hosts]
    m = Model.empty(hosts, [8, 1024])
    for a, i in enumerate(where):
        for b, j in enumerate(where):
            if a != b:
                al, be = truth.alpha[i, j], truth.beta[i, j]
                m.state[a, b] = MEASURED
                m.alpha[a, b], m.beta[a, b], m.measured_at[a, b] = al, be, 1.79e9
                m.rtt_min[a, b] = m.rtt_median[a, b] = m.rtt_max[a, b] = [2 * al + 8 * be, 2 * al + 1024 * be]
                m.jitter[a, b], m.samples[a, b] = [0.0, 0.0], [5, 5]
    m.overhead[:] = 1e-6
    m.source, m.created, m.duration = "ground truth", 1.79e9, 1.0
    return m


@needs_smpi
@pytest.mark.parametrize("evals", [None, "0"])
def test_a_model_decides_as_coll_tune_does_under_smpi(time_program, small_platform, tmp_path, evals):
    """RANKWISE_MODEL: the library builds the network from the model and
    decides per power-of-two class; at sizes that are powers of two, the
    classes of `coll tune --model` on the same model, the broadcasts take
    the same simulated times as with the rules it writes: the same trees.
    RANKWISE_COLL_MAX_EVALS is the library's `--max-evals` (0: the
    constructions without local search)."""
    hosts = small_platform.hostfile.read_text().split()[:8]
    model = tmp_path / "truth.rwm"
    ground_truth_model(small_platform, hosts).save(model)
    rules = tmp_path / "rules.rwr"
    r = run_cli("coll", "tune", "--model", model, "--nodes", ",".join(hosts), "--ranks", "8", "--ranks-per-node",
                "1", "--ops", "bcast", "--sizes", ",".join(SIZES_POW2), "-o", rules,
                *(["--max-evals", evals] if evals else []))
    assert r.returncode == 0, r.stderr
    by_rules, chosen = bcast_times(time_program, small_platform, rules, "auto", {"RANKWISE_COLL_RULES": str(rules)},
                                   SIZES_POW2)
    env = {"RANKWISE_MODEL": str(model), **({"RANKWISE_COLL_MAX_EVALS": evals} if evals else {})}
    by_model, _ = bcast_times(time_program, small_platform, rules, "auto", env, SIZES_POW2)
    mpi, _ = bcast_times(time_program, small_platform, rules, "pass", {}, SIZES_POW2)
    assert any(alg == "tree" for alg, _ in chosen.values()), chosen
    assert by_model == by_rules and by_model != mpi


# --- Open MPI: correct results, the right path per communicator ------------------------


@pytest.fixture(scope="module")
def programs(tmp_path_factory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("rules-mpi")
    check, one = d / "coll_check", d / "coll_rules"
    _compile(["mpicc", "-O1", "-g", f"-I{LIB / 'include'}", str(MPI_SOURCES / "coll_check.c"), f"-L{LIB}",
              f"-Wl,-rpath,{LIB}", "-lrankwise_coll", "-o", str(check)])
    _compile(["mpicc", "-O1", "-g", str(MPI_SOURCES / "coll_rules.c"), "-o", str(one)])
    return check, one


@pytest.fixture(scope="module")
def model_file(tmp_path_factory) -> Path:
    """Four nodes named as `rankwise probe --group-by rank` names ranks on
    this host: processor name, ':', rank in MPI_COMM_WORLD."""
    path = tmp_path_factory.mktemp("rules-model") / "ranks.rwm"
    synthetic_model([f"{socket.gethostname()}:{r}" for r in range(4)]).save(path)
    return path


def preload() -> dict[str, str]:
    return {"LD_PRELOAD": str(LIB / "librankwise_coll.so"), "RANKWISE_COLL_TRACE": "1"}


@needs_mpi
def test_results_stay_right_under_rules_and_a_model(programs, model_file, tmp_path):
    check, _ = programs
    rules = tmp_path / "rules.rwr"
    rules.write_text(tree_rules(4))
    for env in ({"RANKWISE_COLL_RULES": str(rules)}, {"RANKWISE_MODEL": str(model_file)},
                {"RANKWISE_COLL_RULES": str(rules), "RANKWISE_MODEL": str(model_file)}):
        r = run_mpi([str(check), "2001"], 4, {**env, "RANKWISE_COLL_TRACE": "1"})
        assert r.returncode == 0, r.stdout + r.stderr[-3000:]
        assert checks_passed(r.stdout) > 1000
        paths_taken = decided(r.stderr)
        if "RANKWISE_COLL_RULES" in env:
            assert {"bcast", "reduce", "gather", "scatter", "allreduce", "allgather"} <= paths_taken.get("rules", set()), paths_taken
        if "RANKWISE_MODEL" in env:
            # coll_check's split and reversed communicators (and the world without rules)
            assert {"bcast", "reduce", "gather", "scatter"} <= paths_taken.get("model", set()), paths_taken
            costs = re.findall(r"^rankwise-coll: decided \w+ root -?\d+ \d+\+ bytes on \d ranks from the model: "
                               r"\w+ \(([0-9.]+) s\)$", r.stderr, re.M)
            assert costs and all(float(c) < 1.0 for c in costs)


@needs_mpi
def test_a_probed_model_with_ranks_as_nodes_drives_the_library(programs, tmp_path):
    """A real `rankwise-probe --group-by rank` on this host: its node names
    ("host:rank") are the ones the library looks for; results stay right
    and the decisions come from the model, with no warning."""
    _, one = programs
    model = tmp_path / "local.rwm"
    probe = subprocess.run(["mpirun", "-np", "4", "--oversubscribe", str(paths.program("rankwise-probe", "mpi")),
                            "--group-by", "rank", "--output", str(model), "--sizes", "8,1K,64K", "--repetitions", "2",
                            "--rounds", "1"], capture_output=True, text=True, env=mpi_environment(), timeout=120)
    assert probe.returncode == 0 and model.exists(), probe.stderr[-2000:]
    r = run_mpi([str(one), "reversed"], 4, {**preload(), "RANKWISE_MODEL": str(model)})
    assert r.returncode == 0 and "0 failures" in r.stdout, r.stdout + r.stderr[-3000:]
    assert "rankwise-coll: warning" not in r.stderr and "rankwise-coll: error" not in r.stderr, r.stderr[-2000:]
    made = re.findall(r"^rankwise-coll: decided (\w+) .* from the model: (\w+)", r.stderr, re.M)
    assert {op for op, _ in made} >= {"bcast", "reduce", "gather", "scatter", "allreduce"}, made


@needs_mpi
@pytest.mark.parametrize("comm,rules_apply", [("world", True), ("dup", True), ("reversed", False),
                                              ("split", False)])
def test_the_world_rules_apply_only_to_the_worlds_ranks_in_order(programs, model_file, tmp_path, comm, rules_apply):
    _, one = programs
    rules = tmp_path / "rules.rwr"
    rules.write_text(tree_rules(4))
    r = run_mpi([str(one), comm], 4, {**preload(), "RANKWISE_COLL_RULES": str(rules)})
    assert r.returncode == 0 and "0 failures" in r.stdout, r.stdout + r.stderr[-3000:]
    assert bool(decided(r.stderr).get("rules")) == rules_apply, r.stderr[-2000:]
    # with a model too, the other communicators follow the model
    r = run_mpi([str(one), comm], 4, {**preload(), "RANKWISE_COLL_RULES": str(rules),
                                     "RANKWISE_MODEL": str(model_file)})
    assert r.returncode == 0 and "0 failures" in r.stdout, r.stdout + r.stderr[-3000:]
    paths_taken = decided(r.stderr)
    assert bool(paths_taken.get("rules")) == rules_apply
    if not rules_apply:
        assert "bcast" in paths_taken.get("model", set()), r.stderr[-2000:]


@needs_mpi
def test_a_malformed_rules_file_is_one_line_and_everything_passes_through(programs, tmp_path):
    check, _ = programs
    rules = tmp_path / "bad.rwr"
    rules.write_text(tree_rules(4).replace("alg=flat", "alg=fastest"))
    r = run_mpi([str(check), "101"], 4, {"RANKWISE_COLL_RULES": str(rules), "RANKWISE_COLL_TRACE": "1"})
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    checks_passed(r.stdout)
    errors = [line for line in r.stderr.splitlines() if line.startswith("rankwise-coll: error:")]
    assert len(errors) == 1 and f"{rules}:6:" in errors[0] and "fastest" in errors[0], errors
    assert not decided(r.stderr)


@needs_mpi
def test_rules_for_another_size_are_reported_and_match_nothing(programs, tmp_path):
    _, one = programs
    rules = tmp_path / "rules.rwr"
    rules.write_text(tree_rules(4))
    r = run_mpi([str(one), "world"], 3, {**preload(), "RANKWISE_COLL_RULES": str(rules)})
    assert r.returncode == 0 and "0 failures" in r.stdout, r.stdout + r.stderr[-3000:]
    warnings = [line for line in r.stderr.splitlines() if line.startswith("rankwise-coll: warning:")]
    assert warnings == [f"rankwise-coll: warning: {rules} is for 4 ranks, MPI_COMM_WORLD has 3: no call will match it"]
    assert not decided(r.stderr)


@needs_mpi
@pytest.mark.parametrize("start", ["init", "init_thread"])
def test_the_rules_are_read_at_mpi_init(programs, tmp_path, start):
    """A program that makes no collective still hears of a broken file:
    the library reads it in MPI_Init (MPI_Init_thread), not at a first call."""
    _, one = programs
    rules = tmp_path / "bad.rwr"
    rules.write_text("rankwise-coll-rules 1\nrule op=bcast root=0 bytes=0:9 alg=passthrough\n")
    r = run_mpi([str(one), start], 3, {**preload(), "RANKWISE_COLL_RULES": str(rules)})
    assert r.returncode == 0, r.stderr[-2000:]
    errors = [line for line in r.stderr.splitlines() if line.startswith("rankwise-coll: error:")]
    assert len(errors) == 1 and f"{rules}:2:" in errors[0], r.stderr[-2000:]


@needs_mpi
def test_a_bad_search_budget_warns_once_and_keeps_the_default(programs, model_file):
    _, one = programs
    r = run_mpi([str(one), "world"], 4, {**preload(), "RANKWISE_MODEL": str(model_file),
                                          "RANKWISE_COLL_MAX_EVALS": "lots", "RANKWISE_COLL_TRACE": "1"})
    assert r.returncode == 0 and "0 failures" in r.stdout, r.stdout + r.stderr[-3000:]
    warnings = [line for line in r.stderr.splitlines() if line.startswith("rankwise-coll: warning:")]
    assert warnings == ["rankwise-coll: warning: RANKWISE_COLL_MAX_EVALS=lots is not an integer in 0..1000000; "
                        "1000 runs"], r.stderr[-2000:]
    assert decided(r.stderr)


@needs_mpi
def test_nodes_missing_from_the_model_warn_and_pass_through(programs, tmp_path):
    _, one = programs
    other = tmp_path / "other.rwm"
    synthetic_model([f"elsewhere:{r}" for r in range(4)]).save(other)
    r = run_mpi([str(one), "world"], 4, {**preload(), "RANKWISE_MODEL": str(other)})
    assert r.returncode == 0 and "0 failures" in r.stdout, r.stdout + r.stderr[-3000:]
    warnings = [line for line in r.stderr.splitlines() if line.startswith("rankwise-coll: warning:")]
    assert len(warnings) == 1 and "is not in the model" in warnings[0] and str(other) in warnings[0], warnings
    assert not decided(r.stderr)
    r = run_mpi([str(one), "world"], 4, {**preload(), "RANKWISE_MODEL": str(tmp_path / "absent.rwm")})
    assert r.returncode == 0 and "0 failures" in r.stdout, r.stdout + r.stderr[-3000:]
    errors = [line for line in r.stderr.splitlines() if line.startswith("rankwise-coll: error:")]
    assert len(errors) == 1 and "absent.rwm" in errors[0], errors


@needs_mpi
def test_the_in_job_probe_decides_when_there_is_no_model(programs):
    """RANKWISE_COLL_PROBE=1 without rules or a model: the in-job
    measurement runs once, reports its cost, and the decisions come from
    it; results stay right."""
    _, one = programs
    r = run_mpi([str(one), "world"], 3, {**preload(), "RANKWISE_COLL_PROBE": "1"})
    assert r.returncode == 0 and "0 failures" in r.stdout, r.stdout + r.stderr[-3000:]
    cost = re.findall(r"^rankwise-coll: in-job measurement \(nodes \d+, ranks 3\): ([0-9.e-]+) s$", r.stderr, re.M)
    assert len(cost) == 1 and 0 < float(cost[0]) < 5, r.stderr[-2000:]
    assert re.search(r"^rankwise-coll: decided \w+ .* from the probe: ", r.stderr, re.M), r.stderr[-2000:]
    assert "rankwise-coll: warning" not in r.stderr and "rankwise-coll: error" not in r.stderr


@needs_mpi
def test_rules_and_model_under_address_sanitizer(model_file, tmp_path):
    exe = asan_coll_check(tmp_path)
    rules = tmp_path / "rules.rwr"
    rules.write_text(tree_rules(4))
    env = {**ASAN_ENV, "RANKWISE_COLL_RULES": str(rules), "RANKWISE_MODEL": str(model_file), "RANKWISE_COLL_TRACE": "1"}
    r = run_mpi([str(exe), "999"], 4, env, timeout=300)
    assert "AddressSanitizer" not in r.stderr and "runtime error" not in r.stderr, r.stderr[-4000:]
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    checks_passed(r.stdout)
    assert {"rules", "model"} <= set(decided(r.stderr))
