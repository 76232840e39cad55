"""Model fidelity: how faithful a *probed* model is to the network, over many random platforms.

For each seed, rankwise.sim.random_platform draws a platform (a two- or three-level fat tree with
racks dealt in shuffled order, oversubscribed, slow and congested uplinks; a dragonfly; a 3-D torus;
degraded NICs with varied bandwidth and latency factors; a link whose bandwidth walks over time)
and writes its ground truth with every fault at its element (faults.json). The platform is probed
as a user would, `rankwise probe --sim platform.xml --ranks-per-node R --capacities`, and the
model is scored against the ground truth (rankwise.sim.fidelity): lone-pair latency and bandwidth
errors, NIC caps, shared-link capacities, groups vs racks (adjusted Rand index), and each fault
named at the right element (NIC, shared link, varying link) with false positives counted.
Ground truth only scores: nothing here feeds it to the probe.

Targets (issue 21): ARI median >= 0.98 and min >= 0.95; every fault named at the right element,
at most one false positive per platform; lone-pair bandwidth within 5 % and latency within 10 %
of the truth (median); shared-link capacities within 10 %. Exit status 1 when one is missed.

Run: .venv/bin/python studies/model/model_fidelity.py [--seeds 20] [--first 0] [--nodes 32,48,64,96]
     [--ranks 1,2] [--no-capacities] [--quick] [--out DIR] [--reuse]
Seed s gets kind CYCLE[s % 6] (fat-tree, fat-tree3, dragonfly, fat-tree, fat-tree3, torus) and
size nodes[(s // 6) % len(nodes)], so that every kind meets every size. --quick: 6 seeds of 16
nodes, 1 rank per node (about 20 s). Simulated probes cost about N^3 in wall time: 32 nodes take
8-20 s each here, 64 nodes about a minute, 96 nodes several minutes (10 at 2 ranks per node).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from rankwise.model.anomalies import find_slow_links
from rankwise.model.hops import direct_links
from rankwise.model.model import Model
from rankwise.sim.faults import crossing_pairs, read_faults
from rankwise.sim.fidelity import Score, claims_from_findings, score
from rankwise.sim.platform import load_generated
from rankwise.sim.random_platform import CYCLE, KINDS, write_random_platform

ARI_MEDIAN, ARI_MIN = 0.98, 0.95
BW_GOAL, LAT_GOAL, CAP_GOAL = 0.05, 0.10, 0.10
MAX_FALSE = 1

console = Console(width=None if sys.stdout.isatty() else 200, highlight=False)


@dataclass
class Run:
    seed: int
    shape: str
    nodes: int
    rpn: int
    wall: float
    score: Score


def shape_label(spec) -> str:
    """'fat-tree 4x8 shuffled 2:1', 'fat-tree3:2,2,8 shuffled', 'torus:4,4,2 2:1'."""
    shape = spec.topology if spec.shape is not None else f"fat-tree {spec.racks}x{spec.nodes_per_rack}"
    over = f" {spec.oversubscription:g}:1" if spec.oversubscription != 1 else ""
    return shape + (" shared nics" if spec.shared_nics else "") + (" shuffled" if spec.shuffle_racks else "") + over


def probe(platform: Path, model: Path, rpn: int, capacities: bool, log: Path) -> float:
    """`rankwise probe --sim` as a user would run it; wall seconds."""
    cmd = [sys.executable, "-m", "rankwise", "probe", "--sim", str(platform), "--ranks-per-node", str(rpn),
           "-o", str(model)] + (["--capacities"] if capacities else [])
    t0 = time.monotonic()
    with open(log, "w") as out:
        done = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise SystemExit(f"probe failed ({' '.join(cmd)}), see {log}")
    return time.monotonic() - t0


def where_of(out: Path, seed: int, nodes: int, kind: str | None = None) -> Path:
    """One folder per platform: its seed, size and kind (none for the cycle of kinds)."""
    return out / (f"seed{seed}-n{nodes}" + (f"-{kind}" if kind else ""))


def one(seed: int, nodes: int, rpn: int, out: Path, capacities: bool, reuse: bool, kind: str | None = None) -> Run:
    where = where_of(out, seed, nodes, kind)
    if reuse and (where / "platform" / "faults.json").exists():
        gp, faults = load_generated(where / "platform"), read_faults(where / "platform")
    else:
        gp, faults = write_random_platform(seed, nodes, where / "platform", kind)
    path = where / f"rpn{rpn}.rwm"
    wall = float("nan")
    if not (reuse and path.exists()):
        wall = probe(gp.platform_xml, path, rpn, capacities, where / f"rpn{rpn}.log")
    model = Model.load(path)
    findings = find_slow_links(model)
    if not model.hops:  # reused from before `rankwise probe` wrote a torus's links: as it writes them now
        model.hops = direct_links(model, findings)
    on = crossing_pairs(gp)
    s = score(gp, faults, model, findings.groups, claims_from_findings(findings), on)
    return Run(seed, shape_label(gp.spec), gp.spec.n_nodes, rpn, wall, s)


def pct(values: np.ndarray, q: float) -> str:
    return f"{100 * np.quantile(values, q):.1f}" if values.size else "-"


def table(runs: list[Run]) -> Table:
    t = Table(title="Probed models against the ground truth, one row per platform and ranks per node",
              title_justify="left")
    for col in ("seed", "platform", "n", "rpn", "lat % med", "p90", "bw % med", "p90", "bias", "nic caps",
                "uplink caps", "ARI", "faults right", "as nodes", "false", "stray pairs", "wall s"):
        t.add_column(col, justify="left" if col == "platform" else "right", no_wrap=col == "platform")
    for r in runs:
        s = r.score
        caps = "-" if not s.cap_limiting and not s.cap_spurious else (
            f"{s.caps_found}/{s.cap_limiting}" + (f" +{len(s.cap_spurious)}" if s.cap_spurious else ""))
        ok_faults = not s.missed and not s.as_nodes
        t.add_row(str(r.seed), r.shape, str(r.nodes), str(r.rpn), pct(s.lat_err, 0.5), pct(s.lat_err, 0.9),
                  pct(s.bw_err, 0.5), pct(s.bw_err, 0.9), f"{100 * s.bw_bias:+.1f}",
                  f"{s.nics_found}/{s.nic_err.size}" if s.nic_err.size else "-", caps,
                  "-" if np.isnan(s.ari) else f"{s.ari:.3f}",
                  ("" if ok_faults else "[red]") + f"{len(s.right)}/{s.expected}" + ("" if ok_faults else "[/]"),
                  str(len(s.as_nodes)), ("[red]" if len(s.false) > MAX_FALSE else "") + str(len(s.false)),
                  str(s.stray_pairs), "-" if np.isnan(r.wall) else f"{r.wall:.0f}")
    return t


def misses(runs: list[Run]) -> None:
    for r in runs:
        s = r.score
        parts = [f"missed {f.label} (bw x{f.bw_factor:.2f}, lat x{f.lat_factor:.1f})" for f in s.missed]
        parts += [f"{f.label} named as its nodes" for f in s.as_nodes]
        labels = [c.label for c in s.false]
        parts += [f"false: {', '.join(labels[:6])}{' ...' if len(labels) > 6 else ''}"] if labels else []
        parts += [f"uplink caps: spurious {', '.join(s.cap_spurious)}"] if s.cap_spurious else []
        parts += [f"pod caps: spurious {', '.join(s.pod_spurious)}"] if s.pod_spurious else []
        parts += [f"pod caps: {np.isinf(s.pod_err).sum()} missed, worst error {100 * s.pod_err[np.isfinite(s.pod_err)].max():.0f} %"
                  if np.isfinite(s.pod_err).any() else f"pod caps: {s.pod_err.size} missed"] \
            if (s.pod_err > CAP_GOAL).any() else []
        if parts:
            console.print(f"  seed {r.seed} rpn {r.rpn}: " + "; ".join(parts))


def summary(runs: list[Run]) -> bool:
    """Figures against the targets, one line each; True when all are met."""
    def line(ok: bool, text: str) -> bool:
        console.print(("[green]met[/]    " if ok else "[red]missed[/] ") + text)
        return ok

    aris = np.array([r.score.ari for r in runs if not np.isnan(r.score.ari)])
    lat_med = np.array([np.median(r.score.lat_err) for r in runs if r.score.lat_err.size])
    bw_med = np.array([np.median(r.score.bw_err) for r in runs if r.score.bw_err.size])
    lat_all = np.concatenate([r.score.lat_err for r in runs])
    bw_all = np.concatenate([r.score.bw_err for r in runs])
    expected = sum(r.score.expected for r in runs)
    right = sum(len(r.score.right) for r in runs)
    as_nodes = sum(len(r.score.as_nodes) for r in runs)
    false = np.array([len(r.score.false) for r in runs])
    kinds: dict[str, list[int]] = {}
    for r in runs:
        for f in r.score.right + r.score.as_nodes + r.score.missed:
            k = kinds.setdefault(f"{f.what} {f.where}", [0, 0])
            k[0] += f in r.score.right
            k[1] += 1
    caps = np.concatenate([r.score.cap_err for r in runs])
    nics = np.concatenate([r.score.nic_err for r in runs])
    spurious = sum(len(r.score.cap_spurious) for r in runs)
    console.print(f"\n[bold]Summary[/] over {len(runs)} probes of {len({(r.seed, r.nodes) for r in runs})} platforms")
    ok = True
    if aris.size:
        ok &= line(np.median(aris) >= ARI_MEDIAN and aris.min() >= ARI_MIN,
                   f"groups vs racks: ARI median {np.median(aris):.3f} (target >= {ARI_MEDIAN}), "
                   f"min {aris.min():.3f} (>= {ARI_MIN}), over {aris.size} probes with racks")
    by_kind = ", ".join(f"{k} {a}/{b}" for k, (a, b) in sorted(kinds.items()))
    ok &= line(right == expected, f"faults named at the right element: {right}/{expected} ({by_kind}); "
                                  f"slow shared links named as their nodes instead: {as_nodes}")
    ok &= line(bool((false <= MAX_FALSE).all()),
               f"false positives per probe: median {np.median(false):g}, max {false.max()}, "
               f"{int((false > MAX_FALSE).sum())} of {len(runs)} probes above {MAX_FALSE}")
    ok &= line(bool(bw_med.size and np.median(bw_med) <= BW_GOAL),
               f"lone-pair bandwidth: median |error| {pct(bw_med, 0.5)} % (median over probes; target <= "
               f"{100 * BW_GOAL:g} %), worst probe {pct(bw_med, 1.0)} %; all pairs p90 {pct(bw_all, 0.9)} %")
    over = [r for r in runs if r.score.bw_err.size and np.median(r.score.bw_err) > BW_GOAL]
    if over:
        bias = np.array([r.score.bw_bias for r in over])
        console.print(f"       {len(over)} of {len(runs)} probes above {100 * BW_GOAL:g} % "
                      f"({', '.join(sorted({r.shape for r in over}))}); their pairs' bandwidth / a lone pair's - 1: "
                      f"median {100 * np.median(bias):+.1f} %")
    ok &= line(bool(lat_med.size and np.median(lat_med) <= LAT_GOAL),
               f"lone-pair latency: median |error| {pct(lat_med, 0.5)} % (target <= {100 * LAT_GOAL:g} %), "
               f"worst probe {pct(lat_med, 1.0)} %; all pairs p90 {pct(lat_all, 0.9)} %")
    limiting = sum(r.score.cap_limiting for r in runs)
    if limiting or spurious:
        found = int((caps <= CAP_GOAL).sum())
        ok &= line(found == limiting and spurious == 0,
                   f"uplink capacities within {100 * CAP_GOAL:g} %: {found}/{limiting} limiting uplinks; "
                   f"links where none limits: {spurious}")
        varying = np.concatenate([r.score.cap_varying for r in runs])
        console.print(f"       of which steady: {int((caps[~varying] <= CAP_GOAL).sum())}/{int((~varying).sum())}; "
                      f"whose load varies (stored at a typical reading, scored against the peak): "
                      f"{int((caps[varying] <= CAP_GOAL).sum())}/{int(varying.sum())}")
    def caps(errors: np.ndarray, expected: int, spurious: int, what: str, where: str) -> bool:
        """One line for capacities scored against their links: how many within CAP_GOAL of
        `expected`, and how many the model has where no such link is."""
        if not (expected or spurious):
            return True
        found = int((errors <= CAP_GOAL).sum())
        return line(found == expected and spurious == 0,
                    f"{what} within {100 * CAP_GOAL:g} %: {found}/{expected}; {where}: {spurious}")

    ok &= caps(np.concatenate([r.score.pod_err for r in runs]), sum(r.score.pod_limiting for r in runs),
               sum(len(r.score.pod_spurious) for r in runs), "pod uplink capacities (limiting pod uplinks)",
               "pod links where none limits")
    hops = np.concatenate([r.score.hop_err for r in runs])
    ok &= caps(hops, hops.size, sum(r.score.hop_spurious for r in runs),
               f"torus links (steady, each direction; missing {int(np.isinf(hops).sum())})",
               "links between nodes that are no neighbours")
    duplex = np.concatenate([r.score.duplex_err for r in runs])
    ok &= caps(duplex, duplex.size, sum(r.score.duplex_spurious for r in runs), "duplex caps on shared node links",
               "duplex figures where each direction has its own")
    kinds_false: dict[str, int] = {}
    behind = 0
    for r in runs:
        shared_nodes = {i for f in r.score.right + r.score.as_nodes + r.score.missed
                        if f.what == "slow" and f.where == "shared" for i in f.nodes}
        for c in r.score.false:
            key = "varying pairs alone" if c.where == "pairs" else f"{c.what} {c.where}"
            kinds_false[key] = kinds_false.get(key, 0) + 1
            behind += c.where == "nic" and c.what == "slow" and c.node in shared_nodes
    if kinds_false:
        console.print("       false positives by kind: " + ", ".join(f"{k} {v}" for k, v in sorted(kinds_false.items()))
                      + f" (slow NICs behind a slow shared link: {behind})")
    by_shape: dict[str, list[float]] = {}
    for r in runs:
        if not np.isnan(r.score.ari):
            by_shape.setdefault(r.shape.split(":")[0].split(" ")[0], []).append(r.score.ari)
    if by_shape:
        console.print("       ARI by shape (min / median): " + ", ".join(
            f"{k} {min(v):.3f} / {np.median(v):.3f}" for k, v in sorted(by_shape.items())))
    if nics.size:
        console.print(f"       NIC caps within {100 * CAP_GOAL:g} %: {int((nics <= CAP_GOAL).sum())}/{nics.size} "
                      f"(median |error| {pct(nics, 0.5)} %, worst {pct(nics, 1.0)} %)")
    return ok


def save(runs: list[Run], path: Path) -> None:
    rows = [dict(seed=r.seed, shape=r.shape, nodes=r.nodes, rpn=r.rpn, wall=r.wall, ari=r.score.ari,
                 lat_median=float(np.median(r.score.lat_err)) if r.score.lat_err.size else None,
                 bw_median=float(np.median(r.score.bw_err)) if r.score.bw_err.size else None,
                 right=[f.label for f in r.score.right], as_nodes=[f.label for f in r.score.as_nodes],
                 missed=[f.label for f in r.score.missed], false=[c.label for c in r.score.false],
                 bw_bias=r.score.bw_bias, stray_pairs=r.score.stray_pairs,
                 cap_err=r.score.cap_err.tolist(), cap_varying=r.score.cap_varying.tolist(),
                 cap_spurious=r.score.cap_spurious,
                 pod_err=r.score.pod_err.tolist(), pod_spurious=r.score.pod_spurious,
                 nic_err=r.score.nic_err.tolist(), duplex_err=r.score.duplex_err.tolist(),
                 duplex_spurious=r.score.duplex_spurious, hop_err=r.score.hop_err.tolist(),
                 hop_spurious=r.score.hop_spurious) for r in runs]
    path.write_text(json.dumps(rows, indent=1, default=lambda x: None if x != x else x) + "\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=20, help="platforms (seeds first .. first + seeds - 1)")
    ap.add_argument("--first", type=int, default=0, help="first seed")
    ap.add_argument("--nodes", default="32,48,64,96", help="sizes, dealt over the seeds")
    ap.add_argument("--ranks", default="1,2", help="ranks per node to probe with")
    ap.add_argument("--no-capacities", action="store_true", help="probe without the stress test")
    ap.add_argument("--quick", action="store_true", help="6 seeds (every kind) of 16 nodes, 1 rank per node")
    ap.add_argument("--out", type=Path, help="keep platforms, models, logs and results.json here")
    ap.add_argument("--reuse", action="store_true", help="with --out: score the models already there")
    ap.add_argument("--kind", choices=KINDS, help="every seed of this kind (default: the cycle of kinds)")
    args = ap.parse_args()
    if args.quick:
        args.seeds, args.first, args.nodes, args.ranks = 6, 0, "16", "1"
    sizes = [int(x) for x in args.nodes.split(",")]
    ranks = [int(x) for x in args.ranks.split(",")]
    jobs = [(s, sizes[(s // len(CYCLE)) % len(sizes)], rpn)
            for s in range(args.first, args.first + args.seeds) for rpn in ranks]
    with tempfile.TemporaryDirectory(prefix="rankwise-fidelity-") as tmp:
        out = args.out or Path(tmp)
        out.mkdir(parents=True, exist_ok=True)
        runs: list[Run] = []
        columns = (TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[jobs]}"),
                   TimeElapsedColumn(), TextColumn("left"), TimeRemainingColumn())
        # Wall grows as N^3: weigh each job by it so that the estimate holds for mixed sizes.
        with Progress(*columns, console=console, transient=True) as bar:
            task = bar.add_task("probing", total=sum((n / 32) ** 3 for _, n, _ in jobs),
                                jobs=f"0/{len(jobs)}")
            for k, (seed, nodes, rpn) in enumerate(jobs):
                bar.update(task, description=f"seed {seed}, {nodes} nodes, {rpn} rank(s) per node")
                runs.append(one(seed, nodes, rpn, out, not args.no_capacities, args.reuse, args.kind))
                bar.update(task, advance=(nodes / 32) ** 3, jobs=f"{k + 1}/{len(jobs)}")
                save(runs, out / "results.json")
        console.print(table(runs))
        misses(runs)
        ok = summary(runs)
        if args.out:
            console.print(f"platforms, models, probe logs and results.json kept in {out}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
