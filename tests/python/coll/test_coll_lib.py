"""librankwise_coll: every algorithm gives the MPI's own results (Open MPI on
localhost, SMPI on a small platform), one run under AddressSanitizer, an
unchanged application under LD_PRELOAD, and the profiler above the library
still recording every call.

The MPI programs are tests/engine/mpi/coll_check.c (each collective against
the MPI's own through rw_coll_<op>(..., RW_COLL_PASSTHROUGH), byte for byte)
and coll_app.c (a plain MPI application checking its own results).
RANKWISE_COLL_TRACE=1 makes the library say which algorithm ran, so a run
that silently passed everything through fails here."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from rankwise.util import paths
from rankwise.measure import profile as prof
from rankwise.cluster.launch import end_process_group, mpi_environment
from rankwise.traffic.matrix import CommMatrix

ROOT = Path(__file__).resolve().parents[3]
MPI_SOURCES = ROOT / "tests" / "engine" / "mpi"
LIB = paths.PACKAGE_DIR / "_lib"
OPS = ("BCAST", "REDUCE", "GATHER", "SCATTER", "ALLREDUCE", "ALLGATHER")

needs_mpi = pytest.mark.skipif(not (shutil.which("mpicc") and shutil.which("mpirun")), reason="no Open MPI")
needs_smpi = pytest.mark.skipif(not (shutil.which("smpicc") and shutil.which("smpirun")), reason="no SimGrid")


def _compile(cmd: list[str]) -> None:
    env = dict(os.environ)
    env.pop("SMPI_PRETEND_CC", None)
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stdout + r.stderr


def forced(rooted: str, unrooted: str | None = None) -> dict[str, str]:
    """Every collective forced to `rooted` (allreduce and allgather to `unrooted`)."""
    env = {f"RANKWISE_COLL_{op}": rooted for op in OPS}
    if unrooted:
        env["RANKWISE_COLL_ALLREDUCE"] = env["RANKWISE_COLL_ALLGATHER"] = unrooted
    env["RANKWISE_COLL_TRACE"] = "1"
    return env


def ran(stderr: str) -> dict[str, set[str]]:
    """Which algorithms the library says it ran, per collective."""
    out: dict[str, set[str]] = {}
    for op, alg in re.findall(r"^rankwise-coll: (\w+) (\w+) \d+ bytes$", stderr, re.M):
        out.setdefault(op, set()).add(alg)
    return out


def checks_passed(stdout: str) -> int:
    m = re.search(r"coll_check: (\d+) checks, (\d+) failures", stdout)
    assert m, stdout
    assert m.group(2) == "0", stdout
    return int(m.group(1))


def run_mpi(args: list[str], n: int, variables: dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess:
    """The run's output; on timeout the whole job ended (not mpirun alone:
    its ranks would spin on through the tests after it) and TimeoutExpired
    carrying what the job printed, to say where it stood."""
    cmd = ["mpirun", "-np", str(n), "--oversubscribe"]
    for k, v in variables.items():
        cmd += ["-x", f"{k}={v}"]
    proc = subprocess.Popen(cmd + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=mpi_environment(), start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        end_process_group(proc)
        out, err = proc.communicate()
        raise subprocess.TimeoutExpired(cmd + args, timeout, output=out, stderr=err) from None
    return subprocess.CompletedProcess(cmd + args, proc.returncode, out, err)


def timed_out(e: subprocess.TimeoutExpired, what: str) -> str:
    """A hung run's failure message: what hung and the end of its output."""
    return f"{what}\n--- stdout tail ---\n{(e.output or '')[-1500:]}\n--- stderr tail ---\n{(e.stderr or '')[-3000:]}"


