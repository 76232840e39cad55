"""Mapping quality and speed: one table per part,
columns instance, algorithm, quality, seconds, peak MB.

1. 3-D 7-point stencil (non-periodic), 64 ranks per node, uniform 2-level
   tree (racks of 32 nodes): the fraction of stencil edges that cross nodes,
   for 4,096 / 32,768 / 262,144 ranks on 64 / 512 / 4,096 nodes. Goals (the
   cube-block optima): <= 0.200 in <= 1 s, <= 0.226 in <= 3 s, <= 0.238 in
   <= 10 s, reached twice: from the named pattern (stencil blocks) and from
   the bare matrix, no pattern name (auto: rankwise recognises a stencil
   numbered in rank order). The pure partitioning method (multilevel,
   METIS recursive bisection + refinement) is printed beside them, and
   Debian's Scotch (scotch_gpart into node-sized parts) when installed.
2. A measured-looking model: 512 nodes in 16 racks of 32, noisy latencies
   (intra-rack 10-12 us, inter-rack 30-40 us), node order shuffled, no rack
   labels: does the hierarchy recover the racks; for groups (all-to-all
   inside groups of 64 ranks) and a 3-D stencil, cross-rack bytes against the
   minimum possible, and Scotch mapping onto a `deco` target built from the
   same latencies (amk_grf + scotch_gmap) beside ours, on Scotch's own
   measure (bytes x latency distance) and on ours (total time).
   Goal: ours at least 5 % better than Scotch's on its own measure, and on
   time where the placement can change it (with 1 MiB inside groups of 64 on
   8-slot nodes the bytes crossing nodes are the same for every placement
   that keeps a group on 8 nodes, and dominate the time).
3. Heuristics against exhaustive search over 1,000 random instances of <= 9
   ranks: mean and worst gap to the optimum; none worse than the start.
   Goal: mean within 2 %.

Every instance runs in a fresh child process, so peak MB is its own
(ru_maxrss). Run: .venv/bin/python studies/map/map_quality.py [--quick] [--out DIR]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from rankwise.traffic import patterns
from rankwise.map.mapping import Network, cut, map_ranks, placement_cost
from rankwise.traffic.matrix import CommMatrix

console = Console(width=None if sys.stdout.isatty() else 140, highlight=False)
SCOTCH = shutil.which("scotch_gpart") is not None and shutil.which("scotch_gmap") is not None


# --------------------------------------------------------------- helpers
def in_child(fn, *args):
    """Run fn(*args) in a fresh process; (result, peak MB of that process)."""
    ctx = mp.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)

    def target():
        try:
            out = fn(*args)
        except Exception as exc:  # reported in the row, not a crash of the bench
            out = exc
        child.send((out, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024))

    p = ctx.Process(target=target)
    p.start()
    result = parent.recv()
    p.join()
    return result


def tree_network(n_nodes: int, slots: int, rack: int = 32) -> Network:
    r = np.arange(n_nodes) // rack
    same = r[:, None] == r[None, :]
    alpha = np.where(same, 2e-6, 6e-6)
    beta = np.where(same, 1e-10, 1e-10)
    np.fill_diagonal(alpha, 0.0)
    np.fill_diagonal(beta, 0.0)
    return Network([f"n{i}" for i in range(n_nodes)], [slots] * n_nodes, alpha, beta)


def bare(m: CommMatrix) -> CommMatrix:
    return CommMatrix(m.n_ranks, m.src, m.dst, m.msgs, m.bytes)  # no pattern, no source


def write_grf(sym: CommMatrix, path: Path, weights: np.ndarray | None = None,
              vertex_weights: np.ndarray | None = None) -> None:
    """Scotch source graph: version, counts, base+flags, then per vertex
    [vload] degree ([eload] neighbour)*."""
    n = sym.n_ranks
    rows = np.diff(np.concatenate([[0], np.cumsum(np.bincount(sym.src, minlength=n))]))
    flags = f"0{'1' if weights is not None else '0'}{'1' if vertex_weights is not None else '0'}"
    lines = ["0", f"{n}\t{sym.nnz}", f"0\t{flags}"]
    starts = np.concatenate([[0], np.cumsum(rows)])
    for v in range(n):
        nb = sym.dst[starts[v]:starts[v + 1]]
        parts = [str(int(vertex_weights[v]))] if vertex_weights is not None else []
        parts.append(str(len(nb)))
        if weights is not None:
            w = weights[starts[v]:starts[v + 1]]
            parts += [f"{int(a)}\t{int(b)}" for a, b in zip(w, nb)]
        else:
            parts += [str(int(b)) for b in nb]
        lines.append("\t".join(parts))
    path.write_text("\n".join(lines) + "\n")


def read_map(path: Path, n: int) -> np.ndarray:
    rows = path.read_text().split()
    count = int(rows[0])
    vals = np.array(rows[1:1 + 2 * count], dtype=np.int64).reshape(-1, 2)
    out = np.full(n, -1, dtype=np.int64)
    out[vals[:, 0]] = vals[:, 1]
    return out


# ----------------------------------------------------------- 1. stencil
GOALS = {16: (0.200, 1.0), 32: (0.226, 3.0), 64: (0.238, 10.0)}


def stencil_instance(side: int, how: str):
    m = patterns.generate(f"stencil3d:grid={side}x{side}x{side},bytes=1K")
    n_nodes = side ** 3 // 64
    net = tree_network(n_nodes, 64)
    if how == "pattern":
        t = time.monotonic()
        r = map_ranks(m, net)
    elif how == "bare matrix (auto)":
        m = bare(m)
        t = time.monotonic()
        r = map_ranks(m, net, use_pattern=False)
    else:
        m = bare(m)
        t = time.monotonic()
        r = map_ranks(m, net, algorithm="multilevel", use_pattern=False)
    seconds = time.monotonic() - t
    c, total = cut(m, r.node_of, by="msgs")
    return c / total, seconds, r.algorithm


def scotch_stencil(side: int):
    m = patterns.generate(f"stencil3d:grid={side}x{side}x{side},bytes=1K").symmetrized()
    parts = side ** 3 // 64
    with tempfile.TemporaryDirectory() as tmp:
        g, out = Path(tmp) / "g.grf", Path(tmp) / "map"
        write_grf(m, g)
        t = time.monotonic()
        subprocess.run(["scotch_gpart", str(parts), str(g), str(out)], check=True, capture_output=True,
                       timeout=300)
        seconds = time.monotonic() - t
        part = read_map(out, m.n_ranks)
    c, total = cut(m, part.astype(np.int32), by="msgs")
    return c / total, seconds, int(np.bincount(part).max())


def part_stencil(quick: bool) -> bool:
    table = Table(title="1. 3-D 7-point stencil, 64 ranks per node: fraction of edges across nodes",
                  title_justify="left")
    for col in ("instance", "algorithm", "cut fraction", "seconds", "peak MB", "goal"):
        table.add_column(col, justify="left" if col in ("instance", "algorithm", "goal") else "right")
    ok = True
    for side in (16, 32) if quick else (16, 32, 64):
        n = side ** 3
        inst = f"{n:,} ranks / {n // 64:,} nodes"
        goal_cut, goal_s = GOALS[side]
        for how in ("pattern", "bare matrix (auto)", "bare matrix (multilevel)"):
            res, mb = in_child(stencil_instance, side, how)
            if isinstance(res, Exception):
                table.add_row(inst, how, "error", "", "", str(res)[:60])
                ok = False
                continue
            frac, s, alg = res
            goal = ""
            if how != "bare matrix (multilevel)":
                met = frac <= goal_cut + 5e-4 and s <= goal_s
                ok &= met
                goal = f"<= {goal_cut} in <= {goal_s:g} s: {'PASS' if met else 'FAIL'}"
            elif side == 64:  # the general method against KaHIP (0.258) and Scotch (0.289)
                met = frac < 0.258 and s <= 10.0
                ok &= met
                goal = f"< 0.258 (KaHIP) in <= 10 s: {'PASS' if met else 'FAIL'}"
            table.add_row(inst, f"{how}: {alg}", f"{frac:.4f}", f"{s:.2f}", f"{mb:.0f}", goal)
        if SCOTCH:
            res, mb = in_child(scotch_stencil, side)
            if isinstance(res, Exception):
                table.add_row(inst, "scotch_gpart", "error", "", "", str(res)[:60])
            else:
                frac, s, biggest = res
                over = f"largest part {biggest} (> 64: over capacity)" if biggest > 64 else "within capacity"
                table.add_row(inst, "scotch_gpart (Debian 7.0.3)", f"{frac:.4f}", f"{s:.2f}", f"{mb:.0f}", over)
    console.print(table)
    return ok


# ------------------------------------------------------------- 2. racks
def rack_network(seed: int = 11):
    """512 nodes, 16 racks of 32, noisy latencies, shuffled node order."""
    rng = np.random.default_rng(seed)
    n, rack_size = 512, 32
    true_rack = rng.permutation(np.arange(n) // rack_size)  # node i sits in rack true_rack[i]
    same = true_rack[:, None] == true_rack[None, :]
    alpha = np.where(same, rng.uniform(10e-6, 12e-6, (n, n)), rng.uniform(30e-6, 40e-6, (n, n)))
    alpha = (alpha + alpha.T) / 2
    np.fill_diagonal(alpha, 0.5e-6)
    beta = np.full((n, n), 1e-10)
    np.fill_diagonal(beta, 2e-11)
    return Network([f"n{i}" for i in range(n)], [8] * n, alpha, beta), true_rack


def cross_rack(m: CommMatrix, node_of, rack) -> int:
    r = rack[node_of]
    return int(m.bytes[r[m.src] != r[m.dst]].sum())


def rack_traffic(kind: str) -> tuple[CommMatrix, float]:
    """The traffic and its least possible cross-rack share (racks hold 256 ranks)."""
    if kind.startswith("groups"):
        # 64 groups of 64 (4 per rack); only the chain links between
        # consecutive groups must cross: 15 rack boundaries, both ways.
        inside = kind.split()[-1]
        m = patterns.generate(f"groups:groups=64,per_group=64,bytes={inside},link_bytes=64K")
        return m, 15 * 2 * 65536 / m.total_bytes
    # 16^3 stencil in racks of 256 = 8x8x4 boxes: 1 + 1 + 3 cut planes of 256 edges
    m = patterns.generate("stencil3d:grid=16x16x16,bytes=1M")
    return m, 5 * 256 / (3 * 16 * 16 * 15)


def latency_bytes(m: CommMatrix, net: Network, node_of) -> float:
    """Scotch's own measure on a deco target: bytes x distance (here the
    measured latency) summed over the pairs that leave a node."""
    lat = Network(net.names, net.slots, np.zeros_like(net.alpha), net.alpha * (1 - np.eye(net.n_nodes)))
    return placement_cost(m, lat, node_of)


def racks_instance(kind: str):
    net, rack = rack_network()
    groups, _ = net.hierarchy(0.0)
    found = any(len(set(g.tolist())) == 16 and len(set(zip(g.tolist(), rack.tolist()))) == 16 for g in groups)
    m, minimum = rack_traffic(kind)
    t = time.monotonic()
    r = map_ranks(m, net, use_pattern=False)
    seconds = time.monotonic() - t
    return (found, placement_cost(m, net, r.node_of), latency_bytes(m, net, r.node_of),
            cross_rack(m, r.node_of, rack) / m.total_bytes, minimum, seconds, r.algorithm)


def scotch_racks(kind: str):
    net, rack = rack_network()
    m, _ = rack_traffic(kind)
    sym = m.symmetrized()
    n = net.n_nodes
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        # target: complete graph of the nodes, edge load = latency in 0.1 us, vertex load = slots
        src, dst = np.nonzero(~np.eye(n, dtype=bool))
        tg = CommMatrix(n, src, dst, np.ones(src.size, np.int64), np.ones(src.size, np.int64))
        lat = np.maximum(1, np.round(net.alpha[tg.src, tg.dst] * 1e7)).astype(np.int64)
        write_grf(tg, tmp / "t.grf", weights=lat, vertex_weights=np.full(n, 8))
        write_grf(sym, tmp / "g.grf", weights=np.maximum(1, sym.bytes // 1024))
        t = time.monotonic()
        subprocess.run(["amk_grf", str(tmp / "t.grf"), str(tmp / "t.tgt")], check=True, capture_output=True,
                       timeout=600)
        subprocess.run(["scotch_gmap", str(tmp / "g.grf"), str(tmp / "t.tgt"), str(tmp / "map")], check=True,
                       capture_output=True, timeout=600)
        seconds = time.monotonic() - t
        node_of = read_map(tmp / "map", m.n_ranks).astype(np.int32)
    load = np.bincount(node_of, minlength=n)
    return (placement_cost(m, net, node_of), latency_bytes(m, net, node_of),
            cross_rack(m, node_of, rack) / m.total_bytes, seconds, int(load.max()))


def part_racks() -> bool:
    table = Table(title="2. 512 nodes in 16 racks of 32 (noisy, shuffled, unlabelled), 8 slots each, 4,096 ranks",
                  title_justify="left")
    for col in ("traffic", "method", "time (s)", "latency x bytes", "cross-rack", "minimum", "seconds",
                "peak MB", "note"):
        table.add_column(col, justify="left" if col in ("traffic", "method", "note") else "right")
    ok = True
    for kind in ("groups 1M", "groups 64K", "stencil"):
        res, mb = in_child(racks_instance, kind)
        if isinstance(res, Exception):
            table.add_row(kind, "rankwise", "error", "", "", "", "", "", str(res)[:60])
            ok = False
            continue
        found, obj, lb, cross, minimum, s, alg = res
        table.add_row(kind, f"rankwise ({alg})", f"{obj:.4g}", f"{lb:.4g}", f"{100 * cross:.2f} %",
                      f"{100 * minimum:.2f} %", f"{s:.2f}", f"{mb:.0f}",
                      f"racks recovered from the numbers: {'yes' if found else 'NO'}")
        ok &= found
        if SCOTCH:
            sres, smb = in_child(scotch_racks, kind)
            if isinstance(sres, Exception):
                table.add_row(kind, "scotch deco", "error", "", "", "", "", "", str(sres)[:60])
                continue
            sobj, slb, scross, ss, biggest = sres
            better, faster = 1 - lb / slb, 1 - obj / sobj
            # Scotch's measure always; time too except where 1 MiB inside
            # groups crosses nodes whatever the placement (then no placement
            # can be 5 % faster: the bandwidth term is fixed).
            met = better >= 0.05 and (faster >= 0.05 or kind == "groups 1M")
            ok &= met
            table.add_row(kind, "scotch_gmap, amk_grf deco", f"{sobj:.4g}", f"{slb:.4g}", f"{100 * scross:.2f} %",
                          "", f"{ss:.2f}", f"{smb:.0f}",
                          f"ours {100 * better:.1f} % lower latency x bytes, {100 * faster:.1f} % lower "
                          f"time ({'PASS' if met else 'FAIL'}: >= 5 %); Scotch's fullest node {biggest}")
    console.print(table)
    return ok


# ------------------------------------------------------ 3. vs exhaustive
def heuristics(count: int):
    algs = ("greedy", "refine", "anneal", "auto")
    gaps = {a: [] for a in algs}
    worse = {a: 0 for a in algs}
    seconds = {a: 0.0 for a in algs}
    for i in range(count):
        rng = np.random.default_rng(10_000 + i)
        nn = int(rng.integers(2, 6))
        alpha = rng.uniform(1e-6, 5e-5, (nn, nn))
        beta = rng.uniform(1e-10, 2e-9, (nn, nn))
        np.fill_diagonal(alpha, 1e-7)
        np.fill_diagonal(beta, 1e-11)
        net = Network([f"n{k}" for k in range(nn)], rng.integers(1, 4, nn), alpha, beta)
        n = int(min(net.total_slots, rng.integers(2, 10)))
        mask = rng.random((n, n)) < rng.uniform(0.1, 0.9)
        np.fill_diagonal(mask, False)
        src, dst = np.nonzero(mask)
        m = CommMatrix(n, src, dst, rng.integers(1, 20, src.size), rng.integers(0, 1 << 20, src.size))
        best = map_ranks(m, net, algorithm="exhaustive", selection="all", min_gain=0).cost
        for a in algs:
            t = time.monotonic()
            r = map_ranks(m, net, algorithm=a, selection="all", min_gain=0)
            seconds[a] += time.monotonic() - t
            gaps[a].append(r.cost / best - 1 if best > 0 else 0.0)
            worse[a] += r.cost > r.block_cost * (1 + 1e-12)
    return gaps, worse, seconds


def part_heuristics(count: int) -> bool:
    (gaps, worse, seconds), mb = in_child(heuristics, count)
    table = Table(title=f"3. heuristics vs exhaustive, {count} random instances of <= 9 ranks", title_justify="left")
    for col in ("algorithm", "mean gap", "worst gap", "at optimum", "worse than start", "seconds (all)", "goal"):
        table.add_column(col, justify="left" if col in ("algorithm", "goal") else "right")
    ok = True
    for a, g in gaps.items():
        g = np.array(g)
        met = g.mean() <= 0.02 and worse[a] == 0
        ok &= met
        table.add_row(a, f"{100 * g.mean():.3f} %", f"{100 * g.max():.2f} %", f"{np.mean(g < 1e-9):.1%}",
                      str(worse[a]), f"{seconds[a]:.2f}", "mean <= 2 %: " + ("PASS" if met else "FAIL"))
    console.print(table)
    console.print(f"(peak {mb:.0f} MB)")
    return ok


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="skip 262,144 ranks; 200 instances")
    args = ap.parse_args()
    ok = part_stencil(args.quick)
    ok &= part_racks()
    ok &= part_heuristics(200 if args.quick else 1000)
    console.print("all goals met" if ok else "[red]some goals missed[/red]")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
