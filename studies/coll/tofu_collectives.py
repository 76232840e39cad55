"""Long messages on a torus and on an oversubscribed fat tree: the collectives library's triple trinary
tree broadcast, reduce and allreduce (Ajima 2018) against the binomial tree, every SMPI algorithm pinned, and the
predictor.

For each platform (a 3-D torus `torus:X,Y,Z`, one rank per node, `--nics` NICs per node; a fat tree of racks
whose uplinks are oversubscribed), simulated with SMPI 3.32 under rankwise's deterministic settings and a 1 us
send and receive overhead per eager message (rankwise.sim.smpi.overhead_settings), the program
tests/engine/mpi/coll_times.c (linked with librankwise_coll.a; every timed call starts on all ranks at one
simulated instant, the time is the last rank's end) runs MPI_Bcast from rank 0, MPI_Reduce (a float sum to
rank 0) and MPI_Allreduce (a float sum) of 1 MiB and more:

- `trinary`: the library's (RANKWISE_COLL_<OP>), with the platform's ground truth as its model
  (RANKWISE_MODEL: every pair's latency and bandwidth), so the trees are laid along the network
  (rw_trinary_best_order: rank order where it follows the network, else a walk along it);
- `rank order`: the same without a model (the trees in rank order), and the library's binomial;
- `smpi:<alg>`: SMPI's own pinned (`smpi/<op>:<alg>`), every algorithm SMPI 3.32 has that runs with one
  rank per node (SMP_linear left out: it takes minutes at 64 ranks and was never the fastest on 32);
- `predicted`: rankwise's predictor (rw_sched_library <op> "trinary") on the ground truth with the same
  overheads and placement.

--shuffled adds the torus with its ranks dealt to the nodes in a seeded random order (rank order then
says nothing of the network), without pinned SMPI algorithms.

Printed per platform, operation and size: the times, trinary's speed-up over binomial, the fastest pinned
SMPI algorithm and trinary's ratio to it, the prediction's error; then the goals (issue 12): the trinary
broadcast >= 1.5x faster than binomial and at least as fast as the best pinned SMPI broadcast, the
predictions of the three operations within 15 % (median |error|, the predictor's goal), and with
--shuffled the broadcast along the model faster than in rank order on the shuffled torus (the reduce's and
allreduce's ratios printed: they gain or lose with the shuffle). Exit status 1 when a
goal fails.

Run: .venv/bin/python studies/coll/tofu_collectives.py [--torus 4,4,4] [--nics 1] [--racks 8 --nodes-per-rack 8
--oversubscription 4] [--sizes 1048576,4194304] [--shuffled] [--no-reduce] [--quick] (--quick: a 4x4x2 torus,
4 racks of 8, fewer SMPI algorithms; --no-reduce: broadcasts only). About 10 minutes at 64 ranks on 2 shared
cores, under a minute with --quick.
"""

from __future__ import annotations

import argparse
import ctypes as C
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from rankwise.model.model import MEASURED, Model
from rankwise.predict.predictor import PredictNetwork, collective_options, simulate_schedule, placement, predict_lib
from rankwise.sim.platform import PlatformSpec, generate
from rankwise.sim.smpi import overhead_settings, smpirun_command
from smpi_link import build_linked

SOURCE = Path(__file__).resolve().parents[2] / "tests" / "engine" / "mpi" / "coll_times.c"
# SMPI 3.32's algorithms per operation that run with one rank per node
SMPI_REDUCES = ("binomial", "flat_tree", "NTSL", "scatter_gather", "rab", "arrival_pattern_aware", "ompi", "ompi_chain",
                "ompi_pipeline", "ompi_binary", "ompi_in_order_binary", "ompi_binomial", "mpich", "mvapich2",
                "mvapich2_knomial", "impi")
QUICK_REDUCES = ("binomial", "scatter_gather", "rab", "ompi_pipeline", "ompi")
SMPI_BCASTS = ("binomial_tree", "flattree", "flattree_pipeline", "NTSB", "NTSL", "NTSL_Isend",
               "scatter_LR_allgather", "scatter_rdb_allgather", "arrival_pattern_aware", "arrival_scatter",
               "SMP_binary", "SMP_binomial", "ompi", "mpich", "ompi_split_bintree", "ompi_pipeline", "mvapich2",
               "impi")
