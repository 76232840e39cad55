"""Inside the node, before/after: rankwise's placement on nodes and NUMA domains against block
placement over cores, measured on the simulated domain-aware cluster (issue 14's figure).

Platform (`rankwise sim platform --node-synthetic 'pack:2 numa:2 core:4 pu:1'`, docs/concepts/simulation.md):
a fat tree of 2 racks x 4 nodes, every node two packages of two NUMA domains of four cores, one
SimGrid host per domain. Lone pairs see 0.2 us / 50 GB/s in a domain, 0.3 us / 25 GB/s between the
domains of a package, 0.7 us / 20 GB/s between packages, 2.7 us / 12.5 GB/s over the network; a
domain's and a package's links are shared by the flows leaving them.

Placements of one job, measured with the benchmark programs under SMPI (deterministic):
  block     ranks in order fill the cores of the first nodes in order (a launcher binding to
            cores in order, no rankfile);
  nodes     rankwise's node choice, each node's ranks on its cores in rank order (what rankwise
            gave before it knew the inside of a node; printed to separate the two steps);
  rankwise  `rankwise map --node-synthetic` (node choice, then rw_node_place on the domains),
            its Open MPI rankfile read back core by core onto the domain hosts.
Model: the SMPI probe of the platform, one rank per node (LIGHT_SIM_PROBE).
Jobs: Getmansky et al. 2015's synthetic groups (shuffled ranks; groups of a domain and of a
package), 3-D stencils (4x4x4 on 4 nodes, 8x4x4 on 8 nodes; mode 1d: 26 neighbours one block
each, 3d: x, y, z in turn with 1, 3 and 9 blocks). Printed per job and size: times, speed-ups,
and where the bytes go (share crossing domains inside a node, share crossing the network).
Goal: rankwise >= 1.2x faster than block for every groups row and every 3-D stencil row.

Run: .venv/bin/python studies/node/node_domains.py [--quick] [--keep DIR]; exit status 1 when a goal
is missed. Cost: about 1 min (--quick: 10 s) on 2 cores.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rankwise.model.node import NodeTopology
from rankwise.traffic.patterns import format_size, generate
from rankwise.measure.probe import LIGHT_SIM_PROBE
from rankwise.cluster.benchmark_programs import run_benchmark
from rankwise.sim.domains import block_cores, hosts_of_cores, load_domains, probe_network

NODE = "pack:2 numa:2 core:4 pu:1"
GOAL = 1.2
RANKWISE = Path(sys.executable).parent / "rankwise"


@dataclass
class Job:
    label: str
    pattern: str  # rankwise pattern spec (the traffic the mapper sees)
    args: list[str]  # the benchmark program and its arguments
    table: str | None = None


def stencil(grid: str, mode: str) -> Job:
    return Job(f"stencil {grid}, {mode}", f"stencil3d:grid={grid},bytes=64K,mode={mode}",
               ["stencil", "--grid", grid, "--mode", mode, "--sizes", "64K,1M", "--iterations", "2"], mode)


def groups(n_groups: int, per_group: int, what: str) -> Job:
    # D as in bench.py's Getmansky shapes (256K, 1M): at 64K the pairwise MPI_Alltoallv's P - 1
    # steps of empty messages, not the groups' data, set the time (docs/results/node.md).
    return Job(f"groups {n_groups}x{per_group} ({what})",
               f"groups:groups={n_groups},per_group={per_group},bytes=1M,link_bytes=64K,iterations=2",
               ["groups", "--groups", str(n_groups), "--sizes", "256K,1M", "--link-bytes", "64K", "--iterations", "2"])


def jobs(quick: bool) -> list[Job]:
    """The 3-D grids: 64 ranks on 4 nodes, 128 on 8 (two shapes), and 16 / 32 ranks on one / two
    nodes, where the network does not set the time and the domains' share shows alone."""
    if quick:
        return [groups(16, 4, "a domain each"), stencil("4x4x4", "1d"), stencil("4x4x4", "3d"),
                stencil("2x2x4", "1d")]
    return [groups(16, 4, "a domain each"), groups(8, 8, "a package each"), groups(32, 4, "a domain each")] + [
        stencil(grid, mode) for grid in ("2x2x4", "4x4x2", "4x4x4", "8x4x4", "8x8x2") for mode in ("1d", "3d")]


