"""The live model in the job (rankwise_live.h; docs/live-model.md, "In the job") on a network
that changes during the run.

SMPI, `rankwise sim platform`: 2 racks of 2 nodes, 2 cores each, rack uplinks oversubscribed
4:1, node-1's link falling to a tenth of its bandwidth at simulated time T (`--degrade-at`).
The application: rankwise-bench-stencil(-coll) on an 8 x 1 x 1 grid (a chain of 8 ranks, each
sending a block of 1 MiB to each neighbour per iteration, mode 1d), 8 ranks, 2 per node. The
allocation lists its nodes rack-interleaved (node-0, node-2, node-1, node-3), as a scheduler
spreading jobs may. Three runs of the same iterations:

- default: the launcher's placement, ranks in the allocation's order (2 per node);
- static: `rankwise map` on a model probed before the change (`rankwise probe --sim`, which
  ends long before T), with the stencil's traffic, kept for the whole run;
- live: the static placement, plus `--live K`: rw_live_probe every K iterations with the
  default budget, rw_live_remap when the model changed (the program moves its blocks).

The default and static runs use the same program with K beyond the run (no re-probe), so all
three print the same per-iteration table. Figures: the re-probe overhead (probe time / the
live run's time), the iteration of the first re-probe after T and whether it found the change,
the mean time per iteration before T (live against static: equal) and after T, the re-probes'
and the remap's time included (live against static: >= 1.3x faster).

Run: .venv/bin/python studies/live_remap.py [--every 400] [--iterations 4000] [--at 0.3]
     [--keep DIR]
Cost: about 10 s on 2 cores. Exit status 1 when a goal is missed.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from rankwise import paths
from rankwise.sim.smpi import smpirun_command

STENCIL = paths.PACKAGE_DIR / "_bin" / "smpi" / "rankwise-bench-stencil-coll"  # linked with the live model
RANKWISE = Path(sys.executable).parent / "rankwise"
NODES = ["node-0", "node-2", "node-1", "node-3"]  # the allocation, rack-interleaved
SLOTS = 2
RANKS = len(NODES) * SLOTS
BLOCK = "1M"
OUTPUTS: dict[str, str] = {}  # each run's standard output


def run(cmd: list, **kw) -> subprocess.CompletedProcess:
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit(f"live_remap: {' '.join(map(str, cmd[:3]))} failed:\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
    return r


def rank_hosts(machinefile: Path) -> list[str]:
    """One host per rank from an MPICH machinefile (host:count lines, ranks in order)."""
    hosts = []
    for line in machinefile.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            host, _, count = line.partition(":")
            hosts += [host] * int(count or 1)
    return hosts


def stencil(folder: Path, name: str, hosts: list[str], every: int, iterations: int, model: Path) -> np.ndarray:
    """Rows of the live table: iteration, start, op, probe, remap (s), pairs, changed, remapped, gain."""
    hostfile = folder / f"{name}.hosts"
    hostfile.write_text("\n".join(hosts) + "\n")
    args = ["--grid", f"{RANKS}x1x1", "--mode", "1d", "--sizes", BLOCK, "--iterations", str(iterations),
            "--warmup", "2", "--live", str(every), "--live-model", str(model)]
    r = run(smpirun_command(STENCIL, args, folder / "platform" / "platform.xml", hostfile, RANKS))
    (folder / f"{name}.out").write_text(r.stdout)
    OUTPUTS[name] = r.stdout
    (folder / f"{name}.err").write_text(r.stderr)
    rows = np.array([[float(x) for x in line.split()] for line in r.stdout.splitlines()
                     if line and not line.startswith("#")])
    rows[:, 2:5] *= 1e-6
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--every", type=int, default=400, help="K: re-probe every K iterations (default 400)")
    ap.add_argument("--iterations", type=int, default=4000)
    ap.add_argument("--at", type=float, default=0.3, help="simulated time of the change, s (default 0.3)")
    ap.add_argument("--keep", type=Path, help="keep the platform, models and outputs in this folder")
    a = ap.parse_args()
    console = Console()
    with tempfile.TemporaryDirectory() as tmp:
        folder = a.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        run([RANKWISE, "sim", "platform", "-o", folder / "platform", "--racks", "2", "--nodes-per-rack", "2",
             "--cores", str(SLOTS), "--oversubscription", "4", "--degrade", "node:1:0.1", "--degrade-at", a.at])
        model = folder / "before.rwm"
        allocation = folder / "allocation.hosts"
        allocation.write_text("".join(f"{n}:{SLOTS}\n" for n in NODES))
        run([RANKWISE, "probe", "--sim", folder / "platform" / "platform.xml", "--hostfile", allocation,
             "--ranks-per-node", SLOTS, "-o", model])
        probe_end = float(next(line.split()[1] for line in model.read_text().splitlines()
                               if line.startswith("duration ")))
        static_file = folder / "static.hosts"
        run([RANKWISE, "map", "-m", model, "-p", f"stencil3d:grid={RANKS}x1x1,bytes={BLOCK},neighbours=26",
             "--hostfile", allocation, "-f", "mpich", "-o", static_file])
        default_hosts = [n for n in NODES for _ in range(SLOTS)]
        static_hosts = rank_hosts(static_file)
        never = a.iterations + 1
        runs = {"default": stencil(folder, "default", default_hosts, never, a.iterations, model),
                "static": stencil(folder, "static", static_hosts, never, a.iterations, model),
                "live": stencil(folder, "live", static_hosts, a.every, a.iterations, model)}

    def per_iteration(rows: np.ndarray, after: bool) -> float:
        sel = rows[:, 1] >= a.at if after else rows[:, 1] + rows[:, 2:5].sum(axis=1) <= a.at
        return float(rows[sel, 2:5].sum(axis=1).mean()) if sel.any() else float("nan")

    live = runs["live"]
    live_out = OUTPUTS["live"]
    probes = live[live[:, 5] > 0]
    overhead = probes[:, 3].sum() / live[:, 2:5].sum()
    first_after = probes[probes[:, 1] >= a.at]
    detected = len(first_after) > 0 and first_after[0, 6] > 0
    remaps = live[live[:, 7] > 0]
    table = Table(title=f"stencil chain of {RANKS} ranks, {BLOCK} blocks; node-1 at 1/10 from {a.at} s")
    for col in ("placement", "before (us/iter)", "after (us/iter)", "run (s)", "hosts"):
        table.add_column(col, justify="right" if "us" in col or "(s)" in col else "left")
    for name, rows in runs.items():
        hosts = default_hosts if name == "default" else static_hosts
        table.add_row(name, f"{1e6 * per_iteration(rows, False):.1f}", f"{1e6 * per_iteration(rows, True):.1f}",
                      f"{rows[-1, 1] + rows[-1, 2:5].sum():.4f}", " ".join(h[-1] for h in hosts))
    console.print(table)
    before_ratio = per_iteration(live, False) / per_iteration(runs["static"], False)
    after_speedup = per_iteration(runs["static"], True) / per_iteration(live, True)
    default_static = per_iteration(runs["default"], False) / per_iteration(runs["static"], False)
    console.print(f"model probed before the change: simulated 0 to {probe_end:.4f} s; the static placement "
                  f"is {default_static:.2f}x faster than the default before the change")
    console.print(f"re-probes: {len(probes)} every {a.every} iterations, {1e3 * probes[:, 3].mean():.3f} ms "
                  f"each on average, overhead {100 * overhead:.2f} % of the live run's time (goal <= 1 %)")
    if len(first_after):
        i = int(first_after[0, 0])
        console.print(f"first re-probe after the change: iteration {i} at {first_after[0, 1]:.4f} s, "
                      f"{int(first_after[0, 6])} pairs changed: {'detected' if detected else 'NOT detected'}")
    orders = [line for line in live_out.splitlines() if line.startswith("# live: remapped")]
    for row, order in zip(remaps, orders):
        old = [int(w) for w in order.split(":")[-1].split()]
        console.print(f"remap at iteration {int(row[0])} ({row[1]:.4f} s): predicted gain {100 * row[8]:.1f} %, "
                      f"{1e3 * row[4]:.3f} ms with the data's move; nodes of the new ranks "
                      + " ".join(static_hosts[o][-1] for o in old))
    console.print(f"live / static before the change: {before_ratio:.3f} (goal 1.00); static / live after it: "
                  f"{after_speedup:.2f}x (goal >= 1.3x)")
    goals = [overhead <= 0.01, detected, abs(before_ratio - 1) <= 0.02, after_speedup >= 1.3]
    console.print("goals: " + ("all met" if all(goals) else "MISSED"))
    return 0 if all(goals) else 1


if __name__ == "__main__":
    sys.exit(main())
