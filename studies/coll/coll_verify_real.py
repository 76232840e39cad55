"""Decisions verified in the job, under real Open MPI (docs/concepts/collectives.md "Verified in the job").

A model probed on this host (`rankwise probe --group-by rank`, 4 ranks: ranks as nodes) drives
the library's decisions for small broadcasts, scatters and gathers from rank 0. Each round runs
studies/coll/coll_verify_real.c three ways, interleaved: the MPI's own (no preload), the library with
the model and verification off (the choice as predicted), and with verification on (the default
on a real MPI). Printed per operation and size: the median over rounds of each way's time per
call, the library's ratio to the MPI's own, and the verdicts of the verified runs (the same in
every round?). Goal (issue 25): with verification, no row more than 2 % slower than the MPI's
own beyond the run-to-run spread, and the same verdict in every round.

    .venv/bin/python studies/coll/coll_verify_real.py [--rounds 5] [--calls 200] [--ranks 4] [--lib SO]

--lib preloads another build of the library (an older one, to compare).
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

from rankwise.util import paths
from rankwise.cluster.launch import mpi_environment

SOURCE = Path(__file__).resolve().parent / "coll_verify_real.c"
VERDICT = re.compile(r"^rankwise-coll: verified (\w+) root 0 (\d+)\+ bytes .*: (tree|\w+|the MPI's own)$", re.M)


def run(exe: Path, ranks: int, calls: int, env: dict[str, str]) -> tuple[dict[tuple[str, int], float], str]:
    cmd = ["mpirun", "-np", str(ranks), "--oversubscribe", "--bind-to", "none", "--mca", "mpi_yield_when_idle", "1"]
    for k, v in env.items():
        cmd += ["-x", f"{k}={v}"]
    out = subprocess.run(cmd + [str(exe), str(calls)], capture_output=True, text=True, env=mpi_environment(),
                         timeout=900, check=True)
    times = {(op, int(size)): float(us) for op, size, us in (line.split() for line in out.stdout.splitlines())}
    return times, out.stderr


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--calls", type=int, default=200, help="calls per timed batch")
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--lib", type=Path, help="the library to preload (default: the installed one)")
    opts = ap.parse_args()
    lib = (opts.lib or paths.PACKAGE_DIR / "_lib" / "librankwise_coll.so").resolve()
    if not lib.is_file():
        print(f"rankwise: error: {lib}: no such library", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as d:
        exe, model = Path(d) / "coll_verify_real", Path(d) / "local.rwm"
        subprocess.run(["mpicc", "-O2", str(SOURCE), "-o", str(exe)], check=True)
        probe = [sys.executable, "-m", "rankwise", "probe", "--launcher",
                 f"mpirun -np {opts.ranks} --oversubscribe", "--group-by", "rank", "--sizes", "8,1K,64K,1M",
                 "-o", str(model)]
        subprocess.run(probe, check=True, capture_output=True, env=mpi_environment())
        ways = {"MPI's own": {}, "model, unverified": {"LD_PRELOAD": str(lib), "RANKWISE_MODEL": str(model),
                                                        "RANKWISE_COLL_VERIFY": "0"},
                "model, verified": {"LD_PRELOAD": str(lib), "RANKWISE_MODEL": str(model),
                                    "RANKWISE_COLL_VERIFY": "1", "RANKWISE_COLL_TRACE": "1"}}
        times: dict[str, dict[tuple[str, int], list[float]]] = {w: defaultdict(list) for w in ways}
        verdicts: dict[tuple[str, int], list[str]] = defaultdict(list)
        for r in range(opts.rounds):
            for way, env in ways.items():
                t, err = run(exe, opts.ranks, opts.calls, env)
                for key, us in t.items():
                    times[way][key].append(us)
                for op, size, kept in VERDICT.findall(err):
                    verdicts[(op, int(size))].append("own" if kept == "the MPI's own" else kept)
            print(f"  round {r + 1}/{opts.rounds}", file=sys.stderr, flush=True)
    own = times["MPI's own"]
    print(f"{opts.ranks} ranks on one host, Open MPI, medians of {opts.rounds} rounds (us per call; spread: "
          "the MPI's own max/min over rounds)")
    print(f"{'op':8s} {'bytes':>6s} {'own':>8s} {'spread':>7s} {'unverified':>11s} {'ratio':>6s} "
          f"{'verified':>9s} {'ratio':>6s}  verdicts")
    slower = 0
    for key in own:
        o = statistics.median(own[key])
        spread = max(own[key]) / min(own[key])
        u = statistics.median(times["model, unverified"][key])
        v = statistics.median(times["model, verified"][key])
        size_class = 1 << (key[1].bit_length() - 1)
        kept = verdicts.get((key[0], size_class), [])
        slower += v > 1.02 * o * spread
        print(f"{key[0]:8s} {key[1]:6d} {o:8.2f} {spread:7.2f} {u:11.2f} {u / o:6.2f} {v:9.2f} {v / o:6.2f}  "
              f"{','.join(kept) or '-'}")
    stable = sum(len(set(k)) <= 1 for k in verdicts.values())
    print(f"verified rows slower than the MPI's own beyond 2 % and its spread: {slower} of {len(own)}; "
          f"decisions with one verdict in every round: {stable} of {len(verdicts)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
