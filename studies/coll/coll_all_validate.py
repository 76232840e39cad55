"""The predictor's cost of allreduce and allgather against SMPI: Open MPI's choice and the library's own.

For each platform (a shuffled-rack one with degraded nodes, a uniform one), allocation (16 and 32 ranks,
1 and 4 per node), operation and size, every candidate rankwise.coll.selection.decide scores is run under
SMPI 3.32 (CM02, no cross traffic, send and receive overheads o on eager messages,
rankwise.sim.smpi.overhead_settings): the passthrough as MPI_Allreduce / MPI_Allgather under
`smpi/coll-selector:ompi` (Open MPI's tuned choice), and the collectives library's binomial, knomial,
recursive_doubling, ring and hier (librankwise_coll linked --whole-archive, RANKWISE_COLL_<OP>=alg).
The program tests/engine/mpi/coll_times.c (compiled into a temporary folder) makes one untimed call (the
library's set-up: its communicator duplicate and node communicators), then starts every timed call on all
ranks at one instant (each rank sleeps until it) and reports the last rank's end minus that instant: what
the predictor predicts. Allreduce sums floats (4-byte elements, as rw_predict_library assumes).

Printed: per case the predicted and measured time of every candidate and the error; the median, 90th
percentile and maximum |error| per kind (Open MPI's, the library's); the chosen candidate against the
fastest measured one and against the measured passthrough (the issue's goal: never slower than the
`ompi` selector). Exit status 1 when the median error of either kind exceeds 10 % or a chosen candidate
is measured more than 2 % slower than the passthrough.

Run: .venv/bin/python studies/coll/coll_all_validate.py [--overhead 1e-6] [--quick] [--out DIR]; a few minutes
(--quick: the shuffled platform at 16 ranks only).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from rankwise.coll.selection import TuneOptions, decide
from rankwise.predict.predictor import PredictNetwork, SharedLink, placement
from rankwise.sim.platform import Degraded, PlatformSpec, generate
from rankwise.sim.smpi import overhead_settings, smpirun_command
from smpi_link import build_linked

SOURCE = Path(__file__).resolve().parents[2] / "tests" / "engine" / "mpi" / "coll_times.c"

SIZES = {"allreduce": [8, 64, 1024, 16384, 262144], "allgather": [8, 64, 1024, 16384, 65536]}
LIBRARY = ("binomial", "knomial", "recursive_doubling", "ring", "hier")


def build(tmp: Path) -> Path:
    return build_linked(SOURCE, tmp / "coll_times")


def hostfile(plat, nodes: int, rpn: int, path: Path) -> Path:
    names = [line.split()[0] for line in Path(plat.hostfile).read_text().splitlines() if line.strip()]
    path.write_text("".join(f"{names[i]}\n" * rpn for i in range(nodes)))
    return path


def measure(exe: Path, plat, hosts: Path, n: int, op: str, alg: str | None, sizes, overhead: float) -> dict[int, float]:
    """Measured seconds per size: alg None = the MPI's own (ompi selector)."""
    cfg = ("smpi/coll-selector:ompi",) + (overhead_settings(overhead, overhead) if overhead > 0 else ())
    cmd = smpirun_command(exe, [op, *map(str, sizes)], plat.platform_xml, hosts, n, cfg)
    env = {k: v for k, v in os.environ.items() if not k.startswith("RANKWISE_COLL_")}
    if alg is not None:
        env[f"RANKWISE_COLL_{op.upper()}"] = alg
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=env)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-600:])
    return {int(s): float(t) for s, t in (line.split() for line in out.stdout.splitlines() if line.strip())}


