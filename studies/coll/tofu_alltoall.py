"""Long all-to-alls on a torus and on fat trees: the collectives library's symmetric all-to-all with
injection-rate control (Ajima, "Topology Awareness in the Tofu Interconnect Series": the uniformly overlaid
symmetrical pattern) against its pairwise all-to-all, every SMPI all-to-all pinned, and the predictor.

For each platform (a 3-D torus `torus:X,Y,Z`; a fat tree of racks whose uplinks are oversubscribed 4:1; the same
fat tree not oversubscribed), one rank per node, simulated with SMPI 3.32 under rankwise's deterministic
settings and a 1 us send and receive overhead per eager message, the program tests/engine/mpi/alltoall_times.c
(linked with librankwise_coll.a; every timed call starts on all ranks at one simulated instant, the time is the
last rank's end) exchanges 1 MiB and more per rank pair:

- `pairwise`, `symmetric`: the library's, forced with RANKWISE_COLL_ALLTOALL. The symmetric one's cap on
  concurrent sends per rank is what the library takes from a model with the platform's capacities
  (rw_a2a_cap on the ground truth's node caps and shared links, per size), passed as
  RANKWISE_COLL_ALLTOALL_CAP;
- `smpi:<alg>`: SMPI's own all-to-all pinned with `smpi/alltoall:<alg>` (reference; no goal);
- `predicted`: rankwise's predictor (rw_sched_library "alltoall" pairwise / symmetric) on the ground truth;
- `bound`: no all-to-all can end sooner: the most loaded shared resource (a node's link, a rack uplink, a
  torus link) carrying all its bytes at full speed. pairwise / bound is the most any algorithm can gain.

Printed per platform and size: the times, symmetric's speed-up over pairwise, the bound, the fastest pinned
SMPI all-to-all, the predictions' errors; then the goals (issue 12): symmetric >= 1.2x faster than pairwise
where shared links are oversubscribed (the torus, the 4:1 fat tree), never more than 2 % slower where they are
not (the 1:1 fat tree), predictions within 15 % median. Exit status 1 when a goal fails.

Run: .venv/bin/python studies/coll/tofu_alltoall.py [--torus 4,4,4] [--racks 8 --nodes-per-rack 8
--oversubscription 4] [--sizes 1048576,4194304] [--quick] (--quick: a 4x4x2 torus, 4 racks of 8, 1 MiB, fewer
SMPI algorithms; under a minute). The full run takes a few minutes on 2 shared cores.
"""

from __future__ import annotations

import argparse
import ctypes as C
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from rankwise.predict.predictor import PredictNetwork, collective_options, simulate_schedule, placement, predict_lib
from rankwise.sim.platform import PlatformSpec, generate
from rankwise.sim.smpi import overhead_settings, smpirun_command
from smpi_link import build_linked

SOURCE = Path(__file__).resolve().parents[2] / "tests" / "engine" / "mpi" / "alltoall_times.c"
# SMPI 3.32's all-to-alls that run with one rank per node (pair and rdb want a power of two)
SMPI_ALLTOALLS = ("basic_linear", "ring", "pair", "bruck", "rdb", "2dmesh", "3dmesh", "pair_light_barrier",
                  "ring_light_barrier", "mvapich2_scatter_dest", "ompi", "mpich")
QUICK_ALLTOALLS = ("basic_linear", "ring", "pair", "ompi")
OVERHEAD = 1e-6
LIBRARY = ("pairwise", "symmetric")


def build(tmp: Path) -> Path:
    return build_linked(SOURCE, tmp / "alltoall_times")


def hostfile(plat, n: int, path: Path) -> Path:
    names = [line.split()[0] for line in Path(plat.hostfile).read_text().splitlines() if line.strip()]
    path.write_text("".join(f"{h}\n" for h in names[:n]))
    return path


def _with_net(net: PredictNetwork, n: int, fn):
    so = predict_lib()
    cnet = net._to_c(placement(1, n))
    try:
        return fn(so, cnet)
    finally:
        so.rw_pnet_free(cnet)


def model_cap(net: PredictNetwork, n: int, nbytes: int) -> int:
    """The cap the library takes from a model with net's node caps and shared links (rw_a2a_cap), n ranks
    on the first n nodes, nbytes per pair."""
    def cap(so, cnet):
        so.rw_a2a_cap.argtypes = [C.c_void_p, C.c_double]
        so.rw_a2a_cap.restype = C.c_int32
        return int(so.rw_a2a_cap(cnet, float(nbytes)))
    return _with_net(net, n, cap)