def read_rankfile(path: Path, topology: NodeTopology) -> tuple[list[str], np.ndarray, np.ndarray]:
    """(node names, node of each rank, logical core of each rank) from an Open MPI rankfile
    `rank R=HOST slot=P:C` (C: the core's index within package P)."""
    core_at = {(int(p), int(c)): k for k, (p, c) in enumerate(zip(topology.package_of, topology.core_in_package))}
    placed = {}
    for line in path.read_text().splitlines():
        if not line.startswith("rank "):
            continue
        left, slot = line.split(" slot=")
        rank, host = left[len("rank "):].split("=")
        p, c = slot.split(":")
        placed[int(rank)] = (host, core_at[int(p), int(c)])
    names = sorted({h for h, _ in placed.values()}, key=lambda h: int(h.split("-")[1]))
    node_of = np.array([names.index(placed[r][0]) for r in range(len(placed))])
    cores = np.array([placed[r][1] for r in range(len(placed))])
    return names, node_of, cores


def level_shares(dp, matrix, hosts: list[str]) -> tuple[float, float]:
    """(share of the bytes between domains of one node, share over the network)."""
    index = {h: k for k, h in enumerate(dp.hosts)}
    h = np.array([index[x] for x in hosts])
    src, dst, v = matrix.src, matrix.dst, matrix.bytes.astype(float)
    lv = dp.level[h[src], h[dst]]
    total = v.sum()
    return float(v[(lv == 2) | (lv == 3)].sum() / total), float(v[lv == 4].sum() / total)


def place_and_run(dp, topology, model: Path, job: Job, rankfile: Path) -> dict:
    """The three placements of a job and their times: {name: (hosts, sizes, median us)}, map's wall."""
    matrix = generate(job.pattern)
    t0 = time.monotonic()
    subprocess.run([RANKWISE, "map", "--model", model, "--hostfile", dp.out_dir / "nodes.hostfile", "--pattern",
                    job.pattern, "--node-synthetic", NODE, "--format", "openmpi", "-o", rankfile],
                   check=True, capture_output=True)
    map_wall = time.monotonic() - t0
    names, node_of, cores = read_rankfile(rankfile, topology)
    placements = {
        "block": hosts_of_cores(dp, dp.nodes, *block_cores(matrix.n_ranks, dp.cores_per_node)),
        "nodes": hosts_of_cores(dp, names, node_of, _in_order(node_of)),
        "rankwise": hosts_of_cores(dp, names, node_of, cores),
    }
    return {name: (hosts, *run(dp, job, hosts)) for name, hosts in placements.items()}, matrix, map_wall


def run(dp, job: Job, hosts: list[str]) -> tuple[list[int], np.ndarray]:
    res = run_benchmark(job.args[0], job.args[1:], sim=dp.platform_xml, hosts=hosts)
    tab = res[job.table] if job.table else res.table
    return tab.size.tolist(), tab.median_us


