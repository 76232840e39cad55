"""Prediction from probed models: the predictor against SMPI, and optimize's speed-ups, over random platforms.

For each seed, rankwise.sim.random_platform draws a platform (studies/model/model_fidelity.py says which
kinds: fat trees of two and three levels with racks dealt in shuffled order, a dragonfly, a torus;
degraded NICs, slow and congested shared links, a link whose bandwidth walks). The platform is
probed as a user would (`rankwise probe --sim platform.xml --ranks-per-node R`, model_fidelity's
`probe`), and every figure below is computed from that *probed* model; the ground truth is not read.

1. Collectives: each operation (all-to-all, bcast, reduce, allreduce, allgather) with its algorithm
   pinned in SMPI (rankwise.predict.validate), 1 KiB-4 MiB, on the platform's first hosts in file order
   (R ranks per node, 16-64 ranks): predicted time against simulated, |error| per row; median and
   90th percentile per operation, per platform kind and overall.
2. Decisions: `optimize`'s pipeline (rankwise.workflows.optimize.plan, compare, predicted_rows): an all-to-all
   and a 3-D stencil on half the platform's slots, mapped from the probed model, run in the default
   and in rankwise's placement; the predicted speed-up against the measured one per message size.
   SMPI starts every run at simulated time 0, so on a platform with a varying link every run meets
   the same moment of its cycle, and a job started later another: each job is also run from
   MOMENTS - 1 later starts spread over the cycle (rankwise.sim.profiles.platform_at), and a row's
   speed-up is also judged against the median over the MOMENTS starts (what a job at an unknown
   moment meets).

Targets (issue 21, item 5): median |error| <= 8 %, 90th percentile <= 20 %; every predicted speed-up
within 20 % of the measured one. Exit status 1 when one is missed.

Run: .venv/bin/python studies/model/fidelity_predict.py [--seeds 6] [--first 0] [--nodes 16,32] [--ranks 1,2]
     [--quick] [--out DIR] [--reuse DIR] [--no-capacities] [--no-decisions] [--no-collectives]
     [--results FILE ...]
Seed s gets kind CYCLE[s % 6] and size nodes[(s // 6) % len(nodes)], as in model_fidelity.py.
--reuse DIR: take the platforms and models in DIR (the --out of this study or of model_fidelity.py:
DIR/seed{s}-n{nodes}/platform, DIR/seed{s}-n{nodes}/rpn{R}.rwm) and probe only those missing, so
that the study re-runs on models another probe made. --quick: 3 seeds of 16 nodes, 1 rank per node,
one algorithm per operation, 3 sizes (a few minutes). --results DIR/results.json (repeatable): the
tables and figures of earlier runs, pooled, without running anything.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from rankwise.util.errors import RankwiseError

sys.path.insert(0, str(Path(__file__).resolve().parent))
from model_fidelity import probe, shape_label, where_of  # noqa: E402  one user probe, shape label, folder

MEDIAN_GOAL, P90_GOAL, SPEEDUP_GOAL = 0.08, 0.20, 0.20
MIN_RANKS, MAX_RANKS = 16, 64
OPS = ("alltoall", "bcast", "reduce", "allreduce", "allgather")
# The algorithms pinned per operation (rankwise.predict.predictor.SMPI_ALGORITHM names); --quick takes the first.
ALGORITHMS = {
    "alltoall": ("pair", "bruck", "ring"),
    "bcast": ("binomial", "chain", "scatter_allgather"),
    "reduce": ("binomial",),
    "allreduce": ("rdb", "ring", "rabenseifner"),
    "allgather": ("ring", "rdb", "bruck"),
}
SIZES = (1 << 10, 1 << 12, 1 << 14, 1 << 16, 1 << 18, 1 << 20, 1 << 22)  # 1 KiB .. 4 MiB, every 4x
QUICK_SIZES = (1 << 10, 1 << 16, 1 << 22)
DECISION_SIZES = "1K,16K,256K,4M"
MOMENTS = 4  # starts of each decision job over a varying link's cycle: 0, 1/4, 1/2, 3/4 of it

console = Console(width=None if sys.stdout.isatty() else 200, highlight=False)


@dataclass
class Case:
    """One platform probed at one number of ranks per node."""

    seed: int
    nodes: int
    rpn: int
    shape: str = ""
    kind: str | None = None  # random_platform's kind; None: the cycle's


@dataclass
class CollRow:
    seed: int
    shape: str
    rpn: int
    ranks: int
    op: str
    algorithm: str
    size: int
    simulated: float
    predicted: float

    @property
    def error(self) -> float:
        return self.predicted / self.simulated - 1


@dataclass
class SpeedupRow:
    seed: int
    shape: str
    rpn: int
    job: str
    size: int
    measured: float
    predicted: float
    moments: tuple[float, ...] = ()  # measured from the later starts over a varying link's cycle

    @property
    def error(self) -> float:
        return self.predicted / self.measured - 1

    @property
    def typical(self) -> float:
        """The median measured speed-up over the cycle's starts (this row's alone without a cycle)."""
        return float(np.median([self.measured, *self.moments]))

    @property
    def typical_error(self) -> float:
        return self.predicted / self.typical - 1


def kind_of(shape: str) -> str:
    """'fat-tree 4x8 shuffled 2:1' -> 'fat-tree'; 'torus:4,4,2' -> 'torus'."""
    return shape.split(":")[0].split(" ")[0]


def job_ranks(nodes: int, rpn: int) -> int:
    """Ranks of the collectives' job: every node at rpn, at most MAX_RANKS; 0 below MIN_RANKS."""
    ranks = min(nodes * rpn, MAX_RANKS)
    ranks -= ranks % rpn
    return ranks if ranks >= MIN_RANKS else 0