def predict_library(net: PredictNetwork, n: int, alg: str, nbytes: int) -> float:
    """The predictor's time of the library's all-to-all `alg` (rw_sched_library) on the first n nodes."""
    def run(so, cnet):
        so.rw_sched_library.argtypes = [C.c_void_p, C.c_char_p, C.c_char_p, C.c_double, C.c_void_p,
                                        C.POINTER(C.c_void_p)]
        sched = C.c_void_p()
        opt = collective_options(0, 8192, 4, 0.0, 65536)
        rc = so.rw_sched_library(cnet, b"alltoall", alg.encode(), float(nbytes), C.byref(opt), C.byref(sched))
        if rc != 0:
            raise RuntimeError(f"rw_sched_library alltoall {alg}: status {rc}")
        try:
            return simulate_schedule(net, placement(1, n), sched, True).time
        finally:
            so.rw_sched_free(sched)
    return _with_net(net, n, run)


def bound(net: PredictNetwork, n: int, nbytes: int) -> float:
    """Seconds the most loaded resource needs for its share of an all-to-all of nbytes per pair among the
    first n nodes: every node's link ((n - 1) x nbytes each way), every shared link (its pairs' bytes)."""
    worst = 0.0
    if net.inject is not None:
        worst = max(worst, float(np.max((n - 1) * nbytes / net.inject[:n])))
    for link in net.links:
        inside = np.count_nonzero((link.pairs[:, 0] < n) & (link.pairs[:, 1] < n))
        worst = max(worst, inside * nbytes / link.capacity)
    return worst


def measure(exe: Path, plat, hosts: Path, n: int, variant: str, sizes, cap: int | None = None) -> dict[int, float]:
    """Simulated seconds per size: variant `smpi:<alg>` pins SMPI's, else the library's."""
    cfg = overhead_settings(OVERHEAD, OVERHEAD)
    env = {k: v for k, v in os.environ.items() if not k.startswith("RANKWISE_COLL_") and k != "RANKWISE_MODEL"}
    if variant.startswith("smpi:"):
        cfg += (f"smpi/alltoall:{variant[5:]}",)
    else:
        env["RANKWISE_COLL_ALLTOALL"] = variant
        if cap:
            env["RANKWISE_COLL_ALLTOALL_CAP"] = str(cap)
    cmd = smpirun_command(exe, list(map(str, sizes)), plat.platform_xml, hosts, n, cfg)
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, env=env)
    if out.returncode != 0:
        raise RuntimeError(f"{variant}: {out.stderr[-600:]}")
    return {int(s): float(t) for s, t in (line.split() for line in out.stdout.splitlines() if line.strip())}


