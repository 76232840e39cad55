"""Real MPI on an emulated cluster (rankwise emulate, docs/concepts/emulation.md): before/after of
the rankwise-bench programs, and the probe repeated on one layout.

Before/after: for each layout an emulated cluster is brought up, probed once with real Open MPI
(`rankwise probe --launcher`, one rank per host), and each benchmark is run by `rankwise optimize
--model` (the probed model) with `--repeats 1`, REPEATS times: each call runs the default
placement (the hostfile's first P hosts, in order) then rankwise's, so the runs are interleaved
A/B/A/B; the speed-up is the median of the REPEATS calls' speed-ups, with their min and max, and
the predicted speed-up (the predictor on the probed model) beside it. Placements are timed with
Open MPI's sequential mapper (optimize's verification), never a rankfile's core binding.

Probe figure: PROBES repeated probes of the first layout with a slow uplink: are the groups the
racks, is the slow NIC named, the healthy bandwidths against the shaped rates, the wall time.

With --capacities the table has the predicted speed-up without the model's duplex caps beside it
(the same model and placements). Layout 3 (16 hosts) runs only when named (--layout 3).

Run: .venv/bin/python studies/emulated/emulated_before_after.py [--repeats 3] [--probes 5] [--quick]
     [--only probe|ab] [--capacities] [--layout K ...] [--out DIR]
Needs root and network namespaces (exit 2 with the reason otherwise). Cost: 12 min on
2 shared cores at load 14-19 (--quick: one layout, 2 repeats, 2 probes). Every cluster is brought down.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from rankwise.model.anomalies import find_slow_links
from rankwise.emulate.system import Unsupported, check_supported
from rankwise.cluster.launch import mpi_environment
from rankwise.map.decision import predicted_speedup
from rankwise.model.model import Model
from rankwise.predict.predictor import PredictNetwork
from rankwise.predict.workload import workload_of
from rankwise.traffic.patterns import generate

RANKWISE = [sys.executable, "-m", "rankwise"]

# name, `emulate up` options, job size, the slow links (what the probe should name), what to expect
LAYOUTS = [
    ("2 racks x 4, NIC 200M, node-5 at 50M (slow NIC), non-blocking", 
     ["--racks", "2", "--nodes-per-rack", "4", "--nic-rate", "200M", "--degrade", "node:5:0.25"], 6),
    ("2 racks x 4 shuffled, NIC 200M, uplinks 400M (2:1), rack 1's at 100M (slow uplink)",
     ["--racks", "2", "--nodes-per-rack", "4", "--nic-rate", "200M", "--uplink-rate", "400M",
      "--degrade", "uplink:1:0.25", "--shuffle", "--seed", "3"], 4),
    ("3 racks x 4 shuffled, NIC 200M, uplinks 200M (4:1), node-1 at 50M",
     ["--racks", "3", "--nodes-per-rack", "4", "--nic-rate", "200M", "--uplink-rate", "200M",
      "--degrade", "node:1:0.25", "--shuffle", "--seed", "5"], 8),
    ("4 racks x 4 shuffled, NIC 100M, uplinks 100M (4:1), rack 2's at 25M, node-9 at 25M",
     ["--racks", "4", "--nodes-per-rack", "4", "--nic-rate", "100M", "--uplink-rate", "100M",
      "--degrade", "uplink:2:0.25", "--degrade", "node:9:0.25", "--shuffle", "--seed", "7"], 8,
     ["--timeout", "60"]),  # 16 ranks on 2 cores: at 10 s half the pairs timed out
]

PROBE_LAYOUT = ["--racks", "2", "--nodes-per-rack", "4", "--nic-rate", "200M", "--uplink-rate", "400M",
                "--degrade", "uplink:1:0.25", "--degrade", "node:2:0.25"]


def cli(*args, check=True, timeout=1200) -> subprocess.CompletedProcess:
    r = subprocess.run([*RANKWISE, *map(str, args)], capture_output=True, text=True, timeout=timeout,
                       env=mpi_environment(), stdin=subprocess.DEVNULL)
    if check and r.returncode != 0:
        raise SystemExit(f"emulated_before_after: rankwise {' '.join(map(str, args[:3]))} failed: "
                         f"{(r.stderr.strip().splitlines() or ['?'])[-1]}")
    return r


def benchmarks(p: int) -> list[tuple[str, list[str], list[str]]]:
    """(label, optimize's traffic options, the benchmark and its options) for a job of p ranks."""
    size = 256 * 1024
    groups = 2 if p % 2 == 0 else 1
    return [
        ("alltoall 256 KiB", ["--pattern", f"alltoall:ranks={p},bytes={size}"],
         ["alltoall", "--sizes", "256K", "--iterations", "5"]),
        (f"groups {groups}x{p // groups} 256 KiB", ["--pattern", f"groups:groups={groups},per_group={p // groups},"
                                                     f"bytes={size},link_bytes={size},skip=1,iterations=5,seed=0"],
         ["groups", "--groups", str(groups), "--sizes", "256K", "--link-bytes", str(size), "--skip", "1",
          "--iterations", "5", "--seed", "0"]),
    ]


def without_duplex(model: Path, pattern: str, before: list[str], after: list[str]) -> float:
    """The predicted speed-up of two placements (host per rank) from the probed model with its
    duplex caps cleared, the job costed as optimize costs it under Open MPI: what the stress
    test's duplex phase changes in optimize's prediction."""
    pnet = dataclasses.replace(PredictNetwork.from_model(Model.load(model)), duplex=None)
    index = {h: i for i, h in enumerate(pnet.names)}
    return predicted_speedup(workload_of(generate(pattern), mpi="openmpi"), pnet, np.array([index[h] for h in before]),
                             np.array([index[h] for h in after]))


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def before_after(out: Path, repeats: int, layouts, probe_options: list[str]) -> list[str]:
    duplex = "--capacities" in probe_options
    rows = ["| layout | job | benchmark | default hosts | rankwise hosts | speed-up median (min-max) | predicted | "
            + ("predicted without duplex caps | " if duplex else "") + "load |",
            "|---|---|---|---|---|---|---|" + ("---|" if duplex else "") + "---|"]
    for k, (label, options, p, *probe_extra) in layouts:
        d = out / f"layout{k}"
        name = f"hes{os.getpid() % 10000:x}{k}"[:12]
        try:
            cli("emulate", "up", "-o", d / "cluster", "--name", name, *options)
            c = d / "cluster"
            t0 = time.monotonic()
            cli("probe", "--launcher", f"{c}/mpirun --hostfile {c}/hostfile -np {len(hosts_of(c))}",
                "--sizes", "8,64K,1M", "--repetitions", "3", "--rounds", "2", *probe_options,
                *(probe_extra[0] if probe_extra else []), "-o", d / "net.rwm")
            print(f"layout {k}: probed in {time.monotonic() - t0:.0f} s", flush=True)
            for bench, traffic, program in benchmarks(p):
                speedups, predicted, apart, hosts = [], [], [], None
                for r in range(repeats):
                    o = d / f"{bench.split()[0]}-{r}"
                    cli("optimize", "--launcher", f"{c}/mpirun -np {p}", "--hostfile", c / "hostfile",
                        "--model", d / "net.rwm", *traffic, "--format", "openmpi", "--out", o, "--repeats", "1",
                        "--", *program)
                    row = (o / "verify.csv").read_text().splitlines()[1].split(",")
                    speedups.append(float(row[3]))
                    predicted.append(float(row[4]) if len(row) > 4 else float("nan"))
                    hosts = [line.split("=")[1].split()[0] for line in (o / "placement.openmpi").read_text()
                             .splitlines() if line.startswith("rank")]
                    if duplex:
                        apart.append(without_duplex(d / "net.rwm", traffic[1], hosts_of(c)[:p], hosts))
                default = hosts_of(c)[:p]
                line = (f"| {label} | {p} | {bench} | {','.join(h[5:] for h in default)} | "
                        f"{','.join(h[5:] for h in hosts)} | x{statistics.median(speedups):.2f} "
                        f"({min(speedups):.2f}-{max(speedups):.2f}) | x{statistics.median(predicted):.2f} | "
                        + (f"x{statistics.median(apart):.2f} | " if duplex else "") + f"{loadavg()} |")
                print(line, flush=True)
                rows.append(line)
        finally:
            cli("emulate", "down", d / "cluster", check=False)
    return rows


def hosts_of(cluster: Path) -> list[str]:
    return [line.split()[0] for line in (cluster / "hostfile").read_text().splitlines() if line.strip()]


def probe_repeat(out: Path, probes: int) -> list[str]:
    """The probe figure: groups = racks, slow NIC named, healthy bandwidths against the shaped rates."""
    d = out / "probe"
    name = f"hep{os.getpid() % 10000:x}"[:12]
    rows = ["| probe | wall s | groups | racks found | slow nodes named | rack mates Mbit/s (200) | "
            "across Mbit/s (100 shared by 4) | load |", "|---|---|---|---|---|---|---|---|"]
    racks = {f"node-{i}": i // 4 for i in range(8)}
    healthy = [h for h in racks if h != "node-2"]
    found_racks = named = 0
    try:
        cli("emulate", "up", "-o", d / "cluster", "--name", name, *PROBE_LAYOUT)
        c = d / "cluster"
        for k in range(probes):
            t0 = time.monotonic()
            cli("probe", "--launcher", f"{c}/mpirun --hostfile {c}/hostfile -np 8", "--sizes", "8,64K,1M",
                "--repetitions", "3", "--rounds", "2", "-o", d / f"p{k}.rwm")
            wall = time.monotonic() - t0
            m = Model.load(d / f"p{k}.rwm")
            g = dict(zip(m.names, m.groups().tolist()))
            ok = (len({g[h] for h in healthy}) == 2
                  and all((g[a] == g[b]) == (racks[a] == racks[b]) for a in healthy for b in healthy))
            slow = sorted(m.names[i] for i in find_slow_links(m).slow_nodes)
            idx = {n: i for i, n in enumerate(m.names)}
            inside = [m.bandwidth[idx[a], idx[b]] * 8e-6 for a in healthy for b in healthy
                      if a != b and racks[a] == racks[b]]
            across = [m.bandwidth[idx[a], idx[b]] * 8e-6 for a in healthy for b in healthy if racks[a] != racks[b]]
            found_racks += ok
            named += slow == ["node-2"]
            line = (f"| {k + 1} | {wall:.0f} | {[g[h] for h in sorted(g)]} | {'yes' if ok else 'no'} | "
                    f"{', '.join(slow) or '-'} | {np.median(inside):.0f} ({min(inside):.0f}-{max(inside):.0f}) | "
                    f"{np.median(across):.0f} ({min(across):.0f}-{max(across):.0f}) | {loadavg()} |")
            print(line, flush=True)
            rows.append(line)
    finally:
        cli("emulate", "down", d / "cluster", check=False)
    rows.append(f"\nracks found in {found_racks} of {probes}; node-2 (and only it) named slow in {named} of {probes}")
    print(rows[-1])
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--probes", type=int, default=5)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", choices=["probe", "ab"])
    ap.add_argument("--out", type=Path, default=Path("rankwise-emulated-study"))
    ap.add_argument("--capacities", action="store_true",
                    help="probe with the stress test too (shared links' capacities for the predictor)")
    ap.add_argument("--layout", type=int, action="append", choices=range(len(LAYOUTS)),
                    help="run only this before/after layout (0-based; repeatable; 3, of 16 hosts, only so)")
    a = ap.parse_args()
    try:
        check_supported()
    except Unsupported as e:
        print(f"emulated_before_after: {e}", file=sys.stderr)
        return 2
    a.out.mkdir(parents=True, exist_ok=True)
    chosen = a.layout or ([0] if a.quick else [0, 1, 2])
    layouts = [(k, LAYOUTS[k]) for k in chosen]
    repeats, probes = (2, 2) if a.quick else (a.repeats, a.probes)
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load {loadavg()}, {os.cpu_count()} cores")
    text = []
    if a.only != "probe":
        text += before_after(a.out, repeats, layouts, ["--capacities"] if a.capacities else [])
    if a.only != "ab":
        text += [""] + probe_repeat(a.out, probes)
    (a.out / "results.md").write_text("\n".join(text) + "\n")
    print(f"written {a.out / 'results.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
