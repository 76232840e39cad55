"""The probe under a real MPI (Open MPI) on this machine: 2, 4 and 8 ranks on localhost.

`mpirun -np K --oversubscribe` with --group-by rank, so that every rank counts as a node and the
"network" is Open MPI's shared-memory transport between processes of one host. Smaller settings
than the default (sizes 8,1K,64K,1M). Per K: wall time, pairs measured / missing, median alpha
(µs), median bandwidth (GB/s) and median jitter ((max - min) / mean of a pair's timings, median
over sizes, then over pairs). With more ranks than cores the ranks share the cores, which shows
in the numbers.

Exit status 1 when a run fails or leaves a pair missing.
Run: .venv/bin/python studies/probe/probe_real_mpi.py [--ranks 2,4,8] [--sizes 8,1K,64K,1M]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from rankwise.util.errors import RankwiseError
from rankwise.model.model import MEASURED, MISSING
from rankwise.measure.probe import ProbeOptions, probe_launcher

console = Console(width=None if sys.stdout.isatty() else 124, highlight=False)


def mpi_version() -> str:
    try:
        out = subprocess.run(["mpirun", "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return "mpirun not found"
    return out.splitlines()[0] if out else "unknown"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ranks", default="2,4,8", help="rank counts K (default 2,4,8)")
    ap.add_argument("--sizes", default="8,1K,64K,1M", help="message sizes (default 8,1K,64K,1M)")
    ap.add_argument("--repetitions", type=int, help="timed ping-pongs per pair, size and round (engine default 5)")
    ap.add_argument("--rounds", type=int, help="schedule repetitions (engine default 3)")
    ap.add_argument("--out", type=Path, help="keep the models here")
    ap.add_argument("--progress", choices=("auto", "yes", "no"), default="auto")
    args = ap.parse_args()
    progress = sys.stderr.isatty() if args.progress == "auto" else args.progress == "yes"
    try:
        ks = [int(k) for k in args.ranks.split(",") if k.strip()]
    except ValueError:
        raise SystemExit(f"--ranks: '{args.ranks}' is not a list like 2,4,8") from None

    tmp = None
    if args.out:
        out = args.out
        out.mkdir(parents=True, exist_ok=True)
    else:
        tmp = tempfile.TemporaryDirectory(prefix="rankwise-mpi-")
        out = Path(tmp.name)

    console.print(
        f"[bold]rankwise probe on real MPI[/] — {time.strftime('%Y-%m-%d %H:%M')}, {mpi_version()}, "
        f"{os.cpu_count()} cores, sizes {args.sizes}"
    )
    options = ProbeOptions(sizes=args.sizes, group_by="rank", repetitions=args.repetitions, rounds=args.rounds)
    table = Table(title="Real Open MPI on localhost: mpirun -np K --oversubscribe, group-by rank (every rank a node)")
    for col in ("K", "wall s", "probe s", "pairs", "missing", "alpha med µs", "alpha range µs",
                "bw med GB/s", "bw range GB/s", "jitter med"):
        table.add_column(col, justify="right")
    ok = True
    for k in ks:
        launcher = f"mpirun -np {k} --oversubscribe"
        console.print(f"K={k}: {launcher} ...")
        t0 = time.monotonic()
        try:
            model = probe_launcher(launcher, out / f"k{k}.model", options, show_progress=progress)
        except RankwiseError as exc:
            wall = time.monotonic() - t0
            console.print(f"  [red]failed[/] after {wall:.1f} s: {exc}")
            table.add_row(str(k), f"{wall:.1f}", "-", "FAILED", *["-"] * 6)
            ok = False
            continue
        wall = time.monotonic() - t0
        off = ~np.eye(model.n_nodes, dtype=bool)
        meas = (model.state == MEASURED) & off
        missing = int(((model.state == MISSING) & off).sum())
        alpha, bw, jit = model.alpha[meas] * 1e6, model.bandwidth[meas] / 1e9, model.pair_jitter[meas]
        if missing or meas.sum() != k * (k - 1):
            ok = False
        s = model.settings
        console.print(
            f"  {model.n_nodes} nodes ({', '.join(model.names)}), repetitions={s.repetitions}, rounds={s.rounds}, "
            f"warmup={s.warmup}; wall {wall:.2f} s"
        )
        table.add_row(
            str(k), f"{wall:.2f}", f"{model.duration:.3f}", f"{meas.sum()}/{k * (k - 1)}", str(missing),
            f"{np.nanmedian(alpha):.3g}", f"{np.nanmin(alpha):.3g}..{np.nanmax(alpha):.3g}",
            f"{np.nanmedian(bw):.3g}", f"{np.nanmin(bw):.3g}..{np.nanmax(bw):.3g}", f"{np.nanmedian(jit):.3g}",
        )
    console.print(table)
    console.print(
        "  wall s: the whole mpirun; probe s: Model.duration (measurement only); jitter: (max - min) / mean\n"
        "  of a pair's timings per size, median over sizes, then median over pairs"
    )
    console.print("all runs succeeded" if ok else "[red]a run failed or left pairs missing[/]")
    if tmp:
        tmp.cleanup()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
