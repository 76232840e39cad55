"""MPICH's collective tests under librankwise_coll (Open MPI, LD_PRELOAD).

SimGrid ships MPICH's tests in teshsuite/smpi/mpich3-test/coll. This script
copies them at run time from a SimGrid checkout or git directory (or clones
SimGrid), outside the repository, builds those that call the six collectives
the library defines (and a few that must pass through: nonblocking ones)
against Open MPI, and runs each with every algorithm forced in turn
(RANKWISE_COLL_<OP>=...). A test passes when it exits 0 and prints
" No Errors" (MPICH's convention; some tests spell it " No errors"). The
first row runs without the library: the baseline of this MPI. Nothing of MPICH is kept in the repo.

    .venv/bin/python studies/coll_mpich_tests.py [--simgrid PATH] [--work DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path

from rankwise import paths

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


def build(work: Path) -> dict[str, Path]:
    """The mtest helpers, then every test; a test that does not build is left out (and said)."""
    objs = []
    for util in ("mtest.c", "mtest_datatype.c", "mtest_datatype_gen.c"):
        out = work / (util[:-2] + ".o")
        subprocess.run(["mpicc", "-O1", "-w", f"-I{work / 'include'}", "-c", str(work / "util" / util), "-o",
                        str(out)], check=True)
        objs.append(str(out))
    exes = {}
    for name in sorted({t for t, _, _ in TESTS}):
        exe = work / "bin" / name
        exe.parent.mkdir(exist_ok=True)
        r = subprocess.run(["mpicc", "-O1", "-w", f"-I{work / 'include'}", str(work / "coll" / f"{name}.c"), *objs,
                            "-lm", "-o", str(exe)], capture_output=True, text=True)
        if r.returncode == 0:
            exes[name] = exe
        else:
            why = next((line for line in r.stderr.splitlines() if "error" in line), "")
            print(f"  {name}: does not build against this MPI ({why.strip()[:100]})")
    return exes


def run_one(exe: Path, n: int, args: list[str], variables: dict[str, str]) -> bool:
    cmd = ["mpirun", "-np", str(n), "--oversubscribe"]
    for k, v in variables.items():
        cmd += ["-x", f"{k}={v}"]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    try:
        r = subprocess.run(cmd + [str(exe), *args], capture_output=True, text=True, env=env, timeout=120)
    except subprocess.TimeoutExpired:
        return False
    return r.returncode == 0 and " no errors" in r.stdout.lower()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--simgrid", help="a SimGrid checkout or git directory (default: clone from GitHub)")
    ap.add_argument("--work", type=Path, help="where to copy and build the tests (default: a temporary folder)")
    ap.add_argument("--json", type=Path, help="write the results here too")
    opts = ap.parse_args()
    lib = paths.PACKAGE_DIR / "_lib" / "librankwise_coll.so"
    if not lib.exists():
        print(f"rankwise: error: {lib} is missing: run 'make'", file=sys.stderr)
        return 1
    work = opts.work or Path(tempfile.mkdtemp(prefix="rankwise-mpich3-"))
    work.mkdir(parents=True, exist_ok=True)
    copy_tests(opts.simgrid, work)
    exes = build(work)
    results: dict[str, dict[str, bool]] = {}
    t0 = time.time()
    for label, rooted, unrooted in ALGORITHMS:
        variables = {} if rooted is None else {
            "LD_PRELOAD": str(lib), **{f"RANKWISE_COLL_{op}": rooted for op in OPS[:4]},
            "RANKWISE_COLL_ALLREDUCE": unrooted, "RANKWISE_COLL_ALLGATHER": unrooted}
        if label == "chain+seg":
            variables["RANKWISE_COLL_SEGMENT"] = "4096"
        row = {}
        for name, n, args in TESTS:
            if name in exes:
                row[f"{name} {n} {' '.join(args)}".strip()] = run_one(exes[name], n, args, variables)
        results[label] = row
        failed = [k for k, ok in row.items() if not ok]
        print(f"{label:12s} {sum(row.values()):3d} passed, {len(failed):2d} failed"
              + (f"  ({', '.join(failed)})" if failed else ""), flush=True)
    print(f"{len(exes)} tests built, {len(TESTS)} runs per algorithm, {time.time() - t0:.0f} s")
    if opts.json:
        opts.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
