"""Long messages on a torus and on an oversubscribed fat tree: the collectives library's triple trinary
tree broadcast (Ajima 2018) against the binomial tree, every SMPI broadcast pinned, and the predictor.

For each platform (a 3-D torus `torus:X,Y,Z`, one rank per node; a fat tree of racks whose uplinks are
oversubscribed), simulated with SMPI 3.32 under rankwise's deterministic settings and a 1 us send and
receive overhead per eager message (rankwise.sim.smpi.overhead_settings), the program
tests/engine/mpi/coll_times.c (linked with librankwise_coll.a; every timed call starts on all ranks at
one simulated instant, the time is the last rank's end) broadcasts 1 MiB and more from rank 0:

- `trinary`, `binomial`: the library's, forced with RANKWISE_COLL_BCAST;
- `smpi:<alg>`: SMPI's own broadcast pinned with `smpi/bcast:<alg>`, for every algorithm SMPI 3.32 has
  that runs with one rank per node (SMP_linear left out: it takes minutes at 64 ranks and was never
  the fastest on 32);
- `predicted`: rankwise's predictor (rw_sched_library "bcast" "trinary") on the platform's ground truth
  with the same overheads.

The same for MPI_Reduce (a float sum to rank 0; the library's trinary reduce runs the trees reversed)
against every SMPI reduce, reported without a goal (--no-reduce: broadcasts only).

Printed per platform and size: the times, trinary's speed-up over binomial, the fastest pinned SMPI
broadcast and trinary's ratio to it, the prediction's error; then the goals (issue 12): trinary >= 1.5x
faster than binomial, at least as fast as the best pinned SMPI broadcast, predictions within 15 % median.
Exit status 1 when a goal fails.

Run: .venv/bin/python studies/tofu_collectives.py [--torus 4,4,4] [--racks 8 --nodes-per-rack 8
--oversubscription 4] [--sizes 1048576,4194304] [--quick] (--quick: a 4x4x2 torus, 4 racks of 8, fewer
SMPI algorithms). A few minutes at 64 ranks on 2 shared cores.
"""

from __future__ import annotations

import argparse
import ctypes as C
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from rankwise import paths
from rankwise.predict import PredictNetwork, _options, _simulate, placement, predict_lib
from rankwise.sim.platform import PlatformSpec, generate
from rankwise.sim.smpi import overhead_settings, smpirun_command

SOURCE = Path(__file__).resolve().parents[1] / "tests" / "engine" / "mpi" / "coll_times.c"
# SMPI 3.32's algorithms per operation that run with one rank per node
SMPI_REDUCES = ("binomial", "flat_tree", "NTSL", "scatter_gather", "rab", "arrival_pattern_aware", "ompi", "ompi_chain",
                "ompi_pipeline", "ompi_binary", "ompi_in_order_binary", "ompi_binomial", "mpich", "mvapich2",
                "mvapich2_knomial", "impi")
QUICK_REDUCES = ("binomial", "scatter_gather", "rab", "ompi_pipeline", "ompi")
SMPI_BCASTS = ("binomial_tree", "flattree", "flattree_pipeline", "NTSB", "NTSL", "NTSL_Isend",
               "scatter_LR_allgather", "scatter_rdb_allgather", "arrival_pattern_aware", "arrival_scatter",
               "SMP_binary", "SMP_binomial", "ompi", "mpich", "ompi_split_bintree", "ompi_pipeline", "mvapich2",
               "impi")
QUICK_BCASTS = ("binomial_tree", "NTSL", "scatter_LR_allgather", "scatter_rdb_allgather", "ompi_pipeline",
                "ompi")
OVERHEAD = 1e-6


def build(tmp: Path) -> Path:
    exe = tmp / "coll_times"
    lib = paths.PACKAGE_DIR / "_lib" / "smpi"
    env = {k: v for k, v in os.environ.items() if k != "SMPI_PRETEND_CC"}
    subprocess.run(["smpicc", "-O2", f"-I{lib / 'include'}", "-o", str(exe), str(SOURCE), f"-L{lib}",
                    "-Wl,--whole-archive", "-lrankwise_coll", "-Wl,--no-whole-archive"], check=True,
                   capture_output=True, text=True, env=env)
    return exe


