"""Mapping on a simulated torus: the virtual torus embedding and RMATT-style annealing, before/after.

Platforms: `torus:4,4,Z` (rankwise.sim.torus), Z = 1, 2, 4, one rank per node, uniform links.

1. Virtual torus (Ajima, "Topology Awareness in the Tofu Interconnect Series"): a ring and a
   periodic 2-D and 3-D grid of ranks mapped with `--algorithm torus` on the network the ground
   truth states and on the probed model's (the engine reads the neighbours off the latencies,
   src/map/embed.c); the router hops between logical neighbours, block placement (rank i on node i) vs
   rankwise's. Nothing is simulated here: hops are read off the torus's routes.
2. Annealing from a (src, dst, bytes) list (Ajima: NAS CG +7-9 % on Tofu): a CG-like pattern —
   ranks in a PR x PC grid, per iteration log2(PC) recursive-doubling exchanges along each row
   (the row sums of q = A p) and one exchange with the transposed rank (the vector transpose),
   all of B bytes — is probed (isolated SMPI probe), mapped with `--algorithm anneal` on the
   measured model, and replayed under SMPI by a small program (written and compiled into a
   temporary folder) in three placements: block (rank i on node i), a shuffled one (what a busy
   scheduler hands out) and rankwise's annealed one. Every rank starts at one instant; the time
   is the slowest rank's over the iterations.

Goal: every logical torus one hop throughout (all the shapes here allow it), on the ground truth's
network and on the probed model's, and the annealed placement at least as fast as block placement
in simulated time on every torus; exit status 1 when missed.

Run: .venv/bin/python studies/map/torus_mapping.py [--bytes 1M]; about 15 s on 2 cores.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from rankwise.traffic import patterns
from rankwise.map.mapping import Network, map_ranks, placement_cost
from rankwise.traffic.matrix import CommMatrix
from rankwise.traffic.patterns import parse_size
from rankwise.measure.probe import ProbeOptions, probe_sim
from rankwise.sim.platform import PlatformSpec, generate
from rankwise.sim.smpi import smpirun_command

REPLAY = r"""
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* replay FILE ITER: every iteration posts the receives and sends of the (src dst bytes) lines
 * that concern this rank at once and waits for them; prints the slowest rank's time. */
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    FILE *f = fopen(argv[1], "r");
    int iters = atoi(argv[2]);
    int n = 0, cap = 1024;
    long *src = malloc(cap * sizeof *src), *dst = malloc(cap * sizeof *dst), *len = malloc(cap * sizeof *len);
    long s, d, b, most = 1;
    while (f && fscanf(f, "%ld %ld %ld", &s, &d, &b) == 3) {
        if (s != rank && d != rank)
            continue;
        if (n == cap) {
            cap *= 2;
            src = realloc(src, cap * sizeof *src), dst = realloc(dst, cap * sizeof *dst);
            len = realloc(len, cap * sizeof *len);
        }
        src[n] = s, dst[n] = d, len[n] = b, n++;
        if (b > most)
            most = b;
    }
    if (f)
        fclose(f);
    char *buf = SMPI_SHARED_MALLOC(most);
    char *rbuf = SMPI_SHARED_MALLOC(most);
    MPI_Request *req = malloc((n + 1) * sizeof *req);
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime() + 1e-3;
    MPI_Bcast(&start, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    double wait = start - MPI_Wtime();
    struct timespec ts = {(time_t)wait, (long)((wait - (time_t)wait) * 1e9)};
    nanosleep(&ts, NULL);
    for (int it = 0; it < iters; it++) {
        int k = 0;
        for (int i = 0; i < n; i++)
            if (dst[i] == rank)
                MPI_Irecv(rbuf, (int)len[i], MPI_BYTE, (int)src[i], it, MPI_COMM_WORLD, &req[k++]);
        for (int i = 0; i < n; i++)
            if (src[i] == rank)
                MPI_Isend(buf, (int)len[i], MPI_BYTE, (int)dst[i], it, MPI_COMM_WORLD, &req[k++]);
        MPI_Waitall(k, req, MPI_STATUSES_IGNORE);
    }
    double took = MPI_Wtime() - start, last = 0;
    MPI_Reduce(&took, &last, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%.9f\n", last);
    MPI_Finalize();
    return 0;
}
"""


def cg_like(rows: int, cols: int, nbytes: int, iterations: int = 1) -> CommMatrix:
    """The point-to-point traffic of a CG-like solver on a rows x cols grid (row-major ranks;
    cols a power of two, cols = rows or 2 rows): recursive doubling along each row, then the
    exchange with the transposed position (for cols = 2 rows, the grid read as rows x rows of
    column pairs)."""
    pairs = set()
    for r in range(rows):
        for c in range(cols):
            me = r * cols + c
            step = 1
            while step < cols:
                pairs.add((me, r * cols + (c ^ step)))
                step *= 2
            if cols == rows:
                partner = c * cols + r
            else:  # column pairs: (r, 2k + j) <-> (k, 2r + j)
                k, j = divmod(c, 2)
                partner = k * cols + 2 * r + j
            if partner != me:
                pairs.add((me, partner))
    src, dst = np.array(sorted(pairs)).T
    n = rows * cols
    msgs = np.full(src.size, iterations, dtype=np.int64)
    return CommMatrix(n, src.astype(np.int32), dst.astype(np.int32), msgs, msgs * nbytes,
                      source=f"CG-like {rows}x{cols}, {nbytes} B per exchange")


def hops(torus, node_of, m: CommMatrix) -> np.ndarray:
    return np.array([torus.hop_count(int(node_of[s]), int(node_of[d])) for s, d in zip(m.src, m.dst)])


def ground_truth_network(gp) -> Network:
    return Network(gp.nodes, np.ones(len(gp.nodes), dtype=np.int32), gp.alpha, 1.0 / gp.bandwidth)


_MODELS: dict[Path, object] = {}


def probed(gp, path: Path):
    """The platform's model from an isolated SMPI probe (3 sizes), probed once per run."""
    if path not in _MODELS:
        _MODELS[path] = probe_sim(gp.platform_xml, path,
                                  ProbeOptions(mode="isolated", sizes="8,64K,1M", repetitions=2, rounds=1),
                                  show_progress=False)
    return _MODELS[path]


def replayer(tmp: Path) -> Path:
    exe = tmp / "replay"
    if not exe.exists():
        (tmp / "replay.c").write_text(REPLAY)
        subprocess.run(["smpicc", "-O2", "-o", str(exe), str(tmp / "replay.c")], check=True,
                       capture_output=True, text=True)
    return exe


def virtual_torus(out: Path, tmp: Path, misses: list[str]) -> list[str]:
    exe = replayer(tmp)
    lines = ["| platform | logical torus | block: max / mean hops | rankwise torus, ground truth: max / mean hops "
             "| rankwise torus, probed model: max / mean hops | simulated: block -> probed model's (us) |",
             "|---|---|---|---|---|---|"]
    for z in (1, 2, 4):
        gp = generate(PlatformSpec(topology=f"torus:4,4,{z}", cores=1), out / f"torus-4x4x{z}")
        t, n = gp.spec.shape, len(gp.nodes)
        nets = (ground_truth_network(gp), Network.from_model(probed(gp, out / f"torus-4x4x{z}.rwm")))
        cases = [(f"ring of {n}", patterns.ring(n, 1 << 20, bidirectional=True)),
                 (f"2-D 4x{4 * z}", patterns.stencil2d((4, 4 * z), periodic=True, nbytes=1 << 20))]
        if z > 1:
            cases.append((f"2-D {4 * z}x4", patterns.stencil2d((4 * z, 4), periodic=True, nbytes=1 << 20)))
            cases.append((f"3-D 4x4x{z}", patterns.stencil3d((4, 4, z), periodic=True, nbytes=1 << 20)))
        if z == 4:
            cases.append(("2-D 8x8", patterns.stencil2d((8, 8), periodic=True, nbytes=1 << 20)))
        for name, m in cases:
            before = hops(t, np.arange(n), m)
            row = f"| 4x4x{z} | {name} | {before.max()} / {before.mean():.2f} |"
            for net, what in zip(nets, ("ground truth", "probed model")):
                node_of = map_ranks(m, net, algorithm="torus", min_gain=0.0).node_of
                after = hops(t, node_of, m)
                if after.max() != 1:  # every shape here allows one hop
                    misses.append(f"{name} on 4x4x{z} ({what}): {after.max()} hops")
                row += f" {after.max()} / {after.mean():.2f} |"
            # 4 rounds of 1 MiB exchanges with every neighbour at once, simulated
            block, mapped = (replay(exe, gp, m, v, 4, tmp) for v in (np.arange(n), node_of))
            if mapped > block * 1.0001:
                misses.append(f"{name} on 4x4x{z}: the virtual torus slower than block placement")
            lines.append(row + f" {block * 1e6:.1f} -> {mapped * 1e6:.1f} (x{block / mapped:.2f}) |")
    return lines


def replay(exe: Path, gp, m: CommMatrix, node_of, iterations: int, tmp: Path) -> float:
    traffic = tmp / "traffic.txt"
    per = m.bytes // m.msgs
    traffic.write_text("".join(f"{s} {d} {b}\n" for s, d, b in zip(m.src, m.dst, per)))
    hostfile = tmp / "hosts"
    hostfile.write_text("".join(gp.nodes[int(v)] + "\n" for v in node_of))
    cmd = smpirun_command(exe, [str(traffic), str(iterations)], gp.platform_xml, hostfile, m.n_ranks)
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=900, cwd=tmp)
    if res.returncode != 0:
        raise SystemExit(f"replay failed: {res.stderr[-500:]}")
    return float(res.stdout.split()[-1])


