"""`rankwise bench`: the papers' evidence, reproduced on simulated platforms.

Each experiment probes its platform (once; the model is kept in the output
folder), maps a benchmark program's traffic, runs the program in the
launchers' default block placement and in rankwise's, and prints a table
shaped like the seed's (size or node count, before, after, speed-up), with
a CSV and a PNG beside it. Simulated time is deterministic, so one run per
placement is the measurement (--repeats adds interleaved runs anyway).

SMPI's all-to-all is pinned to the pairwise algorithm for power-of-two rank
counts and to the ring otherwise (rankwise.cluster.benchmark_programs.smpi_alltoall_cfg):
the default linear one is slow to simulate past ~128 ranks."""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from rankwise.util.errors import RankwiseError, UsageError
from rankwise.model.model import Model
from rankwise.workflows.optimize import Comparison, benchmark_runner, compare, plan, predicted_rows, with_bytes
from rankwise.traffic.patterns import dims_create, format_size, generate
from rankwise.measure.probe import LIGHT_SIM_PROBE, probe_sim
from rankwise.sim.platform import PlatformSpec, default_spec
from rankwise.sim.platform import generate as generate_platform
from rankwise.util.files import write_atomic

BENCH_PROBE = LIGHT_SIM_PROBE
PREDICTION_TOLERANCE = 0.20  # the goal: predicted speed-up within 20 % of the measured one


def uniform_spec() -> PlatformSpec:
    """The default cluster's shape without any fault."""
    return dataclasses.replace(default_spec(), degraded=(), congested=(), varying=(), seed=3)


PLATFORMS: dict[str, Callable[[], PlatformSpec]] = {
    "default": default_spec, "uniform": uniform_spec}


@dataclass
class Row:
    key: str  # size, node count or configuration
    before: float
    after: float
    extra: dict[str, str] = field(default_factory=dict)
    predicted: float = float("nan")  # the predictor's speed-up for this row (rankwise.map.decision)

    @property
    def speedup(self) -> float:
        return self.before / self.after if self.after > 0 else float("nan")

    @property
    def prediction_error(self) -> float:
        """predicted / measured speed-up - 1 (nan without a prediction)."""
        return self.predicted / self.speedup - 1 if self.speedup > 0 else float("nan")


@dataclass
class Experiment:
    name: str
    title: str  # what the seed's table showed
    platform: str
    key: str  # column heading of the first column
    unit: str
    rows: list[Row] = field(default_factory=list)
    goal: str = ""
    passed: bool | None = None
    note: str = ""  # printed under the table


class Lab:
    """Platforms and their probed models, made once per output folder."""

    def __init__(self, out: Path, console: Console, repeats: int = 1):
        self.out, self.console, self.repeats = out, console, repeats
        self.models: dict[str, tuple[Path, Model]] = {}

    def platform(self, name: str) -> tuple[Path, Model]:
        if name not in self.models:
            spec = PLATFORMS[name]()
            folder = self.out / "platforms" / name
            gen = generate_platform(spec, folder)
            path = folder / "model.rwm"
            if path.exists():
                model = Model.load(path)
            else:
                # A lighter probe than the default (3 sizes, 2 x 2 ping-pongs):
                # the 128-node platform's full probe takes half an hour of
                # simulation; the mapping needs alpha and beta, not jitter.
                model = probe_sim(gen.platform_xml, path, BENCH_PROBE, ranks_per_node=2)
            self.models[name] = (gen.platform_xml, model)
        return self.models[name]

    def compare(self, platform: str, spec: str, program: list[str], slots: int, table: str | None = None,
                label: str = "", spec_at: Callable[[int], str] | None = None) -> tuple[Comparison, object]:
        """Map the pattern `spec`, run the program in both placements; per
        row (message size) the predictor's speed-up for `spec_at(size)`
        (the job's pattern at that size; default: `spec` itself) lands in
        self.predicted[label]."""
        xml, model = self.platform(platform)
        p = plan(model, generate(spec), [(h, slots) for h in model.names])
        runner = benchmark_runner(program[0], program[1:], sim=xml, table=table)
        with self.console.status(f"[bold]{label or spec}[/bold] on '{platform}': both placements"):
            c = compare(label or spec, runner, p.before_hosts, p.after_hosts, repeats=self.repeats)
        c.predicted = predicted_rows(p, c.sizes, spec_at or (lambda size: spec))
        return c, p


SIZES = "1K,4K,16K,64K,256K,1M,4M"