def hostfile(plat, n: int, path: Path) -> Path:
    names = [line.split()[0] for line in Path(plat.hostfile).read_text().splitlines() if line.strip()]
    path.write_text("".join(f"{h}\n" for h in names[:n]))
    return path


def measure(exe: Path, plat, hosts: Path, n: int, variant: str, sizes, op: str = "bcast") -> dict[int, float]:
    """Simulated seconds per size of MPI_Bcast (MPI_Reduce: floats summed to rank 0): variant `smpi:<alg>`
    pins SMPI's, else the library's."""
    cfg = overhead_settings(OVERHEAD, OVERHEAD)
    env = {k: v for k, v in os.environ.items() if not k.startswith("RANKWISE_COLL_")}
    if variant.startswith("smpi:"):
        cfg += (f"smpi/{op}:{variant[5:]}",)
    else:
        env[f"RANKWISE_COLL_{op.upper()}"] = variant
    cmd = smpirun_command(exe, [op, *map(str, sizes)], plat.platform_xml, hosts, n, cfg)
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, env=env)
    if out.returncode != 0:
        raise RuntimeError(f"{variant}: {out.stderr[-600:]}")
    return {int(s): float(t) for s, t in (line.split() for line in out.stdout.splitlines() if line.strip())}


def predict_library(net: PredictNetwork, n: int, op: str, alg: str, nbytes: int) -> float:
    """The predictor's time of the library's `alg` (rw_sched_library) on the first n nodes, one rank each."""
    so = predict_lib()
    so.rw_sched_library.argtypes = [C.c_void_p, C.c_char_p, C.c_char_p, C.c_double, C.c_void_p,
                                    C.POINTER(C.c_void_p)]
    node_of = placement(1, n)
    cnet = net._to_c(node_of)
    sched = C.c_void_p()
    opt = _options(0, 8192, 4, 0.0, 65536)
    try:
        rc = so.rw_sched_library(cnet, op.encode(), alg.encode(), float(nbytes), C.byref(opt), C.byref(sched))
    finally:
        so.rw_pnet_free(cnet)
    if rc != 0:
        raise RuntimeError(f"rw_sched_library {op} {alg}: status {rc}")
    try:
        return _simulate(net, node_of, sched, True).time
    finally:
        so.rw_sched_free(sched)


