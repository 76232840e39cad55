"""What a prediction costs as the job grows: wall time of rankwise.predict.predictor.predict_collective.

Network: a two-level fat tree as rankwise.sim.platform generates it (racks of 16 nodes, node links
12.5 GB/s and 1 us as injection/ejection caps, one shared uplink per rack and direction, 2 us),
4 ranks per node: P = 64, 256, 1024, 4096 ranks on 16 .. 1024 nodes. 'uniform' is non-blocking;
'faulty' has 2:1 oversubscribed uplinks and every 7th node at 1/4 of the bandwidth, which
desynchronises the steps (more events, more rate updates). Each row: the best of --repeat runs
(schedule construction + simulation, through the Python binding) in wall time and in CPU time
of the process (the wall time is what a user waits for on an idle machine; on a shared one the
CPU time is the fair figure), the transfers simulated, the events and max-min rate updates, and
the growth factor of the CPU time from the previous P.

Goal: a 256-rank all-to-all prediction in <= 50 ms (CPU time, worst network).
Exit status 1 when missed.
Run: .venv/bin/python studies/predict/predict_speed.py [--ranks 64,256,1024,4096] [--repeat 3]
4,096 ranks of pairwise all-to-all are 16.8 M transfers: a few GB of memory and tens of seconds.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from rich.console import Console
from rich.table import Table

from rankwise.predict.predictor import PredictNetwork, SharedLink, predict_collective

GOAL_S = 0.050
RACK = 16
PPN = 4


def fat_tree(n_nodes: int, faulty: bool) -> PredictNetwork:
    rack = np.arange(n_nodes) // RACK
    cross = rack[:, None] != rack[None, :]
    node_bw = np.full(n_nodes, 12.5e9)
    if faulty:
        node_bw[::7] /= 4
    alpha = np.where(cross, 6e-6, 2e-6)
    bw = np.minimum(node_bw[:, None], node_bw[None, :])
    np.fill_diagonal(alpha, 0.2e-6)
    np.fill_diagonal(bw, 50e9)
    links = []
    uplink = 12.5e9 * RACK / (2.0 if faulty else 1.0)
    for r in range(rack.max() + 1):
        inside, outside = np.flatnonzero(rack == r), np.flatnonzero(rack != r)
        if outside.size:
            pairs = np.stack(np.meshgrid(inside, outside, indexing="ij"), axis=-1).reshape(-1, 2).astype(np.int32)
            links.append(SharedLink(f"up-{r}", uplink, pairs))
            links.append(SharedLink(f"down-{r}", uplink, pairs[:, ::-1].copy()))
    return PredictNetwork([f"node-{i}" for i in range(n_nodes)], alpha, 1.0 / bw, inject=node_bw,
                          eject=node_bw.copy(), links=links)


# (operation, algorithm, bytes, largest P): the P^2-transfer schedules other than the pairwise
# all-to-all stop at 1,024 ranks (4,096 would hold 17-34 M transfers, several GB).
CASES = [("alltoall", "pair", 1 << 20, 4096), ("alltoall", "bruck", 1 << 10, 4096),
         ("bcast", "binomial", 1 << 20, 4096), ("allreduce", "ring", 1 << 20, 1024),
         ("allgather", "ring", 1 << 16, 1024)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ranks", default="64,256,1024,4096")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    console = Console(width=140)
    table = Table(title=f"Prediction wall time, {PPN} ranks per node, racks of {RACK}")
    for col in ("network", "operation", "ranks", "transfers", "events", "rate updates", "predicted", "wall",
                "CPU", "growth"):
        table.add_column(col, justify="right")
    goal_wall = None
    for faulty in (False, True):
        label = "faulty" if faulty else "uniform"
        for op, alg, size, largest in CASES:
            prev = None
            for p in (int(x) for x in args.ranks.split(",")):
                if p > largest:
                    continue
                net = fat_tree(p // PPN, faulty)
                node_of = np.repeat(np.arange(p // PPN), PPN)
                best, wall, res = np.inf, np.inf, None
                for _ in range(args.repeat if p <= 1024 else 1):
                    t0, c0 = time.perf_counter(), time.process_time()
                    res = predict_collective(net, op, alg, size, node_of)
                    best = min(best, time.process_time() - c0)
                    wall = min(wall, time.perf_counter() - t0)
                growth = f"x{best / prev:.1f}" if prev else ""
                prev = best
                if (op, alg, p) == ("alltoall", "pair", 256):
                    goal_wall = max(goal_wall or 0.0, best)
                table.add_row(label, f"{op} {alg} {size // 1024} KiB", f"{p:,}", f"{res.transfers:,}",
                              f"{res.events:,}", f"{res.rate_updates:,}", f"{res.time * 1e3:.3f} ms",
                              f"{wall * 1e3:.1f} ms", f"{best * 1e3:.1f} ms", growth)
                console.print(f"[dim]{label} {op} {alg} {p}: {wall * 1e3:.1f} ms wall, {best * 1e3:.1f} ms CPU[/]")
    console.print(table)
    ok = goal_wall is not None and goal_wall <= GOAL_S
    if goal_wall is not None:
        console.print(f"256-rank pairwise all-to-all: {goal_wall * 1e3:.1f} ms (goal <= {GOAL_S * 1e3:.0f} ms): "
                      + ("[green]met[/]" if ok else "[red]missed[/]"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