def run_platform(console: Console, name: str, spec: PlatformSpec, n: int, sizes, algs, tmp: Path, exe: Path):
    """Rows (bytes, times by variant, predictions by algorithm, the bound, cap) of one platform."""
    folder = name.split(",")[0].replace(" ", "-").replace(":", "-")  # SimGrid takes no blank in a path
    plat = generate(spec, tmp / folder)
    hosts = hostfile(plat, n, tmp / f"{folder}.hosts")
    net = PredictNetwork.from_ground_truth(plat.out_dir).with_overheads(OVERHEAD, OVERHEAD)
    caps = {b: model_cap(net, n, b) for b in sizes}
    t0 = time.time()
    times = {"pairwise": measure(exe, plat, hosts, n, "pairwise", sizes), "symmetric": {}}
    for b in sizes:  # the library's cap from a model depends on the size
        times["symmetric"].update(measure(exe, plat, hosts, n, "symmetric", [b], caps[b]))
    for a in algs:
        try:
            times[f"smpi:{a}"] = measure(exe, plat, hosts, n, f"smpi:{a}", sizes)
        except (RuntimeError, subprocess.TimeoutExpired) as exc:
            console.print(f"[yellow]{name}: smpi/alltoall:{a} did not run ({str(exc).splitlines()[-1][:120]})")
    table = Table(title=f"{name}: MPI_Alltoall, {n} ranks (one per node), symmetric's cap from the platform's "
                        f"capacities, simulated ({time.time() - t0:.0f} s of wall time)", title_justify="left")
    for col in ("bytes/pair", "pairwise", "error", "symmetric", "cap", "error", "speed-up", "bound",
                "pairwise/bound", "best pinned SMPI"):
        table.add_column(col, justify="left" if col == "best pinned SMPI" else "right")
    rows = []
    for b in sizes:
        got = {k: v[b] for k, v in times.items()}
        pred = {a: predict_library(net, n, a, b) for a in LIBRARY}
        low = bound(net, n, b)
        pinned = {k: v for k, v in got.items() if k.startswith("smpi:")}
        best = min(pinned, key=pinned.get) if pinned else None
        rows.append((b, got, pred, low, caps[b]))
        table.add_row(f"{b / 2**20:g} MiB", f"{got['pairwise'] * 1e3:.3f} ms",
                      f"{(pred['pairwise'] / got['pairwise'] - 1) * 100:+.1f}%", f"{got['symmetric'] * 1e3:.3f} ms",
                      str(caps[b]),
                      f"{(pred['symmetric'] / got['symmetric'] - 1) * 100:+.1f}%",
                      f"x{got['pairwise'] / got['symmetric']:.3f}", f"{low * 1e3:.3f} ms",
                      f"x{got['pairwise'] / low:.3f}", f"{best[5:]} {pinned[best] * 1e3:.3f} ms" if best else "-")
    console.print(table)
    ranked = sorted((v[sizes[-1]], k) for k, v in times.items())
    console.print(f"{name}, {sizes[-1] / 2**20:g} MiB per pair, every variant: " +
                  ", ".join(f"{k} {t * 1e3:.3f}" for t, k in ranked) + " (ms)")
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--torus", default="4,4,4", help="X,Y,Z of the torus (one rank per node)")
    ap.add_argument("--racks", type=int, default=8)
    ap.add_argument("--nodes-per-rack", type=int, default=8)
    ap.add_argument("--oversubscription", type=float, default=4.0, help="fat tree: rack uplink oversubscription")
    ap.add_argument("--sizes", default="1048576,4194304", help="bytes per rank pair, comma-separated")
    ap.add_argument("--quick", action="store_true", help="4x4x2 torus, 4 racks of 8, 1 MiB, fewer SMPI algorithms")
    ap.add_argument("--out", type=Path, default=None, help="keep the platforms and the program here")
    args = ap.parse_args()
    console = Console(width=160)
    try:
        sizes = [int(s) for s in args.sizes.split(",")]
        dims = [int(x) for x in ("4,4,2" if args.quick else args.torus).split(",")]
    except ValueError:
        console.print(f"tofu_alltoall: error: --sizes {args.sizes!r} and --torus {args.torus!r} take integers")
        return 2
    if args.quick:
        sizes = sizes[:1]
    if min(sizes) < 1 or len(dims) != 3 or min(dims) < 1 or args.racks < 2 or args.nodes_per_rack < 1 or \
            args.oversubscription <= 1:
        console.print("tofu_alltoall: error: sizes >= 1 byte, a torus X,Y,Z, 2 racks or more and an "
                      "oversubscription above 1 are needed")
        return 2
    tmp = args.out or Path(tempfile.mkdtemp(prefix="tofu-alltoall-"))
    tmp.mkdir(parents=True, exist_ok=True)
    exe = build(tmp)
    racks = 4 if args.quick else args.racks
    npr = args.nodes_per_rack
    algs = QUICK_ALLTOALLS if args.quick else SMPI_ALLTOALLS
    over = args.oversubscription
    torus = "x".join(map(str, dims))
    # (name, spec, ranks, shared links oversubscribed)
    platforms = [(f"torus {torus}", PlatformSpec(topology="torus:" + ",".join(map(str, dims)), cores=1, seed=1),
                  int(np.prod(dims)), True),
                 (f"fat tree {racks}x{npr}, uplinks {over:g}:1",
                  PlatformSpec(racks=racks, nodes_per_rack=npr, cores=1, oversubscription=over, seed=1), racks * npr,
                  True),
                 (f"fat tree {racks}x{npr}, uplinks 1:1",
                  PlatformSpec(racks=racks, nodes_per_rack=npr, cores=1, seed=1), racks * npr, False)]
    over_rows, flat_rows, errors = [], [], []
    for name, spec, n, oversubscribed in platforms:
        rows = run_platform(console, name, spec, n, sizes, algs, tmp, exe)
        for b, got, pred, low, _ in rows:
            (over_rows if oversubscribed else flat_rows).append((name, b, got["pairwise"] / got["symmetric"],
                                                                 got["pairwise"] / low))
            errors += [abs(pred[a] / got[a] - 1) for a in LIBRARY]
    goals = []
    for name, b, speedup, most in over_rows:
        why = "" if speedup >= 1.2 else f"; no algorithm can gain more than x{most:.3f} there (pairwise / bound)"
        goals.append((f"{name}, {b / 2**20:g} MiB: symmetric >= 1.2x faster than pairwise (x{speedup:.3f}){why}",
                      speedup >= 1.2))
    worst = min(s for *_, s, _ in flat_rows)
    goals.append((f"not oversubscribed: symmetric never more than 2 % slower than pairwise "
                  f"(time against pairwise's, worst row: {(1 / worst - 1) * 100:+.2f} %)", 1 / worst <= 1.02))
    med = float(np.median(errors))
    goals.append((f"predictions within 15 % median (|error| median {med * 100:.2f} %, worst "
                  f"{max(errors) * 100:.2f} %)", med <= 0.15))
    for text, ok in goals:
        console.print(f"{'PASS' if ok else 'FAIL'}  {text}")
    console.print(f"files in {tmp}")
    return 0 if all(ok for _, ok in goals) else 1


if __name__ == "__main__":
    sys.exit(main())
