"""Passthrough overhead of librankwise_coll under Open MPI (goal: < 1 us per call).

Builds studies/coll/coll_overhead.c, runs it on 2 ranks alternately without and
with the library preloaded (no algorithm forced, no rules: every call goes
to the MPI's own), several rounds, and prints the median time per call of
each and their difference (the library's cost: the decision and the call
through to the MPI).

With --model, the preloaded runs decide from that model (RANKWISE_MODEL;
verification on, as by default on a real MPI): the warm-up calls make the
decision and its trials, the timed ones follow its verdict, so the
difference is what a call costs after a verdict. --lib times another build
of the library (an older one, to compare).

    .venv/bin/python studies/coll/coll_overhead.py [--iterations N] [--rounds R] [--model M] [--lib SO]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from rankwise.util import paths
SOURCE = Path(__file__).resolve().parent / "coll_overhead.c"


def run(exe: Path, iterations: int, preload: str | None, model: str | None) -> dict[str, float]:
    cmd = ["mpirun", "-np", "2", "--oversubscribe", "--bind-to", "none"]
    if preload:
        cmd += ["-x", f"LD_PRELOAD={preload}"]
        if model:
            cmd += ["-x", f"RANKWISE_MODEL={model}"]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    for k in list(env):
        if k.startswith("RANKWISE_COLL_") or k == "RANKWISE_MODEL":
            del env[k]
    out = subprocess.run(cmd + [str(exe), str(iterations)], capture_output=True, text=True, env=env, check=True)
    return {name: float(ns) for name, ns in (line.split() for line in out.stdout.splitlines())}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iterations", type=int, default=200000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--model", help="decide from this model (its nodes: the host's ranks, --group-by rank)")
    ap.add_argument("--lib", type=Path, help="the library to preload (default: the installed one)")
    opts = ap.parse_args()
    lib = (opts.lib or paths.PACKAGE_DIR / "_lib" / "librankwise_coll.so").resolve()
    if opts.model and not Path(opts.model).is_file():
        print(f"rankwise: error: {opts.model}: no such model file", file=sys.stderr)
        return 1
    if not lib.exists():
        print(f"rankwise: error: {lib} is missing: run 'make'", file=sys.stderr)
        return 1
    model = str(Path(opts.model).resolve()) if opts.model else None
    with tempfile.TemporaryDirectory() as d:
        exe = Path(d) / "coll_overhead"
        subprocess.run(["mpicc", "-O2", str(SOURCE), "-o", str(exe)], check=True)
        native: dict[str, list[float]] = {}
        preloaded: dict[str, list[float]] = {}
        for _ in range(opts.rounds):
            for store, preload in ((native, None), (preloaded, str(lib))):
                for name, ns in run(exe, opts.iterations, preload, model).items():
                    store.setdefault(name, []).append(ns)
    print(f"{'call':16s} {'native ns':>10s} {'preloaded ns':>13s} {'overhead ns':>12s}   "
          f"(median of {opts.rounds} rounds of {opts.iterations} calls, 2 ranks"
          f"{', model ' + opts.model if opts.model else ''})")
    for name in native:
        a, b = statistics.median(native[name]), statistics.median(preloaded[name])
        print(f"{name:16s} {a:10.1f} {b:13.1f} {b - a:12.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
