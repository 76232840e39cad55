"""The live model in the job (rankwise_live.h; docs/concepts/live.md, "In the job") on a network
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

Run: .venv/bin/python studies/live/live_remap.py [--every 400] [--iterations 4000] [--at 0.3]
     [--keep DIR]
Cost: about 10 s on 2 cores. Exit status 1 when a goal is missed.

`--emulated`: the same program under real Open MPI on an emulated cluster (`rankwise emulate`,
docs/concepts/emulation.md), the library preloaded; see emulated_live() below. Needs root and
network namespaces (exit 2 with the reason otherwise). `--keep DIR` keeps each run's output and
its standard error (the live model's trace lines, each with when rank 0 measured) as DIR/{kept,live}-K.*.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from rankwise.util import paths
from rankwise.emulate.midrun import measured, run_with_change
from rankwise.emulate.system import Unsupported, check_supported
from rankwise.cluster.launch import mpi_environment
from rankwise.util.paths import program
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
    return live_rows(r.stdout)


def live_rows(stdout: str) -> np.ndarray:
    """The live table (live_mode.c), times in seconds: iteration, start, op, probe, remap, pairs,
    changed, remapped, gain."""
    rows = np.array([[float(x) for x in line.split()] for line in stdout.splitlines()
                     if line and not line.startswith("#")])
    rows[:, 2:5] *= 1e-6
    return rows



# --- --emulated: real Open MPI on an emulated cluster -----------------------------------------------------------

EMU_RACKS, EMU_PER_RACK = 3, 3  # the middle rack's uplink is slowed: a chain crosses it twice
EMU_NIC = 200_000_000
EMU_SLOW_RACK = 1


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def emulated_run(cluster: Path, model: Path, keep: bool, a) -> dict:
    """One run of the chain stencil across every host, `--live K` (with `--live-keep`: never
    remapped); the middle rack's uplink is slowed when the a.after_probe-th re-probe has ended (rank
    0's trace of it arrived) and restored after the run. Returns the table, the re-probes' trace
    lines and when the change was made (unix seconds, as their measured windows)."""
    hosts = EMU_RACKS * EMU_PER_RACK
    cmd = [cluster / "mpirun", "--hostfile", cluster / "hostfile", "-np", hosts,
           "-x", f"LD_PRELOAD={paths.PACKAGE_DIR / '_lib' / 'librankwise_coll.so'}", "-x", "RANKWISE_COLL_TRACE=1",
           program("rankwise-bench-stencil", "mpi"), "--grid", f"{hosts}x1x1", "--mode", "1d", "--sizes", a.block,
           "--iterations", a.iterations, "--warmup", "2", "--live", a.every, "--live-model", model,
           *(["--live-keep"] if keep else []), *(["--live-budget", a.budget] if a.budget else []),
           *(["--live-min-gain", a.min_gain] if a.min_gain else [])]
    load = loadavg()
    r = run_with_change(cmd, cluster, "uplink", EMU_SLOW_RACK, a.slow_to * 1_000_000, a.uplink * 1_000_000,
                        a.after_probe, env=mpi_environment())
    if r.returncode != 0 or r.changed_unix is None:
        sys.exit(f"live_remap: the {'kept' if keep else 'live'} run failed (exit {r.returncode}"
                 f"{', ended before the change' if r.changed_unix is None else ''}): {r.others()[-1500:]}")
    return {"rows": live_rows(r.stdout), "out": r.stdout, "traces": [t for _, t in r.probes],
            "changed": r.changed_unix, "load": load,
            "err": f"{r.changed_unix[0]:.3f} {r.changed_unix[1]:.3f} the uplink set (unix s)\n"
                   + "".join(line for _, line in r.stderr)}


def named_slower(trace: str, at_least: float = 2.0) -> tuple[list[str], list[str]]:
    """The pairs a re-probe's trace names at least x2 slower: (crossing the slowed uplink, the others)."""
    rack = {f"node-{i}": i // EMU_PER_RACK for i in range(EMU_RACKS * EMU_PER_RACK)}
    slower = [(a, b) for a, b, x in re.findall(r"(node-\d+)->(node-\d+) x([\d.]+)", trace) if float(x) >= at_least]
    crossing = [f"{a}->{b}" for a, b in slower if (rack[a] == EMU_SLOW_RACK) != (rack[b] == EMU_SLOW_RACK)]
    return crossing, [f"{a}->{b}" for a, b in slower if f"{a}->{b}" not in crossing]


def placements(out: str, hosts: int) -> list[tuple[int, list[int]]]:
    """The node of each rank from the start (the hostfile's order) and after each remap:
    (iteration, nodes)."""
    nodes, found = list(range(hosts)), [(-1, list(range(hosts)))]
    for m in re.finditer(r"# live: remapped after iteration (\d+), the new ranks' old ones: ([\d ]+)", out):
        nodes = [nodes[int(o)] for o in m.group(2).split()]
        found.append((int(m.group(1)), nodes))
    return found


def uplink_crossings(nodes: list[int]) -> int:
    """The chain's edges through the slowed rack's uplink (one end in the rack)."""
    inside = [n // EMU_PER_RACK == EMU_SLOW_RACK for n in nodes]
    return sum(a != b for a, b in zip(inside, inside[1:]))


def emulated_figures(run: dict) -> dict:
    """The run's iterations against the change: the iteration during which it was made, the first
    re-probe that started after it (did it name a change?), the remap, and the time from that
    re-probe to the end (its probe and the remap included: the rest of the run)."""
    rows, traces = run["rows"], run["traces"]
    probed = np.flatnonzero(rows[:, 3] > 0)
    if len(probed) != len(traces):
        sys.exit(f"live_remap: {len(probed)} re-probes in the table, {len(traces)} traced")
    # MPI_Wtime (the table's start) to unix time: each re-probe's trace says when rank 0 measured
    # (its arrival through mpirun lags by up to seconds under load)
    windows = np.array([measured(t) for t in traces])
    probe_start = windows[:, 0]
    offset = float(np.median(probe_start - (rows[probed, 1] + rows[probed, 2])))
    start = rows[:, 1] + offset
    set_start, set_end = run["changed"]
    during = int(np.searchsorted(start, set_end)) - 1  # the iteration under way when the change was made
    after = probed[probe_start >= set_end]
    if not len(after):
        sys.exit("live_remap: no re-probe after the change; raise --iterations")
    first = int(after[0])
    # what each re-probe named x2 slower or more: pairs crossing the slowed uplink, and the others (noise)
    named = [named_slower(t) for t in traces]
    j = int(np.flatnonzero(probed == first)[0])
    before_probes = [n for n, (_, end) in zip(named, windows) if end < set_start]
    remapped = np.flatnonzero(rows[:, 7] > 0)
    rest = float(rows[first, 3:5].sum() + rows[first + 1:, 2:5].sum())
    from_change = float(rows[during:, 2:5].sum())
    before = rows[:during]
    placed = placements(run["out"], EMU_RACKS * EMU_PER_RACK)
    crossings = [uplink_crossings(n) for _, n in placed]
    # A remap between the change and that re-probe which moved the chain off the slowed uplink:
    # its re-measurement of the pairs met the change first.
    early = [i for k, (i, _) in enumerate(placed) if k and during <= i < first and crossings[k] < crossings[k - 1]]
    return {"crossings": crossings, "during": during, "first": first,
            "detected": bool(named[j][0]) or bool(early), "reacted_early": bool(early), "crossing": len(named[j][0]),
            "noise_first": len(named[j][1]), "noise_before": sum(len(c) + len(o) for c, o in before_probes),
            "probes_before": len(before_probes),
            "remaps_before": int(sum(1 for r in remapped if start[r] + rows[r, 2] < set_start)),
            "pairs": int(rows[first, 5]),
            "changed": int(rows[first, 6]), "remaps": [(int(r[0]), float(r[8])) for r in rows[remapped]],
            "rest": rest, "rest_iterations": len(rows) - first - 1, "from_change": from_change,
            "before": float(before[:, 2:5].sum(axis=1).mean()) if len(before) else float("nan"),
            "after_op": float(rows[first + 1:, 2].mean()), "probe": float(rows[probed, 3].mean()),
            "set_s": set_end - set_start}


def sum_objective_gain(model: Path, block: int) -> tuple[float, list[int]]:
    """What the in-job mapper's objective (every message alone: alpha + bytes beta, both ways of
    each chain edge) gains on the model itself over the hostfile's order, by trying every order:
    a gain here is in the start model, not in any change. (gain, best order of nodes)"""
    from itertools import permutations

    from rankwise.model.model import Model

    m = Model.load(model)
    c = m.alpha + block * m.beta
    c = c + c.T
    n = len(m.names)
    edges = lambda p: sum(c[p[i], p[i + 1]] for i in range(n - 1))  # noqa: E731
    best = min(permutations(range(n)), key=edges)
    return 1 - edges(best) / edges(list(range(n))), list(best)


def emulated_live(a) -> int:
    """Kept against live on the emulated cluster: EMU_RACKS racks of EMU_PER_RACK hosts, one rank
    per host, NICs at EMU_NIC, uplinks at a.uplink Mbit/s; the chain stencil in the hostfile's
    (rack) order, which crosses the middle rack's uplink twice. A model probed before (`rankwise
    probe`, sizes 8, 128 KiB and 1 MiB: the re-probes measure 8 B and 128 KiB). Then a.repeats
    pairs of runs, interleaved kept/live (the pair's order alternating), each with the middle
    uplink slowed to a.slow_to Mbit/s after the a.after_probe-th re-probe. A remap that puts the
    middle rack at an end of the chain crosses it once."""
    try:
        check_supported()
    except Unsupported as e:
        print(f"live_remap: {e}", file=sys.stderr)
        return 2
    a.every = a.every or 5
    a.iterations = a.iterations or 40
    with tempfile.TemporaryDirectory() as tmp:
        folder = a.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        cluster = folder / "cluster"
        hosts = EMU_RACKS * EMU_PER_RACK
        try:
            run([RANKWISE, "emulate", "up", "-o", cluster, "--name", f"lr{os.getpid() % 100000}",
                 "--racks", EMU_RACKS, "--nodes-per-rack", EMU_PER_RACK, "--nic-rate", EMU_NIC,
                 "--uplink-rate", f"{a.uplink}M"])
            model = folder / "before.rwm"
            t0 = time.monotonic()
            load = loadavg()
            run([RANKWISE, "probe", "--launcher", f"{cluster}/mpirun --hostfile {cluster}/hostfile -np {hosts}",
                 "--sizes", "8,128K,1M", "--repetitions", "3", "--rounds", "2", "-o", model,
                 *(["--no-references"] if a.no_references else [])],
                env=mpi_environment())
            print(f"model probed in {time.monotonic() - t0:.0f} s (load {load})", flush=True)
            block = int(a.block.rstrip("KMG")) << {"K": 10, "M": 20, "G": 30}.get(a.block[-1:], 0)
            gain, order = sum_objective_gain(model, block)
            print(f"the mapper's objective on the start model alone: {100 * gain:.1f} % gain, racks in the "
                  f"order {''.join('ABC'[k // EMU_PER_RACK] for k in order)}", flush=True)
            results = []
            for k in range(a.repeats):
                pair = {}
                for keep in ((True, False) if k % 2 == 0 else (False, True)):
                    r = emulated_run(cluster, model, keep, a)
                    r.update(emulated_figures(r))
                    name = "kept" if keep else "live"
                    (folder / f"{name}-{k}.out").write_text(r["out"])
                    (folder / f"{name}-{k}.err").write_text(r["err"])
                    pair[name] = r
                    print(f"  {k + 1} {name}: change during iteration {r['during']} ({1e3 * r['set_s']:.0f} "
                                  f"ms to set), first re-probe after it at {r['first']}: {r['changed']} of "
                                  f"{r['pairs']} pairs changed, {r['crossing']} crossing the uplink x2 slower "
                                  f"or more, {r['noise_first']} others; before the change {r['noise_before']} "
                                  f"named x2 slower in {r['probes_before']} re-probes, "
                                  f"{r['remaps_before']} remaps; remaps {r['remaps']}; rest of the run "
                                  f"{r['rest']:.2f} s over {r['rest_iterations']} iterations "
                                  f"(op {1e3 * r['after_op']:.0f} ms/iter); before "
                                  f"{1e3 * r['before']:.0f} ms/iter; re-probe {1e3 * r['probe']:.0f} ms; "
                                  f"load {r['load']}", flush=True)
                results.append(pair)
        finally:
            subprocess.run([str(RANKWISE), "emulate", "down", str(cluster)], capture_output=True)
    gains = [p["kept"]["rest"] / p["live"]["rest"] for p in results]
    gains_change = [p["kept"]["from_change"] / p["live"]["from_change"] for p in results]
    detected = [p[n]["detected"] for p in results for n in ("kept", "live")]
    early = sum(p["live"]["reacted_early"] and not p["live"]["crossing"] for p in results)
    lines = [f"chain stencil of {hosts} ranks on {EMU_RACKS} racks x {EMU_PER_RACK} hosts, {a.block} blocks, "
             f"{a.iterations} iterations, re-probe every {a.every} (budget {a.budget or 'default'}, min gain "
             f"{a.min_gain or 'default'}); uplink "
             f"{EMU_SLOW_RACK} from {a.uplink} to {a.slow_to} Mbit/s after re-probe {a.after_probe}; start model "
             f"{'without' if a.no_references else 'with'} the reference pass", "",
             "| pair | change in iteration (kept, live) | first re-probe after it: pairs named x2 slower, "
             "crossing / other (kept; live) | named x2 slower before the change (kept; live) | live remaps: "
             "iteration (predicted gain) | live: chain edges through the slowed uplink (start, after each remap) | "
             "s/iteration after the first re-probe (kept; live) | kept / live, rest of the run | from the change | "
             "load (kept; live) |", "|---|---|---|---|---|---|---|---|---|---|"]
    for k, p in enumerate(results):
        kept, live = p["kept"], p["live"]
        lines.append(
            f"| {k + 1} | {kept['during']}, {live['during']} | {kept['crossing']} / {kept['noise_first']}; "
            f"{live['crossing']} / {live['noise_first']} | {kept['noise_before']}; {live['noise_before']} | "
            + (" ".join(f"{i} ({100 * g:.0f} %)" for i, g in live["remaps"]) or "none")
            + f" | {' '.join(map(str, live['crossings']))} | {kept['rest'] / kept['rest_iterations']:.3f}; "
            f"{live['rest'] / live['rest_iterations']:.3f} | x{gains[k]:.2f} | x{gains_change[k]:.2f} | "
            f"{kept['load']}; {live['load']} |")
    lines += ["", f"detected at the first re-probe after the change (a pair through the slowed uplink named x2 "
                  f"slower or more, or before it a remap that moved the chain off that uplink: {early} run(s)): "
                  f"{sum(detected)} of {len(detected)} runs; remapped against kept for the rest of "
                  f"the run: x{np.median(gains):.2f} ({min(gains):.2f}-{max(gains):.2f}), goal >= 1.2x; from the "
                  f"change: x{np.median(gains_change):.2f} ({min(gains_change):.2f}-{max(gains_change):.2f})"]
    print("\n".join(lines))
    if a.keep:
        (a.keep / "results.md").write_text("\n".join(lines) + "\n")
    goals = [all(detected), min(gains) >= 1.2]
    print("goals: " + ("all met" if all(goals) else "MISSED"))
    return 0 if all(goals) else 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--every", type=int, help="K: re-probe every K iterations (default 400; emulated 5)")
    ap.add_argument("--iterations", type=int, help="default 4000; emulated 40")
    ap.add_argument("--at", type=float, default=0.3, help="simulated time of the change, s (default 0.3)")
    ap.add_argument("--keep", type=Path, help="keep the platform, models and outputs in this folder")
    ap.add_argument("--emulated", action="store_true", help="real Open MPI on an emulated cluster (root)")
    ap.add_argument("--repeats", type=int, default=3, help="emulated: kept/live pairs of runs (default 3)")
    ap.add_argument("--after-probe", type=int, default=2,
                    help="emulated: slow the uplink when the N-th re-probe has ended (default 2)")
    ap.add_argument("--block", default="1M", help="emulated: the stencil's block (default 1M)")
    ap.add_argument("--uplink", type=int, default=600,
                    help="emulated: rack uplinks, Mbit/s (default 600: the rack's 3 NICs of 200, non-blocking)")
    ap.add_argument("--slow-to", type=int, default=50, help="emulated: the slowed uplink's rate, Mbit/s (default 50)")
    ap.add_argument("--no-references", action="store_true",
                    help="emulated: the start model probed with --no-references (every pair as its round measured it)")
    ap.add_argument("--min-gain", help="emulated: --live-min-gain F (default the library's, 0.10)")
    ap.add_argument("--budget", help="emulated: --live-budget S (default the library's: one round per re-probe "
                                     "here; 100: a whole cycle per re-probe)")
    a = ap.parse_args()
    if a.emulated:
        return emulated_live(a)
    a.every = a.every or 400
    a.iterations = a.iterations or 4000
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