def alltoall(lab: Lab, quick: bool) -> list[Experiment]:
    """Cui et al. 2020, Table 1: all-to-all rounds, before/after by message size, two scales."""
    out = []
    # Two scales on the default cluster, both 32 nodes' worth of ranks out of
    # 64 nodes: 2 and 4 ranks per node (every core). (A 128-node platform
    # was tried: its probe alone takes over 15 minutes of simulation here.)
    scales = [(64, 2, SIZES)] + ([] if quick else [(128, 4, "1K,16K,64K,256K,1M")])
    for n, per_node, sizes in scales:
        platform = "default"
        exp = Experiment(f"alltoall-{n}", f"Cui et al. 2020, Table 1: all-to-all, {n} ranks ({per_node} per node, "
                         f"32 of the 64 nodes)", platform, "size", "us", goal="speed-up >= 1.3 at >= 64 KiB")
        spec = f"alltoall:ranks={n},bytes=64K"
        c, p = lab.compare(platform, spec, ["alltoall", "--sizes", sizes, "--iterations", "2"], per_node,
                           label=exp.title, spec_at=with_bytes(spec))
        exp.rows = [Row(format_size(s), b, a, {"nodes": str(p.result.n_selected)}, x)
                    for (s, b, a, _), x in zip(c.rows(), c.predicted)]
        exp.passed = all(r.speedup >= 1.3 for r, s in zip(exp.rows, c.sizes) if s >= 65536)
        out.append(exp)
    return out


def stencil(lab: Lab, quick: bool) -> list[Experiment]:
    """Cui et al. 2020, Table 2 / Fig. 5: the 3-D (2-2-2) stencil before/after at
    64..512 ranks, and the three modes compared in rankwise's placement of
    the largest job."""
    exp = Experiment("stencil", "Cui et al. 2020, Table 2: 3-D stencil (2-2-2 mode), 64 KiB and 1 MiB blocks",
                     "default", "ranks", "us", goal="speed-up >= 1.2 at 64-512 ranks")
    modes_n = 64 if quick else 256
    modes = Experiment("stencil-modes", f"Cui et al. 2020, Fig. 5: stencil modes in rankwise's placement, {modes_n} ranks",
                       "default", "size", "us", goal="3d (2-2-2) fastest at >= 64 KiB")
    # 64-256 ranks on 32 nodes' worth of slots (rankwise chooses them out of
    # 64), 512 ranks on the whole cluster (only the arrangement can help).
    for n, slots in ((64, 2), (128, 4), (256, 8), (512, 8))[: 1 if quick else 4]:
        grid = "x".join(map(str, dims_create(n, 3)))
        args = ["stencil", "--grid", grid, "--mode", "3d", "--sizes", "64K,1M", "--iterations", "2"]
        spec = f"stencil3d:grid={grid},bytes=64K,mode=3d"
        c, p = lab.compare("default", spec, args, slots, table="3d", label=f"stencil 3d {grid}",
                           spec_at=with_bytes(spec))
        for (size, b, a, _), x in zip(c.rows(), c.predicted):
            exp.rows.append(Row(f"{n} ({format_size(size)})", b, a, {"grid": grid, "per node": str(slots)}, x))
        if n == modes_n:
            chosen = (grid, p)
    exp.passed = all(r.speedup >= 1.2 for r in exp.rows)
    grid, p = chosen
    from rankwise.cluster.benchmark_programs import run_benchmark
    xml, _ = lab.platform("default")
    res = run_benchmark("stencil", ["--grid", grid, "--mode", "all", "--sizes", "16K,64K,256K,1M",
                                    "--iterations", "2"], sim=xml, hosts=p.after_hosts)
    for i, size in enumerate(res["3d"].size.tolist()):
        t = {m: float(res[m].median_us[i]) for m in ("1d", "2d", "3d")}
        modes.rows.append(Row(format_size(size), min(t["1d"], t["2d"]), t["3d"],
                              {"1d": f"{t['1d']:.6g}", "2d": f"{t['2d']:.6g}"}))
    modes.passed = all(r.after <= r.before for r, s in zip(modes.rows, res["3d"].size) if s >= 65536)
    return [exp, modes]


def scaling(lab: Lab, quick: bool) -> list[Experiment]:
    """Cui et al. 2020, Tables 3/4: an MD-like stencil (fixed 256 KiB halo per rank,
    weak scaling) and FFT transposes (64^3 grid, pencils, strong scaling)
    by node count, 2 ranks per node."""
    md = Experiment("scaling-md", "Cui et al. 2020, Table 3: MD-like 3-D stencil (2-2-2, 256 KiB) by node count",
                    "default", "nodes", "us")
    fft = Experiment("scaling-fft", "Cui et al. 2020, Table 4: FFT transposes (64^3 pencils) by node count",
                     "default", "nodes", "us")
    for nodes in (8, 16, 32) if quick else (8, 16, 32, 64):
        n = 2 * nodes
        grid = "x".join(map(str, dims_create(n, 3)))
        c, _ = lab.compare("default", f"stencil3d:grid={grid},bytes=256K,mode=3d",
                           ["stencil", "--grid", grid, "--mode", "3d", "--sizes", "256K", "--iterations", "2"],
                           2, table="3d", label=f"md stencil {nodes} nodes")
        md.rows.append(Row(str(nodes), float(c.before[0]), float(c.after[0]), {"grid": grid}, c.predicted[0]))
        c, _ = lab.compare("default", f"fft:grid=64x64x64,ranks={n},decomp=pencil",
                           ["fft", "--grid", "64x64x64", "--decomp", "pencil", "--iterations", "2"],
                           2, table="pencil", label=f"fft {nodes} nodes")
        fft.rows.append(Row(str(nodes), float(c.before[0]), float(c.after[0]), predicted=c.predicted[0]))
    return [md, fft]