def why_3d(dp, topology, model: Path, out: Path) -> None:
    """The 3d mode's time against the bytes it sends between domains and over the network, for
    placements that cut more than block: block's order already keeps the heavy z and y exchanges
    (9 and 3 blocks) inside domains and nodes."""
    job = stencil("4x4x4", "3d")
    placed, matrix, _ = place_and_run(dp, topology, model, job, out / "rankfile-why")
    rows = {"block": placed["block"][0], "rankwise": placed["rankwise"][0]}
    placed_1d, _, _ = place_and_run(dp, topology, model, stencil("4x4x4", "1d"), out / "rankfile-why-1d")
    rows["rankwise for the 1d traffic"] = placed_1d["rankwise"][0]
    node, core = block_cores(matrix.n_ranks, dp.cores_per_node)
    rng = np.random.default_rng(1)
    for v in np.unique(node):
        members = np.flatnonzero(node == v)
        core[members] = rng.permutation(core[members])
    rows["block nodes, cores shuffled"] = hosts_of_cores(dp, dp.nodes, node, core)
    print()
    print("why 3d does not gain: stencil 4x4x4, mode 3d (1, 3, 9 blocks along x, y, z), 1 MiB blocks")
    print("| placement | bytes between domains | bytes over the network | time (us) |")
    print("|---|---|---|---|")
    for name, hosts in rows.items():
        inside, network = level_shares(dp, matrix, hosts)
        sizes, us = run(dp, job, hosts)
        print(f"| {name} | {inside:.0%} | {network:.0%} | {float(us[sizes.index(1 << 20)]):.1f} |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer jobs")
    ap.add_argument("--keep", type=Path, default=None, help="folder for the platform, model and rankfiles")
    args = ap.parse_args()
    topology = NodeTopology.load(synthetic=NODE)
    rows, misses = [], []
    with tempfile.TemporaryDirectory() as tmp_name:
        out = args.keep or Path(tmp_name)
        out.mkdir(parents=True, exist_ok=True)
        subprocess.run([RANKWISE, "sim", "platform", "-o", out / "platform", "--racks", "2", "--nodes-per-rack", "4",
                        "--node-synthetic", NODE], check=True, capture_output=True)
        dp = load_domains(out / "platform")
        # The model: the network by node, then the inside of one node (all are built alike).
        probe_network(dp, out / "network.rwm", LIGHT_SIM_PROBE)
        model = out / "model.rwm"
        probe = subprocess.run([RANKWISE, "node", "probe", "--sim", out / "platform", "--sizes", "8,64K,1M",
                                "--rounds", "3", "--model", out / "network.rwm", "-o", model],
                               check=True, capture_output=True, text=True)
        for job in jobs(args.quick):
            placed, matrix, map_wall = place_and_run(dp, topology, model, job, out / f"rankfile-{len(rows)}")
            shares = {name: level_shares(dp, matrix, p[0]) for name, p in placed.items()}
            for i, size in enumerate(placed["block"][1]):
                t = {name: float(p[2][i]) for name, p in placed.items()}
                x = t["block"] / t["rankwise"]
                rows.append((job.label, size, t, x, shares, map_wall))
                if not x >= GOAL:
                    misses.append(f"{job.label} {format_size(size)}: x{x:.2f} < x{GOAL}")
        print(f"node {NODE!r}, fat tree 2 racks x 4 nodes; the model's inside of a node from "
              "`rankwise node probe --sim`:")
        print("\n".join("  " + line for line in probe.stdout.splitlines()[:5]))
        print("times per iteration (us, slowest rank, SMPI)")
        print("| job | block size | block | rankwise nodes, cores in order | rankwise | speed-up (nodes only) "
              "| bytes between domains: block / rankwise | over the network: block / rankwise | map (s) |")
        print("|---|---|---|---|---|---|---|---|---|")
        for label, size, t, x, sh, wall in rows:
            print(f"| {label} | {format_size(size)} | {t['block']:.1f} | {t['nodes']:.1f} | {t['rankwise']:.1f} | "
                  f"x{x:.2f} (x{t['block'] / t['nodes']:.2f}) | {sh['block'][0]:.0%} / {sh['rankwise'][0]:.0%} | "
                  f"{sh['block'][1]:.0%} / {sh['rankwise'][1]:.0%} | {wall:.1f} |")
        if not args.quick:
            why_3d(dp, topology, model, out)
    print(f"goal: rankwise >= x{GOAL} faster than block for every groups and 3-D stencil row: "
          + ("met" if not misses else "MISSED"))
    for miss in misses:
        print(f"goal missed: {miss}")
    return 1 if misses else 0


def _in_order(node_of: np.ndarray) -> np.ndarray:
    """Each node's ranks on its cores 0, 1, ... in rank order."""
    cores = np.zeros(node_of.size, dtype=np.int64)
    for v in np.unique(node_of):
        members = np.flatnonzero(node_of == v)
        cores[members] = np.arange(members.size)
    return cores


if __name__ == "__main__":
    sys.exit(main())