SMPI_ALLREDUCES = ("lr", "rab_rdb", "rdb", "redbcast", "ompi_ring_segmented", "mpich", "ompi")
QUICK_BCASTS = ("binomial_tree", "NTSL", "scatter_LR_allgather", "scatter_rdb_allgather", "ompi_pipeline",
                "ompi")
OVERHEAD = 1e-6


@dataclass
class Row:
    """One platform and size: the library's trinary (trees along the model), in rank order, its binomial, the
    fastest pinned SMPI algorithm (seconds), and the prediction's relative error on the first."""
    bytes: int
    trinary: float
    rank_order: float
    binomial: float
    best_pinned: float
    error: float


def build(tmp: Path) -> Path:
    return build_linked(SOURCE, tmp / "coll_times")


def hostfile(plat, n: int, path: Path, shuffle_seed: int | None = None) -> Path:
    """The first n hosts, one rank each, in the platform's order or (shuffle_seed) in a seeded random
    order: rank order then says nothing of where ranks are on the network."""
    names = [line.split()[0] for line in Path(plat.hostfile).read_text().splitlines() if line.strip()][:n]
    if shuffle_seed is not None:
        names = [names[i] for i in np.random.default_rng(shuffle_seed).permutation(n)]
    path.write_text("".join(f"{h}\n" for h in names))
    return path


def placement_of(net: PredictNetwork, hosts: Path) -> np.ndarray:
    """rank -> node index of net for a hostfile of one rank per line."""
    names = [line.split()[0] for line in hosts.read_text().splitlines() if line.strip()]
    return np.array([net.names.index(h) for h in names], dtype=np.int32)


def model_file(net: PredictNetwork, path: Path) -> Path:
    """The platform's ground truth as a rankwise model (every pair's latency and bandwidth), for the
    library's RANKWISE_MODEL: what it lays the trinary trees along."""
    n = len(net.names)
    m = Model.empty(net.names, [8, 1 << 20])
    off = ~np.eye(n, dtype=bool)
    m.state[off] = MEASURED
    m.alpha[off], m.beta[off], m.measured_at[off] = net.alpha[off], net.beta[off], 1.79e9
    small, big = m.alpha + 8 * m.beta, m.alpha + (1 << 20) * m.beta
    for stat in (m.rtt_min, m.rtt_median, m.rtt_max):
        stat[off] = np.stack([2 * small[off], 2 * big[off]], axis=-1)
    m.jitter[off], m.samples[off] = 0.0, 5
    m.source, m.created, m.duration = "ground truth", 1.79e9, 1.0
    m.save(path)
    return path


def measure(exe: Path, plat, hosts: Path, n: int, variant: str, sizes, op: str = "bcast",
            model: Path | None = None, overhead: float = OVERHEAD) -> dict[int, float]:
    """Simulated seconds per size of MPI_Bcast (MPI_Reduce: floats summed to rank 0): variant `smpi:<alg>`
    pins SMPI's, else the library's (`trinary`: its trees along the model's network, `trinary:rank`:
    in rank order, no model); `overhead`: SMPI's send and receive overhead per eager message."""
    cfg = overhead_settings(overhead, overhead)
    env = {k: v for k, v in os.environ.items() if not k.startswith("RANKWISE_COLL_") and k != "RANKWISE_MODEL"}
    if variant.startswith("smpi:"):
        cfg += (f"smpi/{op}:{variant[5:]}",)
    else:
        env[f"RANKWISE_COLL_{op.upper()}"] = variant.split(":")[0]
        if variant == "trinary" and model is not None:
            env["RANKWISE_MODEL"] = str(model)
    cmd = smpirun_command(exe, [op, *map(str, sizes)], plat.platform_xml, hosts, n, cfg)
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, env=env)
    if out.returncode != 0:
        raise RuntimeError(f"{variant}: {out.stderr[-600:]}")
    return {int(s): float(t) for s, t in (line.split() for line in out.stdout.splitlines() if line.strip())}