def annealing(out: Path, nbytes: int, tmp: Path, misses: list[str]) -> list[str]:
    exe = replayer(tmp)
    lines = ["| platform | pattern | placement | mapping cost: sum over messages (us) | simulated (us) | vs block | mean hops |",
             "|---|---|---|---|---|---|---|"]
    iterations = 4
    for z, (rows, cols) in ((2, (4, 8)), (4, (8, 8))):
        gp = generate(PlatformSpec(topology=f"torus:4,4,{z}", cores=1), out / f"torus-4x4x{z}")
        t, n = gp.spec.shape, len(gp.nodes)
        model = probed(gp, out / f"torus-4x4x{z}.rwm")
        net = Network.from_model(model)
        m = cg_like(rows, cols, nbytes, iterations)
        shuffled = np.random.default_rng(3).permutation(n)
        annealed = map_ranks(m, net, algorithm="anneal", min_gain=0.0, seed=1).node_of
        base = None
        for name, node_of in (("block", np.arange(n)), ("shuffled", shuffled), ("rankwise anneal", annealed)):
            predicted = placement_cost(m, net, node_of)  # the objective `time`: a sum, not a makespan
            took = replay(exe, gp, m, node_of, iterations, tmp)
            base = base or took
            if name == "rankwise anneal" and took > base:
                misses.append(f"annealed CG-like on 4x4x{z} slower than block")
            lines.append(f"| 4x4x{z} | CG-like {rows}x{cols}, {nbytes >> 10} KiB | {name} | {predicted * 1e6:.1f} | "
                         f"{took * 1e6:.1f} | {base / took:.3f}x | {hops(t, node_of, m).mean():.2f} |")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bytes", default="1M", help="bytes per CG-like exchange")
    ap.add_argument("--out", type=Path, default=None, help="folder for the platforms (default: a temporary one)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        out = args.out or tmp
        misses: list[str] = []
        for line in virtual_torus(out, tmp, misses):
            print(line)
        print()
        for line in annealing(out, parse_size(args.bytes), tmp, misses):
            print(line)
    for miss in misses:
        print(f"goal missed: {miss}")
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