def stats(errors) -> tuple[float, float, int]:
    """(median |error|, 90th percentile of |error|, count); NaN when empty."""
    e = np.abs(np.asarray([x for x in errors if np.isfinite(x)], dtype=float))
    if e.size == 0:
        return float("nan"), float("nan"), 0
    return float(np.median(e)), float(np.quantile(e, 0.9)), int(e.size)


def platform_and_model(case: Case, out: Path, reuse: Path | None, capacities: bool):
    """(generated platform, probed model path): from --reuse DIR when there, else generated and
    probed into out (as a user: rankwise probe --sim)."""
    from rankwise.sim.platform import load_generated
    from rankwise.sim.random_platform import write_random_platform

    for base in ([reuse] if reuse else []) + [out]:
        d = where_of(base, case.seed, case.nodes, case.kind)
        if (d / "platform" / "platform.xml").is_file() and (d / f"rpn{case.rpn}.rwm").is_file():
            return load_generated(d / "platform"), d / f"rpn{case.rpn}.rwm", False
    d = where_of(out, case.seed, case.nodes, case.kind)
    if (d / "platform" / "ground_truth.json").is_file():
        gp = load_generated(d / "platform")
    else:
        gp, _ = write_random_platform(case.seed, case.nodes, d / "platform", case.kind)
    model = d / f"rpn{case.rpn}.rwm"
    probe(gp.platform_xml, model, case.rpn, capacities, d / f"rpn{case.rpn}.log")
    return gp, model, True


