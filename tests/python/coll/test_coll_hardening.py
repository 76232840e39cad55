"""librankwise_coll inside a user's job, against what the environment and
the application may throw at it (issue 25, items 2, 2b, 3, 4 and 5;
docs/concepts/collectives.md, "Environment", "What passes through" and "Threads"):

- a file a variable names (RANKWISE_COLL_RULES, RANKWISE_MODEL) that is not a
  regular file, or is larger than the library reads: one line, the MPI's own
  collectives, never a hang (a FIFO with no writer) or a rank growing without
  bound (/dev/zero);
- booleans: the usual words, anything else refused once and taken as off;
- stderr: one short line per problem per job (values cut, one reader of the
  model, warnings from rank 0 of MPI_COMM_WORLD);
- logical operations on floats under MPI_ERRORS_RETURN: the MPI's own error
  (MPI_ERR_OP) on every rank whatever algorithm is forced, and the next call
  still right;
- MPI_THREAD_MULTIPLE with two threads making first collectives at once:
  right results, no crash, no hang, in repeated runs.

The MPI programs are plain applications (mpicc alone) under LD_PRELOAD:
tests/engine/mpi/coll_app.c and coll_hardening.c; coll_check.c (linked with
the library) where several communicators with different rank 0s matter."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from rankwise.util import paths
from test_coll_lib import checks_passed, needs_mpi, run_mpi, timed_out
from test_coll_rules import synthetic_model

ROOT = Path(__file__).resolve().parents[3]
MPI_SOURCES = ROOT / "tests" / "engine" / "mpi"
LIB = paths.PACKAGE_DIR / "_lib"
MODEL_CAP, RULES_CAP = 256 << 20, 64 << 20  # RWC_MODEL_MAX_BYTES, RWC_RULES_MAX_BYTES (engine/mpi/coll/coll.h)


def _compile(cmd: list[str]) -> None:
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.fixture(scope="module")
def progs(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("coll-hardening")
    out = {name: d / name for name in ("coll_app", "coll_hardening", "coll_check")}
    _compile(["mpicc", "-O1", str(MPI_SOURCES / "coll_app.c"), "-o", str(out["coll_app"])])
    _compile(["mpicc", "-O1", "-g", str(MPI_SOURCES / "coll_hardening.c"), "-o", str(out["coll_hardening"]),
              "-lpthread"])
    _compile(["mpicc", "-O1", "-g", f"-I{LIB / 'include'}", str(MPI_SOURCES / "coll_check.c"), f"-L{LIB}",
              f"-Wl,-rpath,{LIB}", "-lrankwise_coll", "-o", str(out["coll_check"])])
    return out


def preload(**variables: str) -> dict[str, str]:
    return {"LD_PRELOAD": str(LIB / "librankwise_coll.so"), **variables}


def lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("rankwise-coll:")]


def problems(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if re.match(r"rankwise-coll: (warning|error):", line)]


# --- item 3: files that are not regular, or too large ---------------------------------------


def _target(kind: str, tmp_path: Path, cap: int) -> tuple[str, str]:
    """(path, what the one line must say)."""
    if kind == "zero":
        return "/dev/zero", "character device"
    if kind == "fifo":
        fifo = tmp_path / "fifo"
        os.mkfifo(fifo)  # nobody ever writes: opening it to read would wait forever
        return str(fifo), "FIFO"
    if kind == "directory":
        return str(tmp_path), "directory"
    big = tmp_path / "big"  # sparse: no disk used
    with open(big, "wb") as f:
        f.truncate(cap + 1)
    return str(big), f"more than the {cap >> 20} MiB"


@needs_mpi
@pytest.mark.parametrize("var,cap", [("RANKWISE_COLL_RULES", RULES_CAP), ("RANKWISE_MODEL", MODEL_CAP)])
@pytest.mark.parametrize("kind", ["zero", "fifo", "directory", "too-large"])
def test_a_file_that_is_not_a_regular_file_is_one_line_and_passes_through(progs, tmp_path, var, cap, kind):
    path, why = _target(kind, tmp_path, cap)
    r = run_mpi([str(progs["coll_app"])], 3, preload(**{var: path}), timeout=60)
    assert r.returncode == 0 and "coll_app: ok" in r.stdout, r.stdout + r.stderr[-2000:]
    said = lines(r.stderr)
    assert len(said) == 1 and said[0].startswith("rankwise-coll: error: ") and why in said[0], said
    assert "pass through" in said[0], said


@needs_mpi
def test_a_long_path_is_cut_in_the_line(progs, tmp_path):
    deep = tmp_path / ("d" * 200) / ("e" * 200)
    deep.mkdir(parents=True)
    r = run_mpi([str(progs["coll_app"])], 2, preload(RANKWISE_MODEL=str(deep / "absent.rwm")), timeout=60)
    assert r.returncode == 0 and "coll_app: ok" in r.stdout, r.stdout + r.stderr[-2000:]
    said = lines(r.stderr)
    assert len(said) == 1 and "..." in said[0] and len(said[0]) < 512, said


# --- item 4: booleans ---------------------------------------------------------------------

# (value, taken as on, refused with one warning)
BOOLEANS = [("1", True, False), ("Yes", True, False), ("on", True, False), ("TRUE", True, False),
            ("false", False, False), ("no", False, False), ("0", False, False), ("Off", False, False),
            ("abc", False, True), ("2", False, True)]


@needs_mpi
@pytest.mark.parametrize("value,on,refused", BOOLEANS[::2] + [BOOLEANS[-1]])  # one of each spelling's kind
def test_the_in_job_measurement_takes_only_booleans(progs, value, on, refused):
    r = run_mpi([str(progs["coll_app"])], 2, preload(RANKWISE_COLL_PROBE=value, RANKWISE_COLL_TRACE="1"),
                timeout=60)
    assert r.returncode == 0 and "coll_app: ok" in r.stdout, r.stdout + r.stderr[-2000:]
    assert ("rankwise-coll: in-job measurement" in r.stderr) == on, r.stderr[-2000:]
    expected = [f"rankwise-coll: warning: RANKWISE_COLL_PROBE={value} is not a boolean (1/0, true/false, yes/no, "
                "on/off); taken as off"] if refused else []
    assert problems(r.stderr) == expected, r.stderr[-2000:]


@needs_mpi
@pytest.mark.parametrize("value,on,refused", BOOLEANS[1::2] + [BOOLEANS[-2]])
def test_tracing_takes_only_booleans(progs, value, on, refused):
    r = run_mpi([str(progs["coll_app"])], 2, preload(RANKWISE_COLL_BCAST="binomial", RANKWISE_COLL_TRACE=value),
                timeout=60)
    assert r.returncode == 0 and "coll_app: ok" in r.stdout, r.stdout + r.stderr[-2000:]
    assert ("rankwise-coll: bcast binomial" in r.stderr) == on, r.stderr[-2000:]
    assert len(problems(r.stderr)) == int(refused), r.stderr[-2000:]


# --- item 5: one short line per problem per job -------------------------------------------


@needs_mpi
def test_a_huge_value_is_echoed_cut(progs):
    r = run_mpi([str(progs["coll_app"])], 3, preload(RANKWISE_COLL_BCAST="x" * 100_000), timeout=60)
    assert r.returncode == 0 and "coll_app: ok" in r.stdout, r.stdout + r.stderr[-2000:]
    assert problems(r.stderr) == ["rankwise-coll: warning: RANKWISE_COLL_BCAST=" + "x" * 64 + "... is not an "
                                  "algorithm of this collective; the MPI's own runs"]
    # a number beyond 64 bits is refused, not clamped
    r = run_mpi([str(progs["coll_app"])], 2, preload(RANKWISE_COLL_BCAST="chain",
                                                     RANKWISE_COLL_SEGMENT="99999999999999999999"), timeout=60)
    assert r.returncode == 0 and "coll_app: ok" in r.stdout, r.stdout + r.stderr[-2000:]
    assert problems(r.stderr) == ["rankwise-coll: warning: RANKWISE_COLL_SEGMENT=99999999999999999999 is not a "
                                  "number of bytes; broadcasts are not segmented"]


@pytest.fixture(scope="module")
def model_file(tmp_path_factory) -> Path:
    import socket
    path = tmp_path_factory.mktemp("hardening-model") / "ranks.rwm"
    synthetic_model([f"{socket.gethostname()}:{r}" for r in range(4)]).save(path)
    return path


@needs_mpi
def test_an_unreadable_model_a_bad_budget_and_a_missing_node_are_one_line_each_per_job(progs, model_file, tmp_path):
    """coll_check's communicators have different rank 0s (a reversed one,
    splits): each used to print the same line."""
    bad = tmp_path / "bad.rwm"
    bad.write_text("garbage\n")
    r = run_mpi([str(progs["coll_check"]), "101"], 4, {"RANKWISE_MODEL": str(bad)}, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr[-2000:]
    checks_passed(r.stdout)
    newest = re.search(r"#define RW_MODEL_FORMAT_VERSION (\d+)", (ROOT / "engine/include/rankwise.h").read_text())[1]
    assert problems(r.stderr) == [f"rankwise-coll: error: {bad}:1: not a rankwise model (expected 'rankwise-model "
                                  f"{newest}') (collectives and topology constructors pass through to the MPI)"]
    r = run_mpi([str(progs["coll_check"]), "101"], 4, {"RANKWISE_MODEL": str(model_file),
                                                       "RANKWISE_COLL_MAX_EVALS": "lots"}, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr[-2000:]
    checks_passed(r.stdout)
    assert problems(r.stderr) == ["rankwise-coll: warning: RANKWISE_COLL_MAX_EVALS=lots is not an integer in "
                                  "0..1000000; 1000 runs"]
    # a model lacking world rank 3's node: the world, the reversed and the odd split communicators meet it
    import socket
    three = tmp_path / "three.rwm"
    synthetic_model([f"{socket.gethostname()}:{r}" for r in range(3)]).save(three)
    r = run_mpi([str(progs["coll_check"]), "101"], 4, {"RANKWISE_MODEL": str(three)}, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr[-2000:]
    checks_passed(r.stdout)
    said = problems(r.stderr)
    assert len(said) == 1 and f":3') is not in the model {three} (collectives on this communicator pass through)" \
        in said[0], said


# --- item 2b: an operation the datatype does not take ---------------------------------------


def _error_classes(stdout: str) -> dict[str, list[int]]:
    return {m[0]: [int(x) for x in m[1].split()] for m in re.findall(r"^ops: (.+?): ([\d ]+)$", stdout, re.M)}


@pytest.fixture(scope="module")
def native_ops(progs) -> subprocess.CompletedProcess:
    """The same program without the library: what the MPI itself answers."""
    return run_mpi([str(progs["coll_hardening"]), "ops"], 4, {}, timeout=60)


@needs_mpi
@pytest.mark.parametrize("alg", ["binomial", "knomial", "flat", "chain", "hier", "trinary", "model"])
def test_logical_ops_on_floats_get_the_mpis_own_error_on_every_rank(progs, native_ops, model_file, alg):
    native = native_ops
    if "coll_hardening: ok" not in native.stdout:
        pytest.skip("this MPI does not answer MPI_ERR_OP on every rank itself: " + native.stdout[-500:])
    variables = {"RANKWISE_MODEL": str(model_file)} if alg == "model" else \
        {"RANKWISE_COLL_REDUCE": alg, "RANKWISE_COLL_ALLREDUCE": alg}
    r = run_mpi([str(progs["coll_hardening"]), "ops"], 4, preload(**variables), timeout=60)
    assert r.returncode == 0 and "coll_hardening: ok" in r.stdout, r.stdout[-3000:] + r.stderr[-2000:]
    assert _error_classes(r.stdout) == _error_classes(native.stdout)
    assert not lines(r.stderr), r.stderr[-2000:]


# --- item 2: MPI_THREAD_MULTIPLE ----------------------------------------------------------

THREAD_RUNS = 10


@needs_mpi
def test_two_threads_making_first_collectives_at_once(progs):
    """Each run: 3 rounds of two threads, each making the first bcast,
    reduce and allreduce on its own duplicate of MPI_COMM_WORLD, with the
    library's algorithms forced. Before: SIGSEGV or a hang in 3 of 25."""
    variables = preload(RANKWISE_COLL_BCAST="binomial", RANKWISE_COLL_REDUCE="binomial",
                        RANKWISE_COLL_ALLREDUCE="ring", RANKWISE_COLL_TRACE="1")
    for run in range(THREAD_RUNS):
        try:
            r = run_mpi([str(progs["coll_hardening"]), "threads"], 4, variables, timeout=30)
        except subprocess.TimeoutExpired as e:
            pytest.fail(timed_out(e, f"run {run} hung"))
        if "no MPI_THREAD_MULTIPLE" in r.stdout:
            pytest.skip("this MPI does not provide MPI_THREAD_MULTIPLE")
        assert r.returncode == 0 and "coll_hardening: ok" in r.stdout, (run, r.stdout + r.stderr[-2000:])
        # said once per job; nothing of the library's ran
        assert lines(r.stderr) == ["rankwise-coll: warning: MPI_THREAD_MULTIPLE: the library is not thread-safe; "
                                   "every collective goes to the MPI's own"], (run, r.stderr[-2000:])
    quiet = run_mpi([str(progs["coll_hardening"]), "threads"], 4, preload(), timeout=30)
    assert quiet.returncode == 0 and "coll_hardening: ok" in quiet.stdout and not lines(quiet.stderr)


@needs_mpi
def test_mutated_environments_small():
    """12 MPI jobs with damaged library environments (studies/hardening/mutate_library.py; the 300-run campaign is
    in docs/results/hardening.md): no hang, crash, wrong result or repeated warning."""
    r = subprocess.run([sys.executable, str(ROOT / "studies" / "hardening" / "mutate_library.py"), "--count", "12", "--seed", "5",
                        "--timeout", "60"], capture_output=True, text=True, timeout=900)
    assert "mutate_library: 12 MPI runs" in r.stdout, r.stdout + r.stderr[-2000:]
    assert " 0 hangs, 0 deaths by a signal, 0 wrong results or failed runs, 0 with repeated" in r.stdout, r.stdout
    assert r.returncode == 0