def groups(lab: Lab, quick: bool) -> list[Experiment]:
    """Getmansky et al. 2015, Tables 2/3: synthetic groups (N_bl groups of N_perbl ranks,
    D bytes inside a group, D_bl between neighbouring groups every
    1 + N_skip iterations), shuffled ranks, every core of the nodes used."""
    exp = Experiment("groups", "Getmansky et al. 2015, Table 3: synthetic groups with MPI_Alltoallv (4 ranks per node)",
                     "default", "N_bl x N_perbl, D, D_bl, N_skip", "us", goal="speed-up >= 2")
    configs = [(16, 4, "1M", "64K", 0), (8, 8, "1M", "64K", 0), (16, 4, "256K", "256K", 1),
               (32, 4, "1M", "64K", 3), (16, 8, "1M", "16K", 0)]
    for n_bl, per, d, d_bl, skip in configs[: 2 if quick else len(configs)]:
        spec = f"groups:groups={n_bl},per_group={per},bytes={d},link_bytes={d_bl},skip={skip},iterations=4"
        args = ["groups", "--groups", str(n_bl), "--sizes", d, "--link-bytes", d_bl, "--skip", str(skip),
                "--iterations", "4"]
        c, _ = lab.compare("default", spec, args, 4, label=f"groups {n_bl}x{per}")
        exp.rows.append(Row(f"{n_bl}x{per}, {d}, {d_bl}, {skip}", float(c.before[0]), float(c.after[0]),
                            predicted=c.predicted[0]))
    exp.passed = all(r.speedup >= 2.0 for r in exp.rows[:2])  # the Table 3 shapes (groups fill nodes)
    return [exp]


def uniform(lab: Lab, quick: bool) -> list[Experiment]:
    """On a cluster without faults, mapping must not cost anything."""
    exp = Experiment("uniform", "uniform cluster (no fault): never slower than the default by > 2 %",
                     "uniform", "benchmark", "us", goal="speed-up >= 0.98 everywhere")
    jobs = [("all-to-all 64", "alltoall:ranks=64,bytes=64K", ["alltoall", "--sizes", "1K,64K,1M", "--iterations", "2"],
             None, 2),
            ("stencil 4x4x4", "stencil3d:grid=4x4x4,bytes=64K,mode=3d",
             ["stencil", "--grid", "4x4x4", "--mode", "3d", "--sizes", "1K,64K,1M", "--iterations", "2"], "3d", 2),
            ("groups 16x4", "groups:groups=16,per_group=4,bytes=1M,link_bytes=64K",
             ["groups", "--groups", "16", "--sizes", "64K,1M", "--link-bytes", "64K", "--iterations", "2"], None, 4)]
    for label, spec, args, table, slots in jobs:
        c, _ = lab.compare("uniform", spec, args, slots, table=table, label=label, spec_at=with_bytes(spec))
        exp.rows += [Row(f"{label} ({format_size(s)})", b, a, predicted=x)
                     for (s, b, a, _), x in zip(c.rows(), c.predicted)]
    exp.passed = all(r.speedup >= 0.98 for r in exp.rows)
    return [exp]


def real_mpi(lab: Lab, quick: bool) -> list[Experiment]:
    """The same pipeline through mpirun on this machine (4 ranks, one host,
    every rank a node): it runs; there is no network to gain from."""
    if not shutil.which("mpirun"):
        raise RankwiseError("mpirun not found: install Open MPI (apt-get install openmpi-bin)")
    from rankwise.workflows.optimize import run_optimize

    exp = Experiment("real-mpi", "real Open MPI on localhost: all-to-all, 4 ranks", "localhost (real MPI)",
                     "size", "us")
    quiet = Console(quiet=True)  # the pipeline's own output; the table below says it all
    p, c = run_optimize(console=quiet, app="alltoall", args=["--sizes", "1K,64K", "--iterations", "20"],
                        launcher="mpirun -np 4 --oversubscribe", group_by="rank", out=lab.out / "real-mpi",
                        fmt="openmpi", repeats=lab.repeats)
    predicted = c.predicted if c.predicted is not None else [float("nan")] * len(c.sizes)
    exp.rows = [Row(format_size(s), b, a, predicted=x) for (s, b, a, _), x in zip(c.rows(), predicted)]
    if p.before_hosts == p.after_hosts:
        exp.note = ("rankwise kept the default placement: both columns ran the same placement, "
                    "their difference is this machine's noise")
    return [exp]