def collectives(case: Case, xml: Path, model_path: Path, sizes, algorithms, log) -> list[CollRow]:
    """Predicted (from the probed model) against SMPI, algorithm pinned, on the XML's first hosts."""
    from rankwise.model.model import Model
    from rankwise.predict.predictor import PredictNetwork
    from rankwise.sim.platform_file import read_platform
    from rankwise.predict.validate import validate

    hosts = [h for h, _ in read_platform(xml)]
    ranks = job_ranks(len(hosts), case.rpn)
    if not ranks:
        return []
    rank_hosts = [h for h in hosts[: ranks // case.rpn] for _ in range(case.rpn)]
    used = list(dict.fromkeys(rank_hosts))
    net = PredictNetwork.from_model(Model.load(model_path), [(h, case.rpn) for h in used])
    rows = []
    for op in OPS:
        for alg in algorithms[op]:
            try:
                got = validate(net, xml, op, alg, sizes, rank_hosts)
            except RankwiseError as exc:  # e.g. an algorithm the predictor refuses on this count
                log(f"seed {case.seed} rpn {case.rpn}: {op} {alg} left out: {exc}")
                continue
            rows += [CollRow(case.seed, case.shape, case.rpn, ranks, op, alg, r.size, r.simulated, r.predicted)
                     for r in got]
    return rows


def decisions(case: Case, xml: Path, model_path: Path) -> list[SpeedupRow]:
    """optimize's pipeline on half the slots: all-to-all and 3-D stencil, predicted vs measured per size."""
    from rankwise.model.model import Model
    from rankwise.workflows.optimize import benchmark_runner, compare, plan, predicted_rows, with_bytes
    from rankwise.traffic.patterns import dims_create, generate
    from rankwise.sim.profiles import cycle, platform_at

    model = Model.load(model_path)
    ranks = min(MAX_RANKS, model.n_nodes * case.rpn // 2)
    ranks -= ranks % 8
    if ranks < 8:
        return []
    grid = "x".join(map(str, dims_create(ranks, 3)))
    jobs = [(f"alltoall {ranks}", f"alltoall:ranks={ranks},bytes=64K",
             ["alltoall", "--sizes", DECISION_SIZES, "--iterations", "2"], None),
            (f"stencil 3d {grid}", f"stencil3d:grid={grid},bytes=64K,mode=3d",
             ["stencil", "--grid", grid, "--mode", "3d", "--sizes", DECISION_SIZES, "--iterations", "2"], "3d")]
    period = cycle(xml)
    rows = []
    for label, spec, program, table in jobs:
        p = plan(model, generate(spec), [(h, case.rpn) for h in model.names])

        def measured(platform):
            c = compare(label, benchmark_runner(program[0], program[1:], sim=platform, table=table), p.before_hosts,
                        p.after_hosts, repeats=1)
            return c.sizes, c.speedup

        sizes, speedup = measured(xml)
        later = []
        if period:
            with tempfile.TemporaryDirectory(prefix="rankwise-moment-") as tmp:
                for k in range(1, MOMENTS):
                    at, got = measured(platform_at(xml, k * period / MOMENTS, Path(tmp) / f"at{k}"))
                    if list(at) != list(sizes):
                        raise RankwiseError(f"{label}: the run from {k}/{MOMENTS} of the cycle printed other sizes")
                    later.append(got)
        predicted = predicted_rows(p, sizes, with_bytes(spec))
        rows += [SpeedupRow(case.seed, case.shape, case.rpn, label, int(s), float(x), float(y),
                            tuple(float(m[i]) for m in later))
                 for i, (s, x, y) in enumerate(zip(sizes, speedup, predicted))]
    return rows


def coll_table(rows: list[CollRow]) -> Table:
    t = Table(title="Predicted (probed model) vs SMPI, algorithm pinned: |error| per operation and platform kind",
              title_justify="left")
    for col in ("op", "kind", "rows", "median %", "p90 %", "max %", "worst row"):
        t.add_column(col, justify="left" if col in ("op", "kind", "worst row") else "right")
    for op in OPS:
        mine = [r for r in rows if r.op == op]
        for kind in sorted({kind_of(r.shape) for r in mine}) + ["all"]:
            sel = [r for r in mine if kind in ("all", kind_of(r.shape))]
            med, p90, n = stats(r.error for r in sel)
            if not n:
                continue
            w = max(sel, key=lambda r: abs(r.error))
            t.add_row(op if kind == sorted({kind_of(r.shape) for r in mine})[0] else "", kind, str(n),
                      f"{100 * med:.1f}", f"{100 * p90:.1f}", f"{100 * abs(w.error):.1f}",
                      f"{w.algorithm} {w.size} B, seed {w.seed} x{w.rpn}: {100 * w.error:+.0f} %")
    return t


def speedup_table(rows: list[SpeedupRow]) -> Table:
    t = Table(title="optimize: predicted (probed model) vs measured speed-up per size", title_justify="left")
    cols = ["seed", "platform", "rpn", "job", "size", "measured", "predicted", "error"]
    cycles = any(r.moments for r in rows)
    if cycles:
        cols += [f"over the cycle ({MOMENTS} starts)", "error vs median"]
    for col in cols:
        t.add_column(col, justify="left" if col in ("platform", "job") else "right")

    def err(e: float) -> str:
        bad = abs(e) > SPEEDUP_GOAL
        return ("[red]" if bad else "") + f"{100 * e:+.1f} %" + ("[/]" if bad else "")

    for r in rows:
        row = [str(r.seed), r.shape, str(r.rpn), r.job, str(r.size), f"x{r.measured:.3f}", f"x{r.predicted:.3f}",
               err(r.error)]
        if cycles and r.moments:
            every = [r.measured, *r.moments]
            row += [f"x{min(every):.2f}-{max(every):.2f}, median x{r.typical:.3f}", err(r.typical_error)]
        elif cycles:
            row += ["-", "-"]
        t.add_row(*row)
    return t


def summary(coll: list[CollRow], speed: list[SpeedupRow]) -> bool:
    def line(ok: bool, text: str) -> bool:
        console.print(("[green]met[/]    " if ok else "[red]missed[/] ") + text)
        return ok

    ok = True
    med, p90, n = stats(r.error for r in coll)
    if n:
        ok &= line(med <= MEDIAN_GOAL and p90 <= P90_GOAL,
                   f"collectives: median |error| {100 * med:.1f} % (target <= {100 * MEDIAN_GOAL:g} %), "
                   f"90th percentile {100 * p90:.1f} % (<= {100 * P90_GOAL:g} %), over {n} rows")
        per_op = ", ".join(f"{op} {100 * stats(r.error for r in coll if r.op == op)[0]:.1f} / "
                           f"{100 * stats(r.error for r in coll if r.op == op)[1]:.1f}"
                           for op in OPS if any(r.op == op for r in coll))
        console.print(f"       per operation (median / p90 %): {per_op}")
    if speed:
        close = sum(abs(r.error) <= SPEEDUP_GOAL for r in speed)
        w = max(speed, key=lambda r: abs(r.error))
        ok &= line(close == len(speed), f"optimize: predicted speed-up within {100 * SPEEDUP_GOAL:g} % of the "
                   f"measured one in {close}/{len(speed)} rows (median |error| {100 * stats(r.error for r in speed)[0]:.1f} %, "
                   f"worst {100 * w.error:+.1f} %: {w.job}, {w.size} B, seed {w.seed} x{w.rpn})")
        cyc = [r for r in speed if r.moments]
        if cyc:
            at0 = sum(abs(r.error) <= SPEEDUP_GOAL for r in cyc)
            typ = sum(abs(r.typical_error) <= SPEEDUP_GOAL for r in cyc)
            moved = sum(max(r.measured, *r.moments) / min(r.measured, *r.moments) - 1 > SPEEDUP_GOAL for r in cyc)
            console.print(f"       {len(cyc)} rows on platforms with a varying link: within "
                          f"{100 * SPEEDUP_GOAL:g} % of the run from time 0 in {at0}, of the median over "
                          f"{MOMENTS} starts over the cycle in {typ}; the measured speed-up moves by more than "
                          f"{100 * SPEEDUP_GOAL:g} % over the cycle in {moved}; over all rows, against the median: "
                          f"{sum(abs(r.typical_error) <= SPEEDUP_GOAL for r in speed)}/{len(speed)}")
    return ok


def load_results(paths) -> tuple[list[CollRow], list[SpeedupRow]]:
    """The rows of results.json files (this study's --out), pooled."""
    coll, speed = [], []
    for path in paths:
        try:
            data = json.loads(Path(path).read_text())
            coll += [CollRow(**r) for r in data["collectives"]]
            speed += [SpeedupRow(**{**r, "moments": tuple(r.get("moments", ()))}) for r in data["speedups"]]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise SystemExit(f"--results {path}: not this study's results.json ({type(exc).__name__}: {exc})") from None
    return coll, speed


def cases(seeds: int, first: int, nodes: list[int], ranks: list[int], kind: str | None = None) -> list[Case]:
    """Seed s: size nodes[(s // 6) % len(nodes)], kind CYCLE[s % 6] (model_fidelity.py's dealing)
    unless kind is given."""
    from rankwise.sim.random_platform import CYCLE

    return [Case(s, nodes[(s // len(CYCLE)) % len(nodes)], rpn, kind=kind)
            for s in range(first, first + seeds) for rpn in ranks]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=6, help="platforms (seeds first .. first + seeds - 1)")
    ap.add_argument("--first", type=int, default=0, help="first seed")
    ap.add_argument("--nodes", default="16,32", help="sizes, dealt over the seeds")
    ap.add_argument("--ranks", default="1,2", help="ranks per node to probe and run with")
    ap.add_argument("--no-capacities", action="store_true", help="probe without the stress test")
    ap.add_argument("--no-decisions", action="store_true", help="collectives only (no optimize rows)")
    ap.add_argument("--no-collectives", action="store_true", help="optimize rows only (no collectives)")
    ap.add_argument("--quick", action="store_true", help="3 seeds of 16 nodes, 1 rank per node, 3 sizes, "
                                                         "one algorithm per operation")
    ap.add_argument("--out", type=Path, help="keep platforms, models, logs and results.json here")
    ap.add_argument("--reuse", type=Path, help="take platforms and models from this folder (probe the missing)")
    from rankwise.sim.random_platform import KINDS

    ap.add_argument("--kind", choices=KINDS, help="every seed of this kind (default: the cycle of kinds)")
    ap.add_argument("--results", type=Path, action="append", default=[],
                    help="print the tables and figures of earlier runs' results.json (repeat to pool), run nothing")
    args = ap.parse_args()
    if args.results:
        coll, speed = load_results(args.results)
        console.print(coll_table(coll))
        if speed:
            console.print(speedup_table(speed))
        return 0 if summary(coll, speed) else 1
    sizes, algorithms = SIZES, ALGORITHMS
    if args.quick:
        args.seeds, args.nodes, args.ranks = 3, "16", "1"
        sizes, algorithms = QUICK_SIZES, {op: algs[:1] for op, algs in ALGORITHMS.items()}
    if args.reuse is not None and not args.reuse.is_dir():
        raise SystemExit(f"--reuse {args.reuse}: not a folder")
    todo = cases(args.seeds, args.first, [int(x) for x in args.nodes.split(",")],
                 [int(x) for x in args.ranks.split(",")], args.kind)
    coll: list[CollRow] = []
    speed: list[SpeedupRow] = []
    with tempfile.TemporaryDirectory(prefix="rankwise-fidelity-predict-") as tmp:
        out = args.out or Path(tmp)
        out.mkdir(parents=True, exist_ok=True)
        for k, case in enumerate(todo):
            with console.status(f"[{k + 1}/{len(todo)}] seed {case.seed}, {case.nodes} nodes, {case.rpn} per node"):
                gp, model, probed = platform_and_model(case, out, args.reuse, not args.no_capacities)
                case.shape = shape_label(gp.spec)
                if not args.no_collectives:
                    coll += collectives(case, gp.platform_xml, model, sizes, algorithms, console.print)
                if not args.no_decisions:
                    speed += decisions(case, gp.platform_xml, model)
            console.print(f"seed {case.seed} ({case.shape}, {case.rpn} per node): model {model}"
                          + (" (probed)" if probed else " (reused)"))
            (out / "results.json").write_text(json.dumps(
                {"collectives": [asdict(r) for r in coll], "speedups": [asdict(r) for r in speed]}, indent=1) + "\n")
        console.print(coll_table(coll))
        if speed:
            console.print(speedup_table(speed))
        ok = summary(coll, speed)
        if args.out:
            console.print(f"platforms, models, probe logs and results.json kept in {out}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
