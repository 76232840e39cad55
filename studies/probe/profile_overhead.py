"""Overhead of the PMPI profiler: a 2-rank ping-pong under Open MPI, with and
without librankwise_profile.so preloaded, on MPI_COMM_WORLD and on a
communicator from MPI_Comm_split (whose ranks go through the translation
table). Each iteration is one MPI_Send and one MPI_Recv per rank, so

    overhead per call = (time per iteration with - without) / 2

(both ranks' calls are on the critical path of a ping-pong). A second loop,
rank 0 calling MPI_Sendrecv to itself, shows one call's overhead without a
partner's noise.

Runs alternate between the two builds and each keeps its fastest, which
filters out most of a shared host's noise. Usage:

    .venv/bin/python studies/probe/profile_overhead.py [--iterations 200000] [--runs 5] [--size 8]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from rankwise.measure import profile as prof
from rankwise.cluster.launch import mpi_environment

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "tests" / "engine" / "mpi" / "profile_exerciser.c"


def run(exe: Path, iterations: int, size: int, preload: Path | None, work: Path) -> dict[str, float]:
    cmd = ["mpirun", "-np", "2", "--bind-to", "core"]
    if preload is not None:
        cmd += ["-x", f"LD_PRELOAD={preload}", "-x", f"RANKWISE_PROFILE_OUT={work / 'bench.rwc'}"]
    cmd += [str(exe), "pingpong", str(iterations), str(size)]
    r = subprocess.run(cmd, capture_output=True, text=True, env=mpi_environment(), timeout=600)
    if r.returncode != 0:
        # a host with fewer cores than ranks refuses --bind-to core
        cmd.remove("--bind-to"), cmd.remove("core")
        r = subprocess.run(cmd, capture_output=True, text=True, env=mpi_environment(), timeout=600)
    if r.returncode != 0:
        sys.exit(f"profile_overhead: {' '.join(cmd)} failed:\n{r.stdout}{r.stderr}")
    out = {}
    for line in r.stdout.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[0] in ("pingpong", "self"):
            out[f"{parts[0]} {parts[1]}"] = float(parts[3])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iterations", type=int, default=200_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--size", type=int, default=8)
    opts = ap.parse_args()
    if not (shutil.which("mpicc") and shutil.which("mpirun")):
        sys.exit("profile_overhead: needs Open MPI (mpicc, mpirun)")
    lib = prof.library("mpi")
    with tempfile.TemporaryDirectory(prefix="rankwise-bench-") as tmp:
        work = Path(tmp)
        exe = work / "profile_exerciser"
        subprocess.run(["mpicc", "-O2", f"-I{ROOT / 'engine' / 'include'}", str(SOURCE), "-o", str(exe)],
                       check=True)
        best = {"plain": {}, "profiled": {}}
        for _ in range(opts.runs):
            for label, preload in (("plain", None), ("profiled", lib)):
                for comm, ns in run(exe, opts.iterations, opts.size, preload, work).items():
                    best[label][comm] = min(ns, best[label].get(comm, float("inf")))
        print(f"ping-pong of {opts.size} B, 2 ranks, {opts.iterations} iterations, best of {opts.runs} runs "
              f"(host: {os.cpu_count()} CPUs)")
        print(f"{'loop':<16}{'calls/iter':>11}{'plain ns/iter':>15}{'profiled ns/iter':>18}"
              f"{'overhead ns/call':>18}")
        for loop, calls in (("pingpong world", 2), ("pingpong split", 2), ("self world", 1), ("self split", 1)):
            plain, profiled = best["plain"][loop], best["profiled"][loop]
            print(f"{loop:<16}{calls:>11}{plain:>15.1f}{profiled:>18.1f}{(profiled - plain) / calls:>18.1f}")


if __name__ == "__main__":
    main()
