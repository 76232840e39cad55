"""What the collectives library's in-job measurement costs (RANKWISE_COLL_PROBE=1,
engine/mpi/coll/decision/probe.c; docs/concepts/collectives.md, "In-job measurement").

SMPI: uniform non-blocking fat trees in racks of 8 nodes (rankwise.sim.platform), 4, 8, 16 and
32 nodes, 1 and 2 ranks per node; the program tests/engine/mpi/coll_probe.c linked with the static
library. Per case: the measurement's simulated seconds (max over ranks, from a barrier to the
network on every rank), the floor, and the simulation's wall seconds. The floor is what the
ping-pongs alone take when every round lasts as long as its slowest pair:

    floor = T x (REPS + 1) x 2 x (alpha_slow + sum over sizes m of rtt_slow(m))

T tournament rounds (N - 1 for even N, N for odd), REPS timed repetitions and one untimed, both
directions in each, each direction a "ready" message (one latency) then a ping-pong per size,
rtt_slow(m) = 2 alpha_slow + m / bandwidth of the slowest pair (inter-rack when there are
several racks).

Open MPI on localhost: every rank its own node (the program's "ranks" mode), 2, 4 and 8 ranks
(oversubscribed beyond the cores): wall seconds of the measurement, median of 5 runs.

Run: .venv/bin/python studies/coll/coll_probe_cost.py [--nodes 4,8,16,32] [--no-mpi]
Cost: about 10 s on 2 cores.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from rankwise.util import paths
from rankwise.cluster.launch import mpi_environment
from rankwise.sim.platform import PlatformSpec, generate
from rankwise.sim.smpi import smpirun_command

ROOT = Path(__file__).resolve().parents[2]
ENGINE = ROOT / "engine"
PROGRAM = ROOT / "tests" / "engine" / "mpi" / "coll_probe.c"
LIB = paths.PACKAGE_DIR / "_lib"
INCLUDES = [f"-I{ENGINE / d}" for d in ("include", "src", "src/predict", "mpi/coll")]
SIZES = (8, 32768)  # probe.c's SMALL and LARGE
REPS = 5  # probe.c's REPS


def compile_smpi(out: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "SMPI_PRETEND_CC"}
    subprocess.run(["smpicc", "-O2", *INCLUDES, str(PROGRAM), f"-L{LIB / 'smpi'}", "-Wl,--whole-archive",
                    "-lrankwise_coll", "-Wl,--no-whole-archive", "-lm", "-o", str(out)], check=True, env=env)


def compile_mpi(out: Path) -> None:
    """The library's sources with the program (rwc_probe_pnet is hidden in the .so)."""
    srcs = sorted((ENGINE / "mpi" / "coll").rglob("*.c")) + sorted((ENGINE / "mpi" / "reorder").glob("*.c"))
    src = ENGINE / "src"
    objects = []
    for c in sorted(src.glob("*.c")) + sorted((src / "coll").glob("*.c")) + sorted((src / "predict").glob("*.c")):
        obj = out.parent / f"{c.parent.name}_{c.stem}.o"
        subprocess.run(["mpicc", "-O2", *INCLUDES, f"-I{src / 'coll'}", "-c",
                        str(c), "-o", str(obj)], check=True)
        objects.append(obj)
    subprocess.run(["mpicc", "-O2", *INCLUDES, *map(str, srcs), *map(str, objects), str(PROGRAM), "-ldl", "-lm",
                    "-o", str(out)], check=True)


def cost_of(stdout: str) -> tuple[int, float]:
    m = re.search(r"^coll_probe: nodes (\d+) ranks \d+ cost (\S+) identical 1$", stdout, re.M)
    if not m:
        sys.exit(f"coll_probe gave no cost (or ranks disagreed):\n{stdout[-2000:]}")
    return int(m.group(1)), float(m.group(2))


def floor(gen, n: int) -> float:
    rounds = n - 1 if n % 2 == 0 else n
    slow = np.unravel_index(np.argmax(gen.alpha + 1 / gen.bandwidth), gen.alpha.shape)
    a, bw = gen.alpha[slow], gen.bandwidth[slow]
    return rounds * (REPS + 1) * 2 * (a + sum(2 * a + m / bw for m in SIZES))


def smpi_rows(exe: Path, work: Path, node_counts: list[int]) -> list[tuple]:
    rows = []
    for n in node_counts:
        spec = PlatformSpec(racks=max(1, n // 8), nodes_per_rack=min(n, 8), cores=2)
        gen = generate(spec, work / f"p{n}")
        for per_node in (1, 2):
            hostfile = work / f"hosts{n}x{per_node}"
            hostfile.write_text("".join(f"{h}\n" for h in gen.nodes for _ in range(per_node)))
            cmd = smpirun_command(exe, [], gen.platform_xml, hostfile, n * per_node)
            t0 = time.perf_counter()
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=600,
                               env={k: v for k, v in os.environ.items() if k != "SMPI_PRETEND_CC"})
            wall = time.perf_counter() - t0
            if r.returncode:
                sys.exit(r.stderr[-2000:])
            nodes, cost = cost_of(r.stdout)
            rows.append((nodes, per_node, cost, floor(gen, n), wall))
    return rows


def mpi_rows(exe: Path, counts: list[int]) -> list[tuple]:
    rows = []
    for n in counts:
        costs = []
        for _ in range(5):
            r = subprocess.run(["mpirun", "-np", str(n), "--oversubscribe", str(exe), "ranks"], capture_output=True,
                               text=True, env=mpi_environment(), timeout=120)
            if r.returncode:
                sys.exit(r.stderr[-2000:])
            costs.append(cost_of(r.stdout)[1])
        rows.append((n, float(np.median(costs)), min(costs), max(costs)))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", default="4,8,16,32")
    ap.add_argument("--no-mpi", action="store_true")
    args = ap.parse_args()
    console = Console()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        compile_smpi(work / "coll_probe_smpi")
        t = Table(title="In-job measurement under SMPI (uniform fat tree, racks of 8)")
        for col in ("nodes", "ranks/node", "cost (ms, simulated)", "floor (ms)", "cost / floor", "wall (s)"):
            t.add_column(col, justify="right")
        for nodes, per, cost, fl, wall in smpi_rows(work / "coll_probe_smpi", work,
                                                    [int(x) for x in args.nodes.split(",")]):
            t.add_row(str(nodes), str(per), f"{cost * 1e3:.3f}", f"{fl * 1e3:.3f}", f"{cost / fl:.2f}", f"{wall:.2f}")
        console.print(t)
        if args.no_mpi or not shutil.which("mpirun"):
            return
        compile_mpi(work / "coll_probe_mpi")
        t = Table(title="In-job measurement, Open MPI localhost, every rank a node (5 runs)")
        for col in ("ranks", "median (ms)", "min (ms)", "max (ms)"):
            t.add_column(col, justify="right")
        for n, med, lo, hi in mpi_rows(work / "coll_probe_mpi", [2, 4, 8]):
            t.add_row(str(n), f"{med * 1e3:.3f}", f"{lo * 1e3:.3f}", f"{hi * 1e3:.3f}")
        console.print(t)


if __name__ == "__main__":
    main()