def predict_library(net: PredictNetwork, node_of: np.ndarray | int, op: str, alg: str, nbytes: int) -> float:
    """The predictor's time of the library's `alg` (rw_sched_library) with rank r on node node_of[r] (an
    int n: the first n nodes, one rank each)."""
    if isinstance(node_of, (int, np.integer)):
        node_of = placement(1, int(node_of))
    so = predict_lib()
    so.rw_sched_library.argtypes = [C.c_void_p, C.c_char_p, C.c_char_p, C.c_double, C.c_void_p,
                                    C.POINTER(C.c_void_p)]
    cnet = net._to_c(node_of)
    sched = C.c_void_p()
    opt = collective_options(0, 8192, 4, 0.0, 65536)
    try:
        rc = so.rw_sched_library(cnet, op.encode(), alg.encode(), float(nbytes), C.byref(opt), C.byref(sched))
    finally:
        so.rw_pnet_free(cnet)
    if rc != 0:
        raise RuntimeError(f"rw_sched_library {op} {alg}: status {rc}")
    try:
        return simulate_schedule(net, node_of, sched, True).time
    finally:
        so.rw_sched_free(sched)


def run_platform(console: Console, name: str, spec: PlatformSpec, n: int, sizes, algs, tmp: Path, exe: Path,
                 op: str = "bcast", shuffle_seed: int | None = None):
    folder = name.split(",")[0].replace(" ", "-")  # SimGrid takes no blank in a platform's path
    folder += "-shuffled" if shuffle_seed is not None else ""
    plat = generate(spec, tmp / folder)
    hosts = hostfile(plat, n, tmp / f"{folder}.hosts", shuffle_seed)
    net = PredictNetwork.from_ground_truth(plat.out_dir).with_overheads(OVERHEAD, OVERHEAD)
    model = model_file(net, tmp / f"{folder}.rwm")
    node_of = placement_of(net, hosts)
    t0 = time.time()
    times = {v: measure(exe, plat, hosts, n, v, sizes, op, model) for v in ("trinary", "trinary:rank", "binomial")}
    for a in algs:
        try:
            times[f"smpi:{a}"] = measure(exe, plat, hosts, n, f"smpi:{a}", sizes, op)
        except (RuntimeError, subprocess.TimeoutExpired) as exc:
            console.print(f"[yellow]{name}: smpi/{op}:{a} did not run ({str(exc).splitlines()[-1][:120]})")
    call = {"bcast": "MPI_Bcast from rank 0", "reduce": "MPI_Reduce (float sum) to rank 0",
            "allreduce": "MPI_Allreduce (float sum)"}[op]
    table = Table(title=f"{name}: {call}, {n} ranks (one per node), simulated "
                        f"({time.time() - t0:.0f} s of wall time)", title_justify="left")
    for col in ("bytes", "trinary", "predicted", "error", "rank order", "binomial", "speed-up", "best pinned SMPI",
                "ratio"):
        table.add_column(col, justify="left" if col == "best pinned SMPI" else "right")
    rows = []
    for b in sizes:
        tri, rank, bino = times["trinary"][b], times["trinary:rank"][b], times["binomial"][b]
        pinned = {k: v[b] for k, v in times.items() if k.startswith("smpi:")}
        best = min(pinned, key=pinned.get) if pinned else None
        pred = predict_library(net, node_of, op, "trinary", b)
        err = pred / tri - 1
        rows.append(Row(b, tri, rank, bino, pinned[best] if best else np.nan, err))
        table.add_row(f"{b / 2**20:g} MiB", f"{tri * 1e3:.3f} ms", f"{pred * 1e3:.3f} ms", f"{err * 100:+.1f}%",
                      f"{rank * 1e3:.3f} ms", f"{bino * 1e3:.3f} ms", f"x{bino / tri:.2f}",
                      f"{best[5:]} {pinned[best] * 1e3:.3f} ms" if best else "-",
                      f"{tri / pinned[best]:.3f}" if best else "-")
    console.print(table)
    ranked = sorted(((v[sizes[-1]], k) for k, v in times.items()))
    console.print(f"{name}, {op} {sizes[-1] / 2**20:g} MiB, every variant: " +
                  ", ".join(f"{k} {t * 1e3:.3f}" for t, k in ranked) + " (ms)")
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--torus", default="4,4,4", help="X,Y,Z of the torus (one rank per node)")
    ap.add_argument("--nics", type=int, default=1, help="NICs per torus node (Tofu has four)")
    ap.add_argument("--racks", type=int, default=8)
    ap.add_argument("--nodes-per-rack", type=int, default=8)
    ap.add_argument("--oversubscription", type=float, default=4.0, help="fat tree: rack uplink oversubscription")
    ap.add_argument("--sizes", default="1048576,4194304", help="bytes, comma-separated (>= 1 MiB for the goals)")
    ap.add_argument("--quick", action="store_true", help="4x4x2 torus, 4 racks of 8, fewer SMPI algorithms")
    ap.add_argument("--no-reduce", action="store_true", help="broadcasts only (no reduce, no allreduce)")
    ap.add_argument("--shuffled", action="store_true",
                    help="also the torus with its ranks on the nodes in a seeded random order")
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
    nics = f", {args.nics} NICs" if args.nics > 1 else ""
    platforms = [(f"torus {torus.replace(',', 'x')}{nics}", PlatformSpec(topology=f"torus:{torus}", cores=1, seed=1, nics=args.nics),
                  n_torus),
                 (f"fat tree {racks}x{args.nodes_per_rack}, uplinks 1:{args.oversubscription:g}",
                  PlatformSpec(racks=racks, nodes_per_rack=args.nodes_per_rack, cores=1,
                               oversubscription=args.oversubscription, seed=1), racks * args.nodes_per_rack)]
    rows: dict[str, list[Row]] = {}
    ops = ["bcast"] + ([] if args.no_reduce else ["reduce", "allreduce"])
    for op in ops:
        pinned = {"bcast": algs, "reduce": QUICK_REDUCES if args.quick else SMPI_REDUCES,
                  "allreduce": SMPI_ALLREDUCES}[op]
        for name, spec, n in platforms:
            rows.setdefault(op, []).extend(run_platform(console, name, spec, n, sizes, pinned, tmp, exe, op))
    shuffled: list[Row] = []
    if args.shuffled:  # the torus with its ranks in a seeded random order: rank order is far from the network
        name, spec, n = platforms[0]
        for op in ops:
            got = run_platform(console, f"{name}, ranks shuffled", spec, n, sizes, (), tmp, exe, op, shuffle_seed=1)
            shuffled += got
            rows[op] += got
    for op, got in rows.items():
        console.print(f"{op}: predictions' |error| median {float(np.median([abs(r.error) for r in got])) * 100:.1f} %")
    bcasts = [r for r in rows["bcast"] if not np.isnan(r.best_pinned)]
    speedup = min(r.binomial / r.trinary for r in bcasts)
    vs_best = max(r.trinary / r.best_pinned for r in bcasts)
    med = float(np.median([abs(r.error) for got in rows.values() for r in got]))
    goals = [(f"trinary broadcast >= 1.5x faster than binomial (least x{speedup:.2f})", speedup >= 1.5),
             (f"trinary broadcast at least as fast as the best pinned SMPI broadcast (worst ratio {vs_best:.3f})",
              vs_best <= 1.0),
             (f"predictions of {', '.join(ops)} within 15 % median (|error| median {med * 100:.1f} %)", med <= 0.15)]
    if shuffled:  # the broadcast's goal; the reduce's and allreduce's ratios are printed (not laid out for them)
        for op in ops:
            got = [r for r in rows[op] if r in shuffled]
            console.print(f"shuffled torus, {op}: rank order / along the model " +
                          ", ".join(f"{r.bytes / 2**20:g} MiB x{r.rank_order / r.trinary:.2f}" for r in got))
        gain = min(r.rank_order / r.trinary for r in rows["bcast"] if r in shuffled)
        goals.append((f"shuffled torus: the broadcast along the model faster than in rank order (least x{gain:.2f})",
                      gain > 1.0))
    for text, ok in goals:
        console.print(f"{'PASS' if ok else 'FAIL'}  {text}")
    console.print(f"files in {tmp}")
    return 0 if all(ok for _, ok in goals) else 1


if __name__ == "__main__":
    sys.exit(main())
