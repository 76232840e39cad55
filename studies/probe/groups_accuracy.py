"""How well the model recovers its structure: groups vs racks, slow nodes named.

Platforms with racks dealt to hosts in shuffled order (PlatformSpec.shuffle_racks) and a tenth
of the nodes with a degraded NIC (1/8 of the bandwidth, 20x the latency: the case of Cui et
al. 2020 §4 on which the first grouping failed). For each platform shape, seed and ranks per node:
- ARI: adjusted Rand index of the groups (Model.groups, the C engine) against the racks;
- named: degraded nodes in find_slow_links' slow_nodes / degraded nodes;
- false: nodes flagged that are healthy, plus slow blocks (no uplink is altered here);
- varying: one rack uplink whose bandwidth varies over time (a walk down to 5 %, so that it can
  limit a single pair: at 30 % an uplink of 8 node links still carries 2.4 of them; counted
  only when the walk does go below one node link's worth); found when find_slow_links
  reports that rack's group as the one whose uplink varies, and nothing else (with two
  groups, the block between them: the numbers cannot tell which of the two uplinks varies).

1. Synthetic models (rankwise.sim.synthetic: the platform's route figures with 2 % noise per
   rank per node, 5 % more on the pairs of degraded nodes), many seeds, up to 96 nodes.
2. With --sim: SimGrid probes (default probe options) of a few shuffled platforms, 1 and 2
   ranks per node, models kept in --out for comparison with other versions.

Goal: ARI >= 0.95 everywhere, every degraded node named, no false positive.
Exit status 1 when a goal is missed.
Run: .venv/bin/python studies/probe/groups_accuracy.py [--seeds 10] [--sim] [--out DIR]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from rankwise.model.anomalies import find_slow_links
from rankwise.model.model import Model
from rankwise.sim.platform import Degraded, PlatformSpec, Varying, build_links, generate
from rankwise.sim.platform import pair_arrays as _route_arrays
from rankwise.sim.synthetic import adjusted_rand_index, synthetic_model

ARI_GOAL = 0.95
SLOW_NIC = dict(bw_factor=1 / 8, lat_factor=20.0)
SHAPES = [(2, 16), (3, 16), (4, 12), (6, 8), (8, 6), (6, 16), (12, 8), (16, 6), (24, 4)]

console = Console(width=None if sys.stdout.isatty() else 124, highlight=False)


def platform(racks: int, per_rack: int, seed: int, nodes: int | None = None) -> PlatformSpec:
    """Shuffled racks; a tenth of the (probed) nodes degraded; one rack's uplink varies."""
    n = nodes or racks * per_rack
    rng = np.random.default_rng([seed, 2])
    slow = rng.choice(n, max(int(round(0.1 * n)), 1), replace=False)
    return PlatformSpec(racks=racks, nodes_per_rack=per_rack, cores=2, shuffle_racks=True, seed=seed,
                        degraded=[Degraded("node", int(i), **SLOW_NIC) for i in slow],
                        varying=[Varying("uplink", int(rng.integers(racks)), low=0.05)])


def judge(spec: PlatformSpec, model: Model) -> dict:
    f = find_slow_links(model)
    n = model.n_nodes
    rack = spec.rack_of_node[:n]
    slow = {d.index for d in spec.degraded if d.index < n}
    flagged = set(f.slow_nodes)
    up = spec.varying[0].index
    group = int(np.bincount(f.groups[rack == up]).argmax()) if (rack == up).any() else -1
    if f.groups.max() == 1:
        varying = f.noisy_blocks == [(0, 1)] and not f.noisy_groups and not f.noisy_nodes
    else:
        varying = f.noisy_groups == [group] and not f.noisy_nodes and not f.noisy_blocks
    _, bandwidth, lowest, _ = _route_arrays(spec, build_links(spec))
    visible = bool((lowest[:n, :n] < bandwidth[:n, :n]).any())  # the walk may never go low enough
    return dict(
        visible=visible,
        ari=adjusted_rand_index(f.groups, rack),
        named=len(slow & flagged),
        degraded=len(slow),
        false=len(flagged - slow) + len(f.slow_blocks),
        varying=varying,
    )


def row(table: Table, label: str, runs: list[dict], seconds: float) -> bool:
    ari = np.array([r["ari"] for r in runs])
    named, degraded = sum(r["named"] for r in runs), sum(r["degraded"] for r in runs)
    false = sum(r["false"] for r in runs)
    visible = sum(r["visible"] for r in runs)
    varying = sum(r["varying"] and r["visible"] for r in runs)
    ok = ari.min() >= ARI_GOAL and named == degraded and false == 0
    table.add_row(label, str(len(runs)), f"{ari.min():.3f}", f"{ari.mean():.3f}", f"{named}/{degraded}",
                  str(false), f"{varying}/{visible}", f"{seconds:.2f}",
                  "[green]yes[/]" if ok else "[red]no[/]")
    return ok


def new_table(title: str) -> Table:
    t = Table(title=title)
    for col in ("platform", "runs", "ARI min", "ARI mean", "named", "false", "varying found", "s / run", "goal"):
        t.add_column(col, justify="left" if col == "platform" else "right")
    return t


def synthetic(seeds: int) -> bool:
    ok = True
    for rpn in (1, 2):
        t = new_table(f"Synthetic models, {rpn} rank{'s' if rpn > 1 else ''} per node, {seeds} seeds")
        for racks, per in SHAPES:
            runs, start = [], time.perf_counter()
            for seed in range(seeds):
                spec = platform(racks, per, seed)
                runs.append(judge(spec, synthetic_model(spec, ranks_per_node=rpn, seed=seed)))
            ok &= row(t, f"{racks} racks x {per}", runs, (time.perf_counter() - start) / seeds)
        console.print(t)
    return ok


def simulated(out: Path) -> bool:
    from rankwise.measure.probe import ProbeOptions, probe_sim

    ok = True
    t = new_table("SimGrid probes (default options), racks dealt in shuffled order")
    for racks, per, nodes, seed in ((4, 8, 32, 3), (6, 8, 48, 1), (12, 8, 48, 2), (12, 8, 96, 4)):
        for rpn in (1, 2):
            spec = platform(racks, per, seed, nodes)
            where = out / f"r{racks}x{per}-n{nodes}-s{seed}-rpn{rpn}"
            gen = generate(spec, where / "platform")
            start = time.perf_counter()
            model = probe_sim(gen.platform_xml, where / "model.rwm", ProbeOptions(), ranks_per_node=rpn,
                              nodes=nodes, show_progress=False)
            ok &= row(t, f"{nodes} of {racks} racks x {per}, {rpn} rpn", [judge(spec, model)],
                      time.perf_counter() - start)
    console.print(t)
    console.print(f"models and platforms kept in {out}")
    return ok


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--sim", action="store_true", help="also probe a few platforms with SimGrid")
    ap.add_argument("--out", type=Path, help="folder for the simulated probes' models (default: temporary)")
    args = ap.parse_args()
    ok = synthetic(args.seeds)
    if args.sim:
        if args.out:
            ok &= simulated(args.out)
        else:
            with tempfile.TemporaryDirectory() as tmp:
                ok &= simulated(Path(tmp))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