def subset(net: PredictNetwork, n: int) -> PredictNetwork:
    """The first n nodes, and the part of every shared link between them."""
    links = []
    for link in net.links:
        keep = link.pairs[(link.pairs[:, 0] < n) & (link.pairs[:, 1] < n)]
        if keep.size:
            links.append(SharedLink(link.name, link.capacity, keep))
    return PredictNetwork(net.names[:n], net.alpha[:n, :n], net.beta[:n, :n], inject=net.inject[:n],
                          eject=net.eject[:n], links=links)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--overhead", type=float, default=1e-6, help="send and receive overhead of eager messages, s")
    ap.add_argument("--quick", action="store_true", help="the shuffled platform at 16 ranks only")
    args = ap.parse_args()
    console = Console()
    tmp = args.out or Path(tempfile.mkdtemp(prefix="coll-all-validate-"))
    tmp.mkdir(parents=True, exist_ok=True)
    exe = build(tmp)
    specs = {
        "shuffled+degraded": PlatformSpec(racks=4, nodes_per_rack=8, cores=4, shuffle_racks=True, seed=5,
                                          degraded=[Degraded("node", 2, bw_factor=0.125, lat_factor=20.0),
                                                    Degraded("node", 9, bw_factor=0.125, lat_factor=20.0)]),
        "uniform": PlatformSpec(racks=4, nodes_per_rack=8, cores=4, seed=5),
    }
    allocations = [(16, 1), (4, 4)] if args.quick else [(16, 1), (4, 4), (32, 1), (8, 4)]
    if args.quick:
        specs = {k: v for k, v in specs.items() if k.startswith("shuffled")}
    table = Table(title=f"allreduce, allgather: predicted vs SMPI, o = {args.overhead * 1e6:g} us",
                  title_justify="left")
    for col in ("platform", "ranks", "op", "bytes", "candidate", "predicted", "SMPI", "error", "chosen"):
        table.add_column(col, justify="right" if col in ("ranks", "bytes", "predicted", "SMPI", "error") else "left")
    errors: dict[str, list[float]] = {"Open MPI": [], "library": []}
    worst = []  # (chosen measured / passthrough measured - 1)
    misses = 0
    for pname, spec in specs.items():
        plat = generate(spec, tmp / pname)
        full = PredictNetwork.from_ground_truth(plat.out_dir)
        for nodes, rpn in allocations:
            n = nodes * rpn
            net = subset(full, nodes).with_overheads(args.overhead, args.overhead)
            hosts = hostfile(plat, nodes, rpn, tmp / f"{pname}-{nodes}x{rpn}.hosts")
            node_of = placement(rpn, nodes)
            for op, sizes in SIZES.items():
                measured = {None: measure(exe, plat, hosts, n, op, None, sizes, args.overhead)}
                for alg in LIBRARY:
                    measured[alg] = measure(exe, plat, hosts, n, op, alg, sizes, args.overhead)
                for nbytes in sizes:
                    d = decide(net, node_of, op, nbytes, 0, TuneOptions())
                    got = {}
                    for i, c in enumerate(d.candidates):
                        t = measured[None if i == 0 else c.algorithm][nbytes]
                        got[i] = t
                        err = c.time / t - 1
                        if np.isfinite(err):
                            errors["Open MPI" if i == 0 else "library"].append(abs(err))
                        label = f"MPI: {c.algorithm}" if i == 0 else c.algorithm
                        table.add_row(pname, f"{n} ({rpn}/node)", op, str(nbytes), label, f"{c.time * 1e6:.2f} us",
                                      f"{t * 1e6:.2f} us", f"{err * 100:+.1f}%", "*" if i == d.chosen else "")
                    worst.append(got[d.chosen] / got[0] - 1)
                    if got[d.chosen] > 1.05 * min(got.values()):
                        misses += 1
    console.print(table)
    ok = True
    for kind, errs in errors.items():
        med = float(np.median(errs))
        ok &= med <= 0.10
        console.print(f"{kind}: |error| median {med * 100:.1f} %, 90th percentile "
                      f"{np.percentile(errs, 90) * 100:.1f} %, max {max(errs) * 100:.1f} % over {len(errs)} runs")
    worst_a = np.array(worst)
    console.print(f"chosen vs the measured passthrough: worst {worst_a.max() * 100:+.1f} %, mean "
                  f"{worst_a.mean() * 100:+.1f} % over {len(worst)} cases (negative = faster); chosen more than 5 % "
                  f"slower than the fastest measured candidate: {misses} case(s)")
    console.print(f"files in {tmp}")
    return 0 if ok and worst_a.max() <= 0.02 else 1


if __name__ == "__main__":
    sys.exit(main())
