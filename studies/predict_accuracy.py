"""How right the predictor is: predicted vs SMPI-simulated time of collectives, algorithm pinned.

Platforms (64 nodes in 4 racks of 16, rankwise.sim.platform):
  default      default_spec(): degraded nodes 5, 22, 41, rack 3's uplink congested to 1/4,
               node 30's bandwidth varying over time (the predictor takes its t = 0 value)
  uniform      non-blocking, no fault
  shuffled     every link jittered (log-normal sigma 0.2), nodes 3, 17, 38 and 60 degraded (1/8 of
               the bandwidth, 20x the latency); the job's nodes are taken in a shuffled order, so
               consecutive ranks sit in different racks
  oversub      every uplink at 1/4 of non-blocking
Jobs (--jobs RANKSxPPN,...): 16 and 64 ranks one per node, 64 ranks four per node (16 nodes), on
the first nodes of the platform (a shuffled order for 'shuffled'). Collectives: alltoall pair (power-of-two jobs; ring otherwise) and bruck;
bcast binomial, chain and scatter_allgather; reduce binomial; allreduce rdb, ring and rabenseifner;
allgather ring, rdb and bruck. Sizes 1 KiB to 4 MiB (alltoall: per rank pair). The bruck
algorithms run up to 32 ranks only: SMPI's implementations allocate P x n bytes of real memory
per rank (13 GB for an allgather of 4 MiB over 64 ranks) and copy them.

The network comes from each platform's ground truth (route latencies and bandwidths, node links
as injection/ejection caps, uplinks as shared links) -- or, with --probed, from an isolated-mode
probe of the job's nodes (no link capacities: the model has none yet). Each row: the prediction
started from SMPI's barrier exit skew (rankwise.predict.barrier_starts), and Hockney's model of
the same schedule (each message alone, alpha + n beta, along the critical path) beside it.

Goals: all-to-all median |error| <= 10 %, 90th percentile <= 25 %; bcast, reduce,
allreduce, allgather median <= 15 %. Exit status 1 when one is missed.

Run: .venv/bin/python studies/predict_accuracy.py [--quick] [--platforms default,uniform]
     [--jobs 16x1,64x4] [--csv FILE] [--probed]
Cost: SMPI's wall time grows with the messages; the full grid takes ~10-20 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import csv
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from rankwise.predict import SMPI_ALGORITHM, PredictNetwork, barrier_starts, predict_collective
from rankwise.probe import ProbeOptions, probe_sim
from rankwise.programs import run_benchmark
from rankwise.sim.platform import Degraded, PlatformSpec, default_spec, generate

GOALS = {"alltoall": (0.10, 0.25), "bcast": (0.15, None), "reduce": (0.15, None), "allreduce": (0.15, None),
         "allgather": (0.15, None)}
CASES = [
    ("alltoall", "pair"), ("alltoall", "bruck"),
    ("bcast", "binomial"), ("bcast", "chain"), ("bcast", "scatter_allgather"),
    ("reduce", "binomial"),
    ("allreduce", "rdb"), ("allreduce", "ring"), ("allreduce", "rabenseifner"),
    ("allgather", "ring"), ("allgather", "rdb"), ("allgather", "bruck"),
]


def platforms() -> dict[str, tuple[PlatformSpec, bool]]:
    """name -> (spec, shuffle the job's nodes)"""
    base = PlatformSpec(racks=4, nodes_per_rack=16, cores=4, seed=1)
    slow = tuple(Degraded("node", i, bw_factor=0.125, lat_factor=20.0) for i in (3, 17, 38, 60))
    return {
        "default": (default_spec(), False),
        "uniform": (base, False),
        "shuffled": (replace(base, jitter_sigma=0.2, degraded=slow, seed=5), True),
        "oversub": (replace(base, oversubscription=4.0), False),
    }


def run_case(gp, net, hosts, node_of, op, alg, sizes, iterations):
    algorithm = alg
    if op == "alltoall" and alg == "pair" and len(node_of) & (len(node_of) - 1):
        algorithm = "ring"
    cfg = [f"smpi/{op}:{SMPI_ALGORITHM[op, algorithm]}"]
    args = ["--sizes", sizes, "--iterations", str(iterations), "--warmup", "1"]
    if op == "alltoall":
        tab = run_benchmark("alltoall", args + ["--max-memory", "4G"], sim=gp.platform_xml, hosts=hosts,
                            smpi_cfg=cfg).table
    else:
        tab = run_benchmark("collectives", ["--collectives", op] + args, sim=gp.platform_xml, hosts=hosts,
                            smpi_cfg=cfg)[op]
    start = barrier_starts(net, node_of)
    rows = []
    for size, meas in zip(tab.size, tab.median_us):
        pred = predict_collective(net, op, algorithm, int(size), node_of, rank_start=start).span * 1e6
        hock = predict_collective(net, op, algorithm, int(size), node_of, rank_start=start,
                                  contention=False).span * 1e6
        rows.append((int(size), float(meas), pred, hock))
    return algorithm, rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--platforms", default="default,uniform,shuffled,oversub")
    ap.add_argument("--jobs", default="16x1,64x1,64x4", help="RANKSxRANKS_PER_NODE,...")
    ap.add_argument("--sizes", default="1K,16K,256K,4M")
    ap.add_argument("--iterations", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="jobs 16x1,16x2, sizes 1K,64K,1M")
    ap.add_argument("--probed", action="store_true", help="network from an isolated probe, not the ground truth")
    ap.add_argument("--csv", help="write every row here")
    args = ap.parse_args()
    if args.quick:
        args.jobs, args.sizes = "16x1,16x2", "1K,64K,1M"
    console = Console(width=150, force_terminal=False)
    all_rows = []
    t_start = time.time()
    with tempfile.TemporaryDirectory(prefix="rankwise-predict-") as tmp:
        for name in args.platforms.split(","):
            spec, shuffle = platforms()[name]
            gp = generate(spec, Path(tmp) / name)
            order = np.random.default_rng(7).permutation(spec.n_nodes) if shuffle else np.arange(spec.n_nodes)
            for job in args.jobs.split(","):
                n_ranks, ppn = (int(x) for x in job.split("x"))
                n_nodes = n_ranks // ppn
                used = order[:n_nodes]
                hosts = [gp.nodes[i] for i in used for _ in range(ppn)]
                if args.probed:
                    hf = Path(tmp) / f"{name}-{n_nodes}.hosts"
                    hf.write_text("".join(f"{gp.nodes[i]}\n" for i in used for _ in range(2)))
                    model = probe_sim(gp.platform_xml, Path(tmp) / f"{name}-{n_nodes}.rwm",
                                      ProbeOptions(mode="isolated", sizes="8,1K,64K,1M", repetitions=2, rounds=2),
                                      hostfile=hf, show_progress=False)
                    net = PredictNetwork.from_model(model, [(gp.nodes[i], ppn) for i in used])
                    node_of = np.repeat(np.arange(n_nodes), ppn)
                else:
                    net = PredictNetwork.from_ground_truth(gp.out_dir)
                    node_of = np.repeat(used, ppn)
                for op, alg in CASES:
                    if alg == "rdb" and n_ranks & (n_ranks - 1):
                        continue
                    if alg == "bruck" and n_ranks > 32:
                        continue  # SMPI's bruck allocates P x n real bytes per rank: 13 GB at 64 x 4 MiB
                    t0 = time.time()
                    algorithm, rows = run_case(gp, net, hosts, node_of, op, alg, args.sizes, args.iterations)
                    for size, meas, pred, hock in rows:
                        all_rows.append(dict(platform=name, ranks=n_ranks, ppn=ppn, op=op, algorithm=algorithm, size=size,
                                             smpi_us=meas, predicted_us=pred, hockney_us=hock,
                                             error=(pred - meas) / meas, hockney_error=(hock - meas) / meas))
                    console.file.flush()
                    console.print(f"[dim]{name} {n_ranks} ranks ({ppn}/node) {op} {algorithm}: {time.time() - t0:.1f} s; "
                                  + ", ".join(f"{s}: {(p - m) / m:+.1%}" for s, m, p, _ in rows) + "[/]")
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(all_rows[0]))
            w.writeheader()
            w.writerows(all_rows)

    ok = True
    table = Table(title=f"Predicted vs SMPI ({'probed model' if args.probed else 'ground truth'}; "
                        f"jobs {args.jobs}, {args.sizes}); |error| quantiles")
    for col in ("platform", "operation", "cases", "median", "p90", "max", "Hockney median", "Hockney p90", "goal"):
        table.add_column(col, justify="right")

    def add(label_platform, op, rows):
        nonlocal ok
        e = np.abs([r["error"] for r in rows])
        h = np.abs([r["hockney_error"] for r in rows])
        goal = GOALS.get(op)
        met = ""
        if goal and label_platform == "all":
            good = np.median(e) <= goal[0] and (goal[1] is None or np.quantile(e, 0.9) <= goal[1])
            ok &= good
            met = ("[green]met[/]" if good else "[red]missed[/]") + f" (median <= {goal[0]:.0%}" + (
                f", p90 <= {goal[1]:.0%})" if goal[1] else ")")
        table.add_row(label_platform, op, str(len(rows)), f"{np.median(e):.1%}", f"{np.quantile(e, 0.9):.1%}",
                      f"{e.max():.1%}", f"{np.median(h):.1%}", f"{np.quantile(h, 0.9):.1%}", met)

    ops = list(dict.fromkeys(r["op"] for r in all_rows))
    for name in args.platforms.split(","):
        for op in ops:
            rows = [r for r in all_rows if r["platform"] == name and r["op"] == op]
            if rows:
                add(name, op, rows)
    for op in ops:
        add("all", op, [r for r in all_rows if r["op"] == op])
    console.print(table)
    console.print(f"wall time {time.time() - t_start:.0f} s; goals " + ("[green]met[/]" if ok else "[red]missed[/]"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
