"""What a probe costs as the cluster grows: N = 16, 64, 256 (1024 with --big) simulated nodes.

Uniform non-blocking fat trees (racks of 16 nodes, no alteration), 1 rank per node, the probe's
DEFAULT settings (concurrent mode). Per N: simulated duration of the probe (Model.duration),
wall seconds of the simulation, and the floor:

    floor = T x sum over sizes m of ( rtt_slow(m) x 2 x repetitions x rounds )

where T is the number of tournament rounds (N - 1 for even N, N for odd N), 2 x repetitions x
rounds is the number of timed ping-pongs per pair and size over the whole probe (both
directions), and rtt_slow(m) = alpha_ij + alpha_ji + m / bandwidth_ij is the isolated ping-pong
time from the ground truth of the slowest pair (an inter-rack pair when there are several racks):
all pairs of a tournament round run at once, so a round lasts as long as its slowest pair.
The same with 2 x (repetitions + warmup) x rounds gives the floor including the warm-ups.

Goal: 256 nodes under 2 x floor. Run: .venv/bin/python studies/probe/probe_cost.py [--sizes-list 16,64,256] [--big]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from rankwise.model.model import MEASURED
from rankwise.measure.probe import ProbeOptions, probe_sim
from rankwise.sim.platform import PlatformSpec, generate

RACK = 16
GOAL_N, GOAL_RATIO = 256, 2.0

console = Console(width=None if sys.stdout.isatty() else 124, highlight=False)


@dataclass
class Result:
    n: int
    racks: int
    rounds_t: int
    duration: float  # simulated s
    wall: float  # s
    floor: float
    floor_warmup: float
    slow_pair: str
    slow_rtt_sum: float  # sum over sizes of rtt_slow(m), s
    measured: int
    missing: int
    schedule_rounds: int  # the probe's `rounds` setting


def tournament_rounds(n: int) -> int:
    return n - 1 if n % 2 == 0 else n


def spec_for(n: int) -> PlatformSpec:
    if n >= RACK and n % RACK:
        raise SystemExit(f"N={n}: use a multiple of {RACK} (racks of {RACK} nodes), or fewer than {RACK}")
    racks, per_rack = (n // RACK, RACK) if n >= RACK else (1, n)
    return PlatformSpec(racks=racks, nodes_per_rack=per_rack, cores=1)  # non-blocking, no alteration


def run(n: int, out: Path, progress: bool) -> Result:
    spec = spec_for(n)
    gp = generate(spec, out / f"n{n}")
    console.print(f"N={n}: {spec.racks} rack(s) of {spec.nodes_per_rack}, probing (started {time.strftime('%H:%M:%S')}) ...")
    t0 = time.monotonic()
    model = probe_sim(gp.platform_xml, out / f"n{n}.model", ProbeOptions(), ranks_per_node=1, show_progress=progress)
    wall = time.monotonic() - t0

    st = model.settings
    sizes = model.sizes.astype(float)
    rtt = (gp.alpha + gp.alpha.T)[:, :, None] + sizes[None, None, :] / gp.bandwidth[:, :, None]
    per_pair = rtt.sum(axis=2)
    np.fill_diagonal(per_pair, -np.inf)
    i, j = np.unravel_index(np.argmax(per_pair), per_pair.shape)
    slow = float(per_pair[i, j])
    t = tournament_rounds(n)
    floor = t * slow * 2 * st.repetitions * st.rounds
    floor_wu = t * slow * 2 * (st.repetitions + st.warmup) * st.rounds
    off = ~np.eye(n, dtype=bool)
    res = Result(
        n=n, racks=spec.racks, rounds_t=t, duration=model.duration, wall=wall, floor=floor,
        floor_warmup=floor_wu, slow_pair=f"{gp.nodes[i]}->{gp.nodes[j]}", slow_rtt_sum=slow,
        measured=int(((model.state == MEASURED) & off).sum()), missing=int(((model.state != MEASURED) & off).sum()),
        schedule_rounds=st.rounds,
    )
    console.print(
        f"  N={n}: {res.duration:.4f} s simulated, {wall:.1f} s wall, floor {floor:.4f} s "
        f"(x{res.duration / floor:.3f}), with warm-ups {floor_wu:.4f} s (x{res.duration / floor_wu:.3f}); "
        f"pairs measured {res.measured}, missing {res.missing}"
    )
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes-list", default="16,64,256", help="cluster sizes N (default 16,64,256)")
    ap.add_argument("--big", action="store_true", help="also N=1024 (extrapolated: more than a day of wall time)")
    ap.add_argument("--out", type=Path, help="keep platforms, models and results.json here")
    ap.add_argument("--progress", choices=("auto", "yes", "no"), default="auto",
                    help="probe progress bar (auto: when stderr is a terminal)")
    args = ap.parse_args()
    progress = sys.stderr.isatty() if args.progress == "auto" else args.progress == "yes"
    try:
        ns = sorted({int(x) for x in args.sizes_list.split(",") if x.strip()})
    except ValueError:
        raise SystemExit(f"--sizes-list: '{args.sizes_list}' is not a list like 16,64,256") from None
    if args.big and 1024 not in ns:
        ns.append(1024)
    if any(n < 2 for n in ns):
        raise SystemExit("--sizes-list: every N must be at least 2")
    for n in ns:
        spec_for(n)  # refuse a bad N before hours of simulation

    tmp = None
    if args.out:
        out = args.out
        out.mkdir(parents=True, exist_ok=True)
    else:
        tmp = tempfile.TemporaryDirectory(prefix="rankwise-cost-")
        out = Path(tmp.name)

    console.print(f"[bold]rankwise probe cost[/] — {time.strftime('%Y-%m-%d %H:%M')}, N = {', '.join(map(str, ns))}")
    console.print(
        "floor = T x sum_m( rtt_slow(m) x 2 x repetitions x rounds ), T = tournament rounds (N-1, or N if odd),\n"
        "  rtt_slow(m) = alpha_ij + alpha_ji + m / bandwidth_ij of the slowest pair (ground truth, isolated);\n"
        "  'with warm-ups': 2 x (repetitions + warmup) x rounds ping-pongs per pair and size instead."
    )
    results: list[Result] = []
    for n in ns:
        results.append(run(n, out, progress))
        if args.out:
            (out / "results.json").write_text(json.dumps([r.__dict__ for r in results], indent=1) + "\n")

    table = Table(title="Probe cost, default settings (concurrent), uniform non-blocking fat tree, 1 rank/node")
    for col in ("N", "T", "simulated s", "wall s", "floor s", "sim/floor", "floor+wu s", "sim/(floor+wu)",
                "sim growth", "floor growth"):
        table.add_column(col, justify="right")
    prev = None
    for r in results:
        growth = f"x{r.duration / prev.duration:.2f}" if prev else "-"
        fgrowth = f"x{r.floor / prev.floor:.2f}" if prev else "-"
        table.add_row(
            str(r.n), str(r.rounds_t), f"{r.duration:.4f}", f"{r.wall:.1f}", f"{r.floor:.4f}",
            f"{r.duration / r.floor:.3f}", f"{r.floor_warmup:.4f}", f"{r.duration / r.floor_warmup:.3f}",
            growth, fgrowth,
        )
        prev = r
    console.print(table)
    console.print("  T = tournament rounds; floor+wu = floor including warm-ups; growth = ratio to the previous N")
    for r in results:
        per_round = (r.duration - r.floor_warmup) / r.rounds_t / r.schedule_rounds
        console.print(
            f"  N={r.n}: slowest pair {r.slow_pair}, sum_m rtt_slow(m) = {r.slow_rtt_sum * 1e6:.2f} µs; "
            f"beyond the warm-up floor: {r.duration - r.floor_warmup:.4f} s "
            f"({per_round * 1e6:.1f} µs per tournament round and schedule repetition)"
        )
    goal = [r for r in results if r.n == GOAL_N]
    ok = True
    if goal:
        ratio = goal[0].duration / goal[0].floor
        ok = ratio < GOAL_RATIO and goal[0].missing == 0
        console.print(
            f"goal: {GOAL_N} nodes under {GOAL_RATIO:g} x floor -> x{ratio:.3f}: "
            + ("[green]MET[/]" if ok else "[red]MISSED[/]")
        )
    else:
        console.print(f"goal ({GOAL_N} nodes under {GOAL_RATIO:g} x floor): not evaluated, N={GOAL_N} not run")
    if any(r.missing for r in results):
        console.print("[red]some pairs are missing[/]")
        ok = False
    if tmp:
        tmp.cleanup()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
