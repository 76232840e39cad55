"""How right the predictor is: predicted vs SMPI-simulated time of collectives, algorithm pinned.

Platforms (64 nodes in 4 racks of 16, rankwise.sim.platform):
  default      default_spec(): degraded nodes 5, 22, 41, rack 3's uplink congested to 1/4,
               node 30's bandwidth varying over time (the predictor takes its t = 0 value)
  uniform      non-blocking, no fault
  shuffled     every link jittered (log-normal sigma 0.2), nodes 3, 17, 38 and 60 degraded (1/8 of
               the bandwidth, 20x the latency); the job's nodes are taken in a shuffled order, so
               consecutive ranks sit in different racks
  oversub      every uplink at 1/4 of non-blocking
Jobs (--jobs RANKSxPPN,...): 16 and 64 ranks one per node, 256 ranks four per node (all 64 nodes),
on the first nodes of the platform (a shuffled order for 'shuffled'). Collectives: alltoall pair
(power-of-two jobs; ring otherwise) and bruck; bcast binomial, flat, chain and scatter_allgather;
reduce binomial; allreduce rdb, ring and rabenseifner; allgather ring, rdb and bruck. Sizes 1 KiB
to 4 MiB (alltoall: per rank pair). The bruck algorithms run up to 32 ranks only: SMPI's
implementations allocate P x n bytes of real memory per rank and copy them.

SMPI runs with rankwise's send and receive overheads for collective experiments
(rankwise.sim.smpi.overhead_settings, --overheads, default 1 us each on eager messages), and the
benchmark programs start every rank at one instant, so the prediction starts all ranks at 0.

The network (--network) comes from each platform's ground truth (route latencies and bandwidths,
node links as injection/ejection caps, uplinks as shared links: 'truth'), or from an
isolated-mode probe of the job's nodes through PredictNetwork.from_model ('probed'; jobs
--probed-jobs, 16 and 64 ranks one per node by default: a probe costs ~N^3, 256 ranks are left
out), or both ('both', the default: two tables). The probe runs without overheads, so its alpha
is the network's; the predictor is given the overheads as known. The probe runs the stress test
too (`--capacities`), so the model holds the uplinks' capacities and the nodes' caps. Each row
puts Hockney's model of the same schedule (each message alone, alpha + n beta, a rank's sends
one after another, along the critical path) beside the prediction.

Goals: all-to-all median |error| <= 10 %, 90th percentile <= 25 %; bcast, reduce,
allreduce, allgather median <= 15 %. Exit status 1 when one is missed.

Run: .venv/bin/python studies/predict/predict_accuracy.py [--quick] [--platforms default,uniform]
     [--jobs 16x1,64x1,256x4] [--network truth|probed|both] [--overheads 1,1] [--csv FILE]
Cost: ~10 minutes of wall time for the default grid on 2 cores.
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

from rankwise.predict.predictor import SMPI_ALGORITHM, PredictNetwork, predict_collective
from rankwise.measure.probe import ProbeOptions, probe_sim
from rankwise.cluster.benchmark_programs import run_benchmark
from rankwise.sim.platform import Degraded, PlatformSpec, default_spec, generate
from rankwise.sim.smpi import overhead_settings

GOALS = {"alltoall": (0.10, 0.25), "bcast": (0.15, None), "reduce": (0.15, None), "allreduce": (0.15, None),
         "allgather": (0.15, None)}
CASES = [
    ("alltoall", "pair"), ("alltoall", "bruck"),
    ("bcast", "binomial"), ("bcast", "flat"), ("bcast", "chain"), ("bcast", "scatter_allgather"),
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


def run_case(gp, nets, hosts, op, alg, sizes, iterations, overheads):
    """SMPI's times of one pinned algorithm, and each network's prediction beside them:
    (algorithm, {network: [(size, smpi_us, predicted_us, hockney_us)]})."""
    algorithm = alg
    if op == "alltoall" and alg == "pair" and len(hosts) & (len(hosts) - 1):
        algorithm = "ring"
    cfg = [f"smpi/{op}:{SMPI_ALGORITHM[op, algorithm]}", *overhead_settings(*overheads)]
    args = ["--sizes", sizes, "--iterations", str(iterations), "--warmup", "0", "--max-memory", "4G"]
    if op == "alltoall":
        tab = run_benchmark("alltoall", args, sim=gp.platform_xml, hosts=hosts, smpi_cfg=cfg).table
    else:
        tab = run_benchmark("collectives", ["--collectives", op] + args, sim=gp.platform_xml, hosts=hosts,
                            smpi_cfg=cfg)[op]
    out = {}
    for source, (net, node_of) in nets.items():
        rows = []
        for size, meas in zip(tab.size, tab.median_us):
            pred = predict_collective(net, op, algorithm, int(size), node_of).span * 1e6
            hock = predict_collective(net, op, algorithm, int(size), node_of, contention=False).span * 1e6
            rows.append((int(size), float(meas), pred, hock))
        out[source] = rows
    return algorithm, out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--platforms", default="default,uniform,shuffled,oversub")
    ap.add_argument("--jobs", default="16x1,64x1,256x4", help="RANKSxRANKS_PER_NODE,... (ground-truth network)")
    ap.add_argument("--probed-jobs", default="16x1,64x1", help="jobs predicted from a probed model")
    ap.add_argument("--network", choices=("truth", "probed", "both"), default="both",
                    help="where the prediction's figures come from")
    ap.add_argument("--overheads", default="1,1", help="SMPI's and the predictor's send,receive overhead in us")
    ap.add_argument("--sizes", default="1K,16K,256K,4M")
    ap.add_argument("--iterations", type=int, default=1, help="timed iterations (SMPI is deterministic)")
    ap.add_argument("--quick", action="store_true", help="jobs 16x1,16x2, sizes 1K,64K,1M")
    ap.add_argument("--csv", help="write every row here")
    args = ap.parse_args()
    if args.quick:
        args.jobs, args.probed_jobs, args.sizes = "16x1,16x2", "16x1", "1K,64K,1M"
    overheads = tuple(float(x) * 1e-6 for x in args.overheads.split(","))
    sources = ("truth", "probed") if args.network == "both" else (args.network,)
    jobs = {"truth": args.jobs.split(",") if "truth" in sources else [],
            "probed": args.probed_jobs.split(",") if "probed" in sources else []}
    console = Console(width=160, force_terminal=False)
    all_rows = []
    t_start = time.time()
    with tempfile.TemporaryDirectory(prefix="rankwise-predict-") as tmp:
        for name in args.platforms.split(","):
            spec, shuffle = platforms()[name]
            gp = generate(spec, Path(tmp) / name)
            order = np.random.default_rng(7).permutation(spec.n_nodes) if shuffle else np.arange(spec.n_nodes)
            for job in dict.fromkeys(jobs["truth"] + jobs["probed"]):
                n_ranks, ppn = (int(x) for x in job.split("x"))
                n_nodes = n_ranks // ppn
                used = order[:n_nodes]
                hosts = [gp.nodes[i] for i in used for _ in range(ppn)]
                nets = {}
                if job in jobs["truth"]:
                    nets["truth"] = (PredictNetwork.from_ground_truth(gp.out_dir).with_overheads(*overheads),
                                     np.repeat(used, ppn))
                if job in jobs["probed"]:
                    hf = Path(tmp) / f"{name}-{n_nodes}.hosts"
                    hf.write_text("".join(f"{gp.nodes[i]}\n" for i in used for _ in range(2)))
                    t0 = time.time()
                    model = probe_sim(gp.platform_xml, Path(tmp) / f"{name}-{n_nodes}.rwm",
                                      ProbeOptions(mode="isolated", sizes="8,1K,64K,1M", repetitions=2, rounds=2,
                                                   capacities="after"),
                                      hostfile=hf, show_progress=False)
                    # The probe runs without overheads: its alpha is the network's; the overheads are known.
                    net = PredictNetwork.from_model(model, [(gp.nodes[i], ppn) for i in used])
                    nets["probed"] = (net.with_overheads(*overheads), np.repeat(np.arange(n_nodes), ppn))
                    console.print(f"[dim]{name}: probe of {n_nodes} nodes {time.time() - t0:.1f} s[/]")
                for op, alg in CASES:
                    if alg == "rdb" and n_ranks & (n_ranks - 1):
                        continue
                    if alg == "bruck" and n_ranks > 32:
                        continue  # SMPI's bruck allocates P x n real bytes per rank: 13 GB at 64 x 4 MiB
                    t0 = time.time()
                    algorithm, per_net = run_case(gp, nets, hosts, op, alg, args.sizes, args.iterations, overheads)
                    for source, rows in per_net.items():
                        for size, meas, pred, hock in rows:
                            all_rows.append(dict(network=source, platform=name, ranks=n_ranks, ppn=ppn, op=op,
                                                 algorithm=algorithm, size=size, smpi_us=meas, predicted_us=pred,
                                                 hockney_us=hock, error=(pred - meas) / meas,
                                                 hockney_error=(hock - meas) / meas))
                    console.file.flush()
                    console.print(f"[dim]{name} {n_ranks} ranks ({ppn}/node) {op} {algorithm}: {time.time() - t0:.1f} s; "
                                  + "; ".join(f"{src} " + ", ".join(f"{s}: {(p - m) / m:+.1%}" for s, m, p, _ in rows)
                                              for src, rows in per_net.items()) + "[/]")
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(all_rows[0]))
            w.writeheader()
            w.writerows(all_rows)

    ok = True
    for source in sources:
        ok &= print_table(console, [r for r in all_rows if r["network"] == source], source,
                          jobs[source], args.sizes, args.platforms.split(","), overheads)
    console.print(f"wall time {time.time() - t_start:.0f} s; goals " + ("[green]met[/]" if ok else "[red]missed[/]"))
    return 0 if ok else 1


def print_table(console, all_rows, source, jobs, sizes, platform_names, overheads) -> bool:
    """The |error| quantiles per platform and operation, and over all platforms with the goals."""
    ok = True
    what = "ground truth" if source == "truth" else "probed model (PredictNetwork.from_model)"
    table = Table(title=f"Predicted vs SMPI, network from the {what}; jobs {','.join(jobs)}, sizes {sizes}, "
                        f"overheads {overheads[0] * 1e6:g}/{overheads[1] * 1e6:g} us; |error| quantiles")
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
    for name in platform_names:
        for op in ops:
            rows = [r for r in all_rows if r["platform"] == name and r["op"] == op]
            if rows:
                add(name, op, rows)
    for op in ops:
        add("all", op, [r for r in all_rows if r["op"] == op])
    console.print(table)
    return ok


if __name__ == "__main__":
    sys.exit(main())