def run_platform(console: Console, name: str, spec: PlatformSpec, n: int, sizes, algs, tmp: Path, exe: Path,
                 op: str = "bcast"):
    folder = name.split(",")[0].replace(" ", "-")  # SimGrid takes no blank in a platform's path
    plat = generate(spec, tmp / folder)
    hosts = hostfile(plat, n, tmp / f"{folder}.hosts")
    net = PredictNetwork.from_ground_truth(plat.out_dir).with_overheads(OVERHEAD, OVERHEAD)
    t0 = time.time()
    times = {v: measure(exe, plat, hosts, n, v, sizes, op) for v in ("trinary", "binomial")}
    for a in algs:
        try:
            times[f"smpi:{a}"] = measure(exe, plat, hosts, n, f"smpi:{a}", sizes, op)
        except (RuntimeError, subprocess.TimeoutExpired) as exc:
            console.print(f"[yellow]{name}: smpi/{op}:{a} did not run ({str(exc).splitlines()[-1][:120]})")
    call = "MPI_Bcast from" if op == "bcast" else "MPI_Reduce (float sum) to"
    table = Table(title=f"{name}: {call} rank 0, {n} ranks (one per node), simulated "
                        f"({time.time() - t0:.0f} s of wall time)", title_justify="left")
    for col in ("bytes", "trinary", "predicted", "error", "binomial", "speed-up", "best pinned SMPI", "ratio"):
        table.add_column(col, justify="left" if col == "best pinned SMPI" else "right")
    rows = []
    for b in sizes:
        tri, bino = times["trinary"][b], times["binomial"][b]
        pinned = {k: v[b] for k, v in times.items() if k.startswith("smpi:")}
        best = min(pinned, key=pinned.get)
        pred = predict_library(net, n, op, "trinary", b)
        err = pred / tri - 1
        rows.append((b, tri, bino, pinned[best], err))
        table.add_row(f"{b / 2**20:g} MiB", f"{tri * 1e3:.3f} ms", f"{pred * 1e3:.3f} ms", f"{err * 100:+.1f}%",
                      f"{bino * 1e3:.3f} ms", f"x{bino / tri:.2f}", f"{best[5:]} {pinned[best] * 1e3:.3f} ms",
                      f"{tri / pinned[best]:.3f}")
    console.print(table)
    ranked = sorted(((v[sizes[-1]], k) for k, v in times.items()))
    console.print(f"{name}, {op} {sizes[-1] / 2**20:g} MiB, every variant: " +
                  ", ".join(f"{k} {t * 1e3:.3f}" for t, k in ranked) + " (ms)")
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--torus", default="4,4,4", help="X,Y,Z of the torus (one rank per node)")
    ap.add_argument("--racks", type=int, default=8)
    ap.add_argument("--nodes-per-rack", type=int, default=8)
    ap.add_argument("--oversubscription", type=float, default=4.0, help="fat tree: rack uplink oversubscription")
    ap.add_argument("--sizes", default="1048576,4194304", help="bytes, comma-separated (>= 1 MiB for the goals)")
    ap.add_argument("--quick", action="store_true", help="4x4x2 torus, 4 racks of 8, fewer SMPI algorithms")
    ap.add_argument("--no-reduce", action="store_true", help="broadcasts only (the goals are the broadcast's)")
    ap.add_argument("--out", type=Path, default=None, help="keep the platforms and the program here")
    args = ap.parse_args()
    console = Console(width=150)
    tmp = args.out or Path(tempfile.mkdtemp(prefix="tofu-collectives-"))
    tmp.mkdir(parents=True, exist_ok=True)
    exe = build(tmp)
    sizes = [int(s) for s in args.sizes.split(",")]
    torus = "4,4,2" if args.quick else args.torus
    racks = 4 if args.quick else args.racks
    algs = QUICK_BCASTS if args.quick else SMPI_BCASTS
    dims = [int(x) for x in torus.split(",")]
    n_torus = int(np.prod(dims))
    platforms = [(f"torus {torus.replace(',', 'x')}", PlatformSpec(topology=f"torus:{torus}", cores=1, seed=1),
                  n_torus),
                 (f"fat tree {racks}x{args.nodes_per_rack}, uplinks 1:{args.oversubscription:g}",
                  PlatformSpec(racks=racks, nodes_per_rack=args.nodes_per_rack, cores=1,
                               oversubscription=args.oversubscription, seed=1), racks * args.nodes_per_rack)]
    rows = []
    for name, spec, n in platforms:
        rows += run_platform(console, name, spec, n, sizes, algs, tmp, exe)
    reduce_errors = []
    for name, spec, n in [] if args.no_reduce else platforms:  # reported, no goal of issue 12
        got = run_platform(console, name, spec, n, sizes, QUICK_REDUCES if args.quick else SMPI_REDUCES, tmp, exe,
                           "reduce")
        reduce_errors += [abs(e) for *_, e in got]
    if reduce_errors:
        console.print(f"reduce: predictions' |error| median {float(np.median(reduce_errors)) * 100:.1f} %")
    speedup = min(bino / tri for _, tri, bino, _, _ in rows)
    vs_best = max(tri / best for _, tri, _, best, _ in rows)
    med = float(np.median([abs(e) for *_, e in rows]))
    goals = [(f"trinary >= 1.5x faster than binomial (least x{speedup:.2f})", speedup >= 1.5),
             (f"trinary at least as fast as the best pinned SMPI broadcast (worst ratio {vs_best:.3f})",
              vs_best <= 1.0),
             (f"predictions within 15 % median (|error| median {med * 100:.1f} %)", med <= 0.15)]
    for text, ok in goals:
        console.print(f"{'PASS' if ok else 'FAIL'}  {text}")
    console.print(f"files in {tmp}")
    return 0 if all(ok for _, ok in goals) else 1


if __name__ == "__main__":
    sys.exit(main())