EXPERIMENTS: dict[str, Callable[[Lab, bool], list[Experiment]]] = {
    "alltoall": alltoall, "stencil": stencil, "scaling": scaling, "groups": groups, "uniform": uniform,
    "real": real_mpi}


def show(exp: Experiment, console: Console) -> None:
    table = Table(title=escape(f"{exp.title}  [platform: {exp.platform}]"), title_justify="left")
    table.add_column(exp.key)
    extra = list(exp.rows[0].extra) if exp.rows else []
    for col in extra:
        table.add_column(col, justify="right")
    before = "1d/2d best" if exp.name == "stencil-modes" else "default"
    after = "3d (2-2-2)" if exp.name == "stencil-modes" else "rankwise"
    table.add_column(f"{before} ({exp.unit})", justify="right")
    table.add_column(f"{after} ({exp.unit})", justify="right")
    table.add_column("speed-up", justify="right")
    predicted = any(np.isfinite(r.predicted) for r in exp.rows)
    if predicted:
        table.add_column("predicted", justify="right")
    for r in exp.rows:
        cells = [r.key, *[r.extra[c] for c in extra], f"{r.before:.6g}", f"{r.after:.6g}", f"x{r.speedup:.2f}"]
        if predicted:
            cells.append(f"x{r.predicted:.2f}" if np.isfinite(r.predicted) else "-")
        table.add_row(*cells)
    console.print(table)
    if exp.note:
        console.print(escape(exp.note), highlight=False)
    elif predicted:
        rows = [r for r in exp.rows if np.isfinite(r.predicted)]
        close = sum(abs(r.prediction_error) <= PREDICTION_TOLERANCE for r in rows)
        worst = max(rows, key=lambda r: abs(r.prediction_error))
        console.print(f"predicted speed-up within {PREDICTION_TOLERANCE:.0%} of the measured one: {close}/{len(rows)} "
                      f"rows (worst {worst.prediction_error:+.1%}, {escape(worst.key)})", highlight=False)
    if exp.goal:
        verdict = "[green]PASS[/green]" if exp.passed else "[red]FAIL[/red]"
        console.print(f"goal: {exp.goal} — {verdict}")


def save(exp: Experiment, out: Path) -> tuple[Path, Path]:
    from rankwise.report.plots import plot_rows

    extra = list(exp.rows[0].extra) if exp.rows else []
    predicted = any(np.isfinite(r.predicted) for r in exp.rows)
    head = ",".join([exp.key.replace(",", ";"), *extra, f"before_{exp.unit}", f"after_{exp.unit}", "speedup",
                     *(["predicted_speedup"] if predicted else [])])
    lines = [",".join([r.key.replace(",", ";"), *[r.extra[c] for c in extra], f"{r.before:.6g}",
                       f"{r.after:.6g}", f"{r.speedup:.4f}", *([f"{r.predicted:.4f}"] if predicted else [])])
             for r in exp.rows]
    csv = out / f"{exp.name}.csv"
    write_atomic(csv, "\n".join([head, *lines]) + "\n")
    png = plot_rows(exp.title, [r.key for r in exp.rows], [r.before for r in exp.rows],
                    [r.after for r in exp.rows], exp.unit, out / f"{exp.name}.png",
                    labels=("1d/2d best", "3d (2-2-2)") if exp.name == "stencil-modes" else ("default", "rankwise"))
    return csv, png


def run_bench(out: Path, only: list[str] | None, quick: bool, repeats: int, console: Console) -> bool:
    names = only or list(EXPERIMENTS)
    unknown = [n for n in names if n not in EXPERIMENTS]
    if unknown:
        raise UsageError(f"--only: unknown experiment '{unknown[0]}' (choose from {', '.join(EXPERIMENTS)})")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RankwiseError(f"{out}: cannot create the output folder: {exc.strerror}") from None
    lab = Lab(out, console, repeats)
    ok = True
    for name in names:
        console.rule(f"[bold]{name}[/bold]")
        for exp in EXPERIMENTS[name](lab, quick):
            show(exp, console)
            csv, png = save(exp, out)
            console.print(escape(f"written: {csv}, {png}"), highlight=False)  # under the user's --out
            ok &= exp.passed is not False
    return ok
