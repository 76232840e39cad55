"""Predicted gains of rankwise's collective choices (rankwise.coll): per platform, rank count and ranks
per node, the mean over the issue's size bands of 1 - chosen / passthrough (Open MPI's choice as SMPI's
ompi selector makes it) and of 1 - chosen / binomial, and of the fastest model tree vs binomial.

Networks: the ground truth (route alpha, bottleneck bandwidth, NIC caps, rack uplinks as shared links)
of two generated platforms: the default (64 nodes x 4 cores, 4 racks, its known faults) and a
shuffled-rack one (8 racks x 16 nodes dealt to hosts in a seeded shuffled order, 6 nodes = 5 % with a
NIC at 1/8 of the bandwidth and 20x the latency). The allocation is the first P / ranks-per-node nodes
in host order, block placement, root 0. Send and receive overheads o of 1 us on every node (SMPI:
smpi/os, smpi/or) unless --overhead says otherwise; with o = 0 every eager send of a rank leaves at
once and flat trees win. Sizes are decided in increasing order, each search also starting from the
previous size's tree, as `rankwise coll tune` does.

Bands (the issue's): bcast 8 B-32 KiB (below 64 KiB), reduce 8 B-1 KiB (below 2 KiB), gather 64-512 B,
scatter 8 B-64 KiB. These are predictions, not measurements: the benchmark of the collectives library
measures them under SMPI.

Run: .venv/bin/python studies/coll/coll_selection_gains.py [--overhead 1e-6] [--max-evals 1000] [--out DIR]
About 15 s on an idle machine.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from rankwise.coll.selection import TuneOptions
from rankwise.coll.tune import decide_sizes
from rankwise.predict.predictor import PredictNetwork, SharedLink, placement
from rankwise.sim.platform import Degraded, PlatformSpec, default_spec, generate

BANDS = {
    "bcast": [8 << k for k in range(13)],  # 8 .. 32K
    "reduce": [8 << k for k in range(8)],  # 8 .. 1K
    "gather": [64, 128, 256, 512],
    "scatter": [8 << k for k in range(14)],  # 8 .. 64K
}
SHAPES = [(16, 1), (32, 1), (64, 1), (128, 1), (16, 4), (32, 4), (64, 4), (128, 4)]
DEGRADED_NODES = (3, 12, 29, 50, 77, 101)


def shuffled_spec() -> PlatformSpec:
    return PlatformSpec(racks=8, nodes_per_rack=16, cores=4, shuffle_racks=True, seed=7,
                        degraded=[Degraded("node", i, bw_factor=0.125, lat_factor=20.0) for i in DEGRADED_NODES])


def subset(net: PredictNetwork, n: int) -> PredictNetwork:
    links = []
    for link in net.links:
        keep = link.pairs[(link.pairs[:, 0] < n) & (link.pairs[:, 1] < n)]
        if keep.size:
            links.append(SharedLink(link.name, link.capacity, keep))
    return PredictNetwork(net.names[:n], net.alpha[:n, :n], net.beta[:n, :n],
                          inject=None if net.inject is None else net.inject[:n],
                          eject=None if net.eject is None else net.eject[:n], links=links)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--overhead", type=float, default=1e-6)
    ap.add_argument("--max-evals", type=int, default=TuneOptions().max_evals)
    ap.add_argument("--out", type=Path, default=None, help="keep the generated platforms here")
    args = ap.parse_args()
    console = Console()
    out = args.out or Path(tempfile.mkdtemp(prefix="coll-gains-"))
    platforms = {"default": generate(default_spec(), out / "default"),
                 "shuffled+degraded": generate(shuffled_spec(), out / "shuffled")}
    opts = TuneOptions(max_evals=args.max_evals)
    table = Table(title=f"Predicted gain of rankwise's choice (mean over the band), o = {args.overhead * 1e6:g} us",
                  title_justify="left")
    for col in ("platform", "ranks", "per node", "op", "band", "vs MPI", "vs binomial", "tree vs binomial",
                "rankwise runs"):
        table.add_column(col, justify="left" if col in ("platform", "op", "band") else "right")
    totals: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for pname, plat in platforms.items():
        full = PredictNetwork.from_ground_truth(plat.out_dir)
        for ranks, rpn in SHAPES:
            nodes = ranks // rpn
            if nodes > full.n_nodes:
                continue
            net = subset(full, nodes)
            net.overhead = np.full(nodes, args.overhead)
            net.recv_overhead = np.full(nodes, args.overhead)
            node_of = placement(rpn, nodes)
            for op, sizes in BANDS.items():
                g_mpi, g_bin, g_tree, runs = [], [], [], 0
                for d in decide_sizes(net, node_of, op, sizes, 0, opts):
                    g_mpi.append(1 - d.choice.time / d.passthrough.time)
                    g_bin.append(1 - d.choice.time / d.binomial.time)
                    g_tree.append(1 - d.best.time / d.binomial.time)
                    runs += d.chosen != 0
                totals.setdefault((pname, op), []).append((float(np.mean(g_mpi)), float(np.mean(g_bin))))
                table.add_row(pname, str(ranks), str(rpn), op, f"{sizes[0]}-{sizes[-1]} B",
                              f"{np.mean(g_mpi) * 100:+.1f}%", f"{np.mean(g_bin) * 100:+.1f}%",
                              f"{np.mean(g_tree) * 100:+.1f}%", f"{runs}/{len(sizes)}")
    console.print(table)
    summary = Table(title="Mean over rank counts and ranks per node", title_justify="left")
    for col in ("platform", "op", "vs MPI", "vs binomial"):
        summary.add_column(col)
    for (pname, op), vals in totals.items():
        a = np.array(vals)
        summary.add_row(pname, op, f"{a[:, 0].mean() * 100:+.1f}%", f"{a[:, 1].mean() * 100:+.1f}%")
    console.print(summary)
    console.print(f"platforms in {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