@pytest.fixture(scope="session")
def check_mpi(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("coll-mpi") / "coll_check"
    _compile(["mpicc", "-O1", "-g", f"-I{LIB / 'include'}", str(MPI_SOURCES / "coll_check.c"), f"-L{LIB}",
              f"-Wl,-rpath,{LIB}", "-lrankwise_coll", "-o", str(out)])
    return out


@pytest.fixture(scope="session")
def app_mpi(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("coll-app") / "coll_app"
    _compile(["mpicc", "-O2", str(MPI_SOURCES / "coll_app.c"), "-o", str(out)])
    return out


# (rooted algorithm, allreduce/allgather algorithm, ranks, extra variables)
MPI_CASES = [
    ("binomial", None, 5, {}),
    ("knomial", None, 6, {"RANKWISE_COLL_KNOMIAL_K": "3"}),
    ("flat", None, 3, {}),
    ("chain", "ring", 8, {"RANKWISE_COLL_SEGMENT": "1000"}),  # pipelined broadcasts
    ("hier", "recursive_doubling", 7, {}),
    ("binomial", "rd", 4, {"RANKWISE_COLL_SEGMENT": "64"}),
    ("flat", "ring", 2, {}),
]


@needs_mpi
@pytest.mark.parametrize("rooted,unrooted,n,extra", MPI_CASES)
def test_every_algorithm_gives_the_mpi_results_under_open_mpi(check_mpi, rooted, unrooted, n, extra):
    r = run_mpi([str(check_mpi), "2001"], n, {**forced(rooted, unrooted), **extra})
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    assert checks_passed(r.stdout) > 1000
    algs = ran(r.stderr)
    want_unrooted = {"rd": "recursive_doubling"}.get(unrooted, unrooted) or rooted
    for op in ("bcast", "reduce", "gather", "scatter"):
        assert rooted in algs.get(op, set()), (op, algs)
    for op in ("allreduce", "allgather"):
        assert want_unrooted in algs.get(op, set()), (op, algs)


@needs_mpi
def test_passthrough_is_the_default_and_a_bad_value_says_so_once(check_mpi):
    r = run_mpi([str(check_mpi), "101"], 3, {"RANKWISE_COLL_TRACE": "1", "RANKWISE_COLL_BCAST": "fastest"})
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    checks_passed(r.stdout)
    # nothing forced, no rules: the MPI's own everywhere (the broadcasts, the trinary reduces
    # and allreduces and the multiring allgather are coll_check's calls of rw_coll_<op> with
    # explicit algorithms)
    algs = ran(r.stderr)
    assert set(algs) == {"bcast", "reduce", "allreduce", "allgather"}
    assert algs["reduce"] == algs["allreduce"] == {"trinary"}
    assert algs["allgather"] == {"multiring"}
    warnings = [line for line in r.stderr.splitlines() if line.startswith("rankwise-coll: warning:")]
    assert len(warnings) == 1 and "RANKWISE_COLL_BCAST=fastest" in warnings[0]


@needs_mpi
def test_an_unchanged_application_under_ld_preload(app_mpi):
    lib = LIB / "librankwise_coll.so"
    r = run_mpi([str(app_mpi)], 4, {"LD_PRELOAD": str(lib), **forced("knomial", "ring")})
    assert r.returncode == 0 and "coll_app: ok" in r.stdout, r.stdout + r.stderr
    assert set(ran(r.stderr)) == {"bcast", "reduce", "gather", "scatter", "allreduce", "allgather"}


@needs_mpi
def test_the_profiler_above_the_library_records_the_same_matrix(app_mpi, tmp_path):
    """LD_PRELOAD="profiler coll": the profiler's MPI_Bcast records the call
    and calls PMPI_Bcast, which is the library's; the matrix is the one the
    profiler alone records (logical traffic, whatever the algorithm)."""
    profiler, coll = prof.library("mpi"), LIB / "librankwise_coll.so"
    alone = run_mpi([str(app_mpi), "2"], 4, {"LD_PRELOAD": str(profiler),
                                             "RANKWISE_PROFILE_OUT": str(tmp_path / "alone.rwc")})
    assert alone.returncode == 0, alone.stderr
    both = run_mpi([str(app_mpi), "2"], 4, {"LD_PRELOAD": f"{profiler} {coll}",
                                            "RANKWISE_PROFILE_OUT": str(tmp_path / "both.rwc"),
                                            **forced("binomial", "rd")})
    assert both.returncode == 0 and "coll_app: ok" in both.stdout, both.stderr
    assert {"bcast", "reduce", "gather", "scatter", "allreduce", "allgather"} <= set(ran(both.stderr))
    a, b = CommMatrix.load(tmp_path / "alone.rwc"), CommMatrix.load(tmp_path / "both.rwc")
    key = lambda m: sorted(zip(m.src.tolist(), m.dst.tolist(), m.msgs.tolist(), m.bytes.tolist()))  # noqa: E731
    assert key(a) == key(b) and len(key(a)) == 12
    # the broadcast of 25 ints from rank 0, twice, is in it
    assert all(bytes_ >= 200 for s, d, m, bytes_ in key(b) if s == 0)


# The engine's MPI-free directories (its archive, engine/CMakeLists.txt) the collectives library links from:
# the mapper for topo.c, the node placement for rw_map's cores.
LIBRARY_ENGINE_DIRS = ("", "coll", "predict", "map", "node")


def library_mpi_sources(mpi: Path) -> list[Path]:
    """The library's own sources (engine/mpi/coll/CMakeLists.txt): its layers and the reorder entries."""
    return sorted((mpi / "coll").rglob("*.c")) + sorted((mpi / "reorder").glob("*.c"))


def library_engine_sources(engine: Path) -> list[tuple[str, Path]]:
    """(directory, source) of engine/src files the library is built with."""
    return [(sub, src) for sub in LIBRARY_ENGINE_DIRS for src in sorted((engine / sub).glob("*.c"))]


def asan_coll_check(out_dir: Path) -> Path:
    """The library's sources and coll_check in one executable built with
    -fsanitize=address,undefined (its MPI_ definitions take the place of
    the MPI's; the real ones are found with RTLD_NEXT as in the .so)."""
    srcs = library_mpi_sources(ROOT / "engine" / "mpi")
    engine = ROOT / "engine" / "src"
    core = [src for _, src in library_engine_sources(engine)]
    exe = out_dir / "coll_check_asan"
    flags = ["-O1", "-g", "-fsanitize=address,undefined", "-fno-omit-frame-pointer",
             f"-I{ROOT / 'engine' / 'include'}", f"-I{engine}", f"-I{engine / 'predict'}", f"-I{engine / 'coll'}",
             f"-I{ROOT / 'engine' / 'mpi' / 'coll'}"]
    objects = []
    for src in core:
        obj = out_dir / f"{src.parent.name}_{src.stem}.o"
        _compile(["mpicc", *flags, "-c", str(src), "-o", str(obj)])
        objects.append(obj)
    _compile(["mpicc", *flags, *map(str, srcs), *map(str, objects), str(MPI_SOURCES / "coll_check.c"), "-ldl",
              "-lm", "-o", str(exe)])
    return exe


# Open MPI's own allocations are not ours to report: leaks off, errors on
ASAN_ENV = {"ASAN_OPTIONS": "detect_leaks=0:abort_on_error=1", "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1"}


@needs_mpi
def test_one_run_under_address_sanitizer(tmp_path):
    exe = asan_coll_check(tmp_path)
    env = {**forced("binomial", "ring"), **ASAN_ENV, "RANKWISE_COLL_SCATTER": "hier",
           "RANKWISE_COLL_GATHER": "chain", "RANKWISE_COLL_SEGMENT": "300"}
    r = run_mpi([str(exe), "999"], 4, env, timeout=300)
    assert "AddressSanitizer" not in r.stderr and "runtime error" not in r.stderr, r.stderr[-4000:]
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    checks_passed(r.stdout)


# --- SMPI -------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def check_smpi(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("coll-smpi") / "coll_check"
    lib = LIB / "smpi"
    _compile(["smpicc", "-O1", f"-I{lib / 'include'}", str(MPI_SOURCES / "coll_check.c"), f"-L{lib}",
              "-Wl,--whole-archive", "-lrankwise_coll", "-Wl,--no-whole-archive", "-o", str(out)])
    return out


@needs_smpi
@pytest.mark.parametrize("rooted,unrooted", [("hier", "hier"), ("binomial", "ring"), ("knomial", "rd")])
def test_every_algorithm_gives_the_mpi_results_under_smpi(check_smpi, small_platform, tmp_path, rooted, unrooted):
    """7 ranks on the small platform's nodes, 2 per node for the two-level
    tree (nodes 0 0 1 1 2 2 3)."""
    hosts = small_platform.hostfile.read_text().split()
    hostfile = tmp_path / "hosts"
    hostfile.write_text("".join(f"{hosts[r // 2]}\n" for r in range(7)))
    env = {**os.environ, **forced(rooted, unrooted)}
    env.pop("SMPI_PRETEND_CC", None)
    r = subprocess.run(["smpirun", "-np", "7", "-platform", str(small_platform.platform_xml), "-hostfile",
                        str(hostfile), "--log=root.thres:critical", "--cfg=smpi/simulate-computation:no",
                        str(check_smpi), "301"], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    assert checks_passed(r.stdout) > 1000
    want = {"rd": "recursive_doubling"}.get(unrooted, unrooted)
    algs = ran(r.stderr)
    assert rooted in algs["bcast"] and want in algs["allreduce"], algs
