"""MPICH's collective tests under librankwise_coll (LD_PRELOAD), Open MPI or MPICH.

SimGrid ships MPICH's tests in teshsuite/smpi/mpich3-test/coll. This script
copies them at run time from a SimGrid checkout or git directory (or clones
SimGrid), outside the repository, builds those that call the six collectives
the library defines (and a few that must pass through: nonblocking ones)
against the MPI, and runs each with every algorithm forced in turn
(RANKWISE_COLL_<OP>=...). A test passes when it exits 0 and prints
" No Errors" (MPICH's convention; some tests spell it " No errors"). The
first row runs without the library: the baseline of this MPI. Nothing of MPICH is kept in the repo.

--mpi mpich builds the tests with mpicc.mpich and the library with MPICH (into
WORK/lib-build, unless --lib names one) and runs them with mpiexec.hydra.
--launcher runs them through another launcher of that MPI, e.g. an emulated
cluster's (docs/concepts/emulation.md): 'emu/mpiexec.hydra -f emu/machinefile'
or 'emu/mpirun --hostfile emu/hostfile --oversubscribe'; rankwise adds the
rank count and the variables in the launcher's own syntax.

    .venv/bin/python studies/coll/coll_mpich_tests.py [--simgrid PATH] [--work DIR]
    .venv/bin/python studies/coll/coll_mpich_tests.py --mpi mpich --launcher 'emu/mpiexec.hydra -f emu/machinefile' \\
        --algorithms native,passthrough,binomial,ring
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path

from rankwise.util import paths
from rankwise.measure.profile import launcher_kind

ROOT = Path(__file__).resolve().parents[2]
COMPILERS = {"openmpi": "mpicc", "mpich": "mpicc.mpich"}
LAUNCHERS = {"openmpi": "mpirun --oversubscribe", "mpich": "mpiexec.hydra"}

PREFIX = "teshsuite/smpi/mpich3-test"
# (test, ranks, arguments) from coll/testlist: those calling bcast, reduce,
# gather, scatter, allreduce or allgather, plus nonblocking ones.
TESTS = [
    ("allred", 4, []), ("allred", 7, []), ("allred", 4, ["100"]), ("allredmany", 4, []), ("allred2", 4, []),
    ("allred3", 10, []), ("allred4", 4, []), ("allred5", 5, []), ("allred6", 4, []), ("allred6", 7, []),
    ("allred_derived", 4, []), ("allred_float", 10, []), ("reduce", 5, []), ("reduce", 10, []),
    ("op_commutative", 2, []), ("red3", 10, []), ("red4", 10, []), ("allgather2", 10, []),
    ("allgather3", 10, []), ("allgather_struct", 10, []), ("bcasttest", 4, []), ("bcasttest", 8, []),
    ("bcasttest", 10, []), ("bcast", 4, []), ("bcastzerotype", 1, []), ("bcastzerotype", 5, []),
    ("coll2", 5, []), ("coll3", 5, []), ("coll4", 4, []), ("coll5", 4, []), ("coll6", 5, []),
    ("coll7", 1, []), ("coll7", 5, []), ("coll8", 4, []), ("coll9", 4, []), ("coll10", 4, []),
    ("coll11", 4, []), ("coll12", 4, []), ("coll13", 4, []), ("longuser", 4, []), ("gather", 4, []),
    ("gather2", 4, []), ("gather_big", 8, []), ("scattern", 4, []), ("scatter2", 4, []), ("scatter3", 4, []),
    ("opland", 4, []), ("oplor", 4, []), ("oplxor", 5, []), ("opband", 4, []), ("opbor", 4, []),
    ("opbxor", 5, []), ("opprod", 6, []), ("opsum", 4, []), ("opmin", 4, []), ("opminloc", 4, []),
    ("opmax", 5, []), ("opmaxloc", 5, []), ("uoplong", 4, []), ("uoplong", 11, []), ("nonblocking", 5, []),
    ("nonblocking2", 4, []), ("nonblocking3", 4, []), ("iallred", 2, []),
]
OPS = ("BCAST", "REDUCE", "GATHER", "SCATTER", "ALLREDUCE", "ALLGATHER")
# (label, rooted algorithm, allreduce/allgather algorithm)
ALGORITHMS = [("native", None, None), ("passthrough", "passthrough", "passthrough"), ("binomial", "binomial", "binomial"),
              ("knomial", "knomial", "knomial"), ("flat", "flat", "flat"), ("chain+seg", "chain", "chain"),
              ("hier", "hier", "hier"), ("ring", "binomial", "ring"), ("rd", "binomial", "recursive_doubling")]


def copy_tests(simgrid: str | None, work: Path) -> Path:
    """teshsuite/smpi/mpich3-test/{coll,include,util} into work."""
    src = Path(simgrid) if simgrid else None
    if src is None:
        clone = work / "simgrid.git"
        if not clone.exists():
            subprocess.run(["git", "clone", "-q", "--bare", "--depth", "1", "--filter=blob:none",
                            "https://github.com/simgrid/simgrid", str(clone)], check=True)
        src = clone
    if (src / PREFIX).is_dir():  # a checkout
        for part in ("coll", "include", "util"):
            shutil.copytree(src / PREFIX / part, work / part, dirs_exist_ok=True)
    else:  # a git directory
        tar = subprocess.run(["git", f"--git-dir={src}", "archive", "HEAD", *(f"{PREFIX}/{p}" for p in
                              ("coll", "include", "util"))], check=True, capture_output=True).stdout
        with tarfile.open(fileobj=BytesIO(tar)) as t:
            t.extractall(work / "archive", filter="data")
        for part in ("coll", "include", "util"):
            shutil.copytree(work / "archive" / PREFIX / part, work / part, dirs_exist_ok=True)
    return work


def build(work: Path, mpicc: str = "mpicc", names: set[str] | None = None) -> dict[str, Path]:
    """The mtest helpers, then every test; a test that does not build is left out (and said)."""
    objs = []
    for util in ("mtest.c", "mtest_datatype.c", "mtest_datatype_gen.c"):
        out = work / (util[:-2] + ".o")
        subprocess.run([mpicc, "-O1", "-w", f"-I{work / 'include'}", "-c", str(work / "util" / util), "-o",
                        str(out)], check=True)
        objs.append(str(out))
    exes = {}
    for name in sorted(names or {t for t, _, _ in TESTS}):
        exe = work / "bin" / name
        exe.parent.mkdir(exist_ok=True)
        r = subprocess.run([mpicc, "-O1", "-w", f"-I{work / 'include'}", str(work / "coll" / f"{name}.c"), *objs,
                            "-lm", "-o", str(exe)], capture_output=True, text=True)
        if r.returncode == 0:
            exes[name] = exe
        else:
            why = next((line for line in r.stderr.splitlines() if "error" in line), "")
            print(f"  {name}: does not build against this MPI ({why.strip()[:100]})")
    return exes


def mpich_library(work: Path) -> Path:
    """librankwise_coll built with MPICH (as tests/python/test_mpich.py does)."""
    build_dir = work / "lib-build"
    subprocess.run(["cmake", "-S", str(ROOT / "engine"), "-B", str(build_dir), "-DCMAKE_BUILD_TYPE=Release",
                    f"-DMPI_C_COMPILER={shutil.which('mpicc.mpich')}"], check=True, capture_output=True)
    subprocess.run(["cmake", "--build", str(build_dir), "--target", "rankwise_coll", "-j", "2"], check=True,
                   capture_output=True)
    return build_dir / "mpi" / "coll" / "librankwise_coll.so"


def run_one(exe: Path, n: int, args: list[str], variables: dict[str, str],
            launcher: list[str] | None = None, kind: str = "openmpi", timeout: float = 120) -> bool:
    cmd = list(launcher or LAUNCHERS["openmpi"].split())
    cmd += ["-np" if kind == "openmpi" else "-n", str(n)]
    for k, v in variables.items():
        cmd += ["-x", f"{k}={v}"] if kind == "openmpi" else ["-genv", k, v]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    # a session of its own: on a timeout the launcher's daemons and ranks go too (on an emulated
    # cluster they run in other namespaces, children of the launcher)
    proc = subprocess.Popen(cmd + [str(exe), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        stdout, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return False
    r = subprocess.CompletedProcess(cmd, proc.returncode, stdout)
    return r.returncode == 0 and " no errors" in r.stdout.lower()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--simgrid", help="a SimGrid checkout or git directory (default: clone from GitHub)")
    ap.add_argument("--work", type=Path, help="where to copy and build the tests (default: a temporary folder)")
    ap.add_argument("--json", type=Path, help="write the results here too")
    ap.add_argument("--mpi", choices=sorted(COMPILERS), default="openmpi", help="the MPI to build and run with")
    ap.add_argument("--lib", type=Path, help="librankwise_coll built for that MPI (default: the package's for "
                    "Open MPI; for MPICH, one built into WORK)")
    ap.add_argument("--launcher", help="the launcher and its options, without the rank count (default: "
                    + "; ".join(f"{k}: '{v}'" for k, v in LAUNCHERS.items()) + ")")
    ap.add_argument("--algorithms", help="only these rows, e.g. native,binomial,ring (default: all: "
                    + ",".join(label for label, _, _ in ALGORITHMS) + ")")
    ap.add_argument("--tests", help="only these tests, by name, e.g. reduce,bcast (default: all)")
    ap.add_argument("--max-ranks", type=int, default=0, help="only the runs of at most this many ranks")
    ap.add_argument("--timeout", type=float, default=120, help="seconds a run may take (default 120)")
    opts = ap.parse_args()
    tests = [t for t in TESTS if (not opts.tests or t[0] in opts.tests.split(","))
             and (not opts.max_ranks or t[1] <= opts.max_ranks)]
    unknown = sorted(set(opts.tests.split(",")) - {t[0] for t in TESTS}) if opts.tests else []
    if unknown or not tests:
        print(f"rankwise: error: --tests: {'no test ' + ', '.join(unknown) if unknown else 'no run left'}",
              file=sys.stderr)
        return 2
    rows = ALGORITHMS
    if opts.algorithms:
        wanted = opts.algorithms.split(",")
        unknown = sorted(set(wanted) - {label for label, _, _ in ALGORITHMS})
        if unknown:
            print(f"rankwise: error: --algorithms: no row {', '.join(unknown)}", file=sys.stderr)
            return 2
        rows = [row for row in ALGORITHMS if row[0] in wanted]
    mpicc = shutil.which(COMPILERS[opts.mpi])
    if mpicc is None:
        print(f"rankwise: error: {COMPILERS[opts.mpi]} is not installed", file=sys.stderr)
        return 2
    launcher = shlex.split(opts.launcher or LAUNCHERS[opts.mpi])
    kind = launcher_kind(launcher[0])
    if kind not in ("openmpi", "hydra"):
        print(f"rankwise: error: --launcher: '{launcher[0]} --version' names neither Open MPI nor Hydra",
              file=sys.stderr)
        return 2
    work = opts.work or Path(tempfile.mkdtemp(prefix="rankwise-mpich3-"))
    work.mkdir(parents=True, exist_ok=True)
    lib = opts.lib or (mpich_library(work) if opts.mpi == "mpich" else
                       paths.PACKAGE_DIR / "_lib" / "librankwise_coll.so")
    if not lib.exists():
        print(f"rankwise: error: {lib} is missing: run 'make'", file=sys.stderr)
        return 1
    copy_tests(opts.simgrid, work)
    exes = build(work, mpicc, {t[0] for t in tests})
    print(f"{opts.mpi}, launcher {shlex.join(launcher)}, library {lib}", flush=True)
    results: dict[str, dict[str, bool]] = {}
    t0 = time.time()
    for label, rooted, unrooted in rows:
        variables = {} if rooted is None else {
            "LD_PRELOAD": str(lib), **{f"RANKWISE_COLL_{op}": rooted for op in OPS[:4]},
            "RANKWISE_COLL_ALLREDUCE": unrooted, "RANKWISE_COLL_ALLGATHER": unrooted}
        if label == "chain+seg":
            variables["RANKWISE_COLL_SEGMENT"] = "4096"
        row = {}
        for name, n, args in tests:
            if name in exes:
                row[f"{name} {n} {' '.join(args)}".strip()] = run_one(exes[name], n, args, variables, launcher, kind,
                                                                     opts.timeout)
        results[label] = row
        failed = [k for k, ok in row.items() if not ok]
        print(f"{label:12s} {sum(row.values()):3d} passed, {len(failed):2d} failed"
              + (f"  ({', '.join(failed)})" if failed else ""), flush=True)
    print(f"{len(exes)} tests built, {sum(t[0] in exes for t in tests)} runs per algorithm, {time.time() - t0:.0f} s")
    if opts.json:
        opts.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
