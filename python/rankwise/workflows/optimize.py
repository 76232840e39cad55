"""`rankwise optimize`: probe (or reuse a fresh model) -> know the traffic (pattern,
matrix, or profile the app) -> choose nodes and map -> write the launcher
file -> verify: run the app in the default and the optimized placement,
interleaved, several times, and report before / after / speed-up.

Works on the simulated cluster (a SimGrid platform, smpirun) and with a
real launcher (mpirun, srun). An application that is one of rankwise's
benchmark programs is verified per message size from its tables; any
other by its run time (simulated time under SMPI, wall time otherwise)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from rich.markup import escape

from rankwise.cluster.benchmark_programs import PROGRAMS, PREFIX, run_benchmark
from rankwise.util.errors import RankwiseError, UsageError
from rankwise.map.decision import Decision, decide, predicted_speedup
from rankwise.map.mapping import MapResult, Network
from rankwise.traffic.matrix import CommMatrix
from rankwise.model.model import Model
from rankwise.cluster.placement import Placement, placement_on_nodes
from rankwise.predict.predictor import PredictNetwork
from rankwise.predict.workload import Workload, workload_of

OUTLIER_FACTOR = 10.0  # Cui et al. 2020: runs an order of magnitude off are dropped


def benchmark_name(app: str) -> str | None:
    """'alltoall' / 'rankwise-bench-alltoall' -> 'alltoall'; None for other apps."""
    short = app[len(PREFIX):] if app.startswith(PREFIX) else app
    return short if short in PROGRAMS else None


def robust_median(values: Sequence[float]) -> float:
    """Median after dropping runs more than OUTLIER_FACTOR off the median."""
    v = np.asarray([x for x in values if np.isfinite(x)], dtype=float)
    if v.size == 0:
        return float("nan")
    med = np.median(v)
    if med > 0:
        v = v[(v <= med * OUTLIER_FACTOR) & (v >= med / OUTLIER_FACTOR)]
    return float(np.median(v))


@dataclass
class Comparison:
    """Before (default placement) and after (rankwise) of one application."""

    label: str
    unit: str  # "us" per size (benchmark programs) or "s" (whole run)
    sizes: np.ndarray  # int64; a single 0 for a whole-run time
    before: np.ndarray
    after: np.ndarray
    runs: int
    failures: list[str] = field(default_factory=list)  # one line per failed run
    predicted: np.ndarray | None = None  # the predictor's speed-up per row, when known

    @property
    def speedup(self) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return self.before / self.after

    def prediction_errors(self) -> np.ndarray:
        """Per row: predicted speed-up / measured speed-up - 1 (NaN where unknown)."""
        if self.predicted is None:
            return np.full(self.sizes.size, np.nan)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.asarray(self.predicted, dtype=float) / self.speedup - 1

    def rows(self) -> list[tuple[int, float, float, float]]:
        return [(int(s), float(b), float(a), float(b / a) if a > 0 else float("nan"))
                for s, b, a in zip(self.sizes, self.before, self.after)]

    def to_csv(self) -> str:
        """One line per row; the predictor's speed-up as a last column when known."""
        extra = self.predicted is not None
        head = f"size,before_{self.unit},after_{self.unit},speedup" + (",predicted_speedup" if extra else "") + "\n"
        lines = [f"{s},{b:.6g},{a:.6g},{x:.4f}" + (f",{self.predicted[i]:.4f}" if extra else "") + "\n"
                 for i, (s, b, a, x) in enumerate(self.rows())]
        return head + "".join(lines)


Runner = Callable[[list[str]], dict[int, float]]  # hosts in rank order -> {size: time}


def compare(label: str, runner: Runner, before: list[str], after: list[str], *, repeats: int = 3,
            unit: str = "us", progress: Callable[[str], None] | None = None) -> Comparison:
    """Run `runner` on both host lists, interleaved (before, after, before,
    ...) so that drift in a real cluster hits both alike; per size the
    robust median over the runs. A placement whose every run failed keeps
    NaN and its error lines; the other's results stay."""
    if repeats < 1:
        raise UsageError(f"--repeats must be >= 1, got {repeats}")
    got: dict[str, list[dict[int, float]]] = {"before": [], "after": []}
    failures: list[str] = []
    for k in range(repeats):
        for name, hosts in (("before", before), ("after", after)):
            if progress:
                progress(f"{label}: {name} run {k + 1}/{repeats}")
            try:
                got[name].append(runner(hosts))
            except RankwiseError as exc:
                failures.append(f"{name} run {k + 1}: {exc}")
    sizes = sorted({s for runs in got.values() for r in runs for s in r})
    if not sizes:
        raise RankwiseError(f"{label}: no run succeeded ({failures[0] if failures else 'no output'})",
                            exit_code=1)
    med = {name: np.array([robust_median([r.get(s, np.nan) for r in runs]) for s in sizes])
           for name, runs in got.items()}
    return Comparison(label, unit, np.array(sizes, dtype=np.int64), med["before"], med["after"], repeats,
                      failures)


def job_mpi(launcher: str | None, sim) -> str:
    """What runs the job, for workload_of: "smpi" under the simulator (or
    with no launcher), else launcher_kind's "openmpi", "hydra" or "other"
    (srun: "other", its MPI unknown)."""
    from rankwise.cluster import launch
    from rankwise.measure.profile import launcher_kind

    if sim is not None or not launcher:
        return "smpi"
    return launcher_kind(launch.parse_launcher(launcher)[0])


def placed_launch(launcher: str, hosts: list[str], folder: Path) -> tuple[list[str], dict[str, str]]:
    """The launcher's words and environment that start rank k on hosts[k]:
    Open MPI's sequential mapper over a one-host-per-line hostfile, Hydra's
    machinefile (MPICH, Intel MPI: ranks follow its lines), Slurm's
    arbitrary distribution (SLURM_HOSTFILE)."""
    from rankwise.cluster import launch
    from rankwise.cluster.launcher_files import mpich, slurm
    from rankwise.measure.profile import launcher_kind

    words = launch.parse_launcher(launcher)
    placement = Placement.from_hosts(hosts)
    env: dict[str, str] = {}
    kind = "slurm" if Path(words[0]).name == "srun" else launcher_kind(words[0])
    if kind == "slurm":
        slurm.write(placement, folder / "hosts.slurm")
        words += ["--distribution=arbitrary"]
        env["SLURM_HOSTFILE"] = str(folder / "hosts.slurm")
    elif kind == "hydra":
        mpich.write(placement, folder / "machinefile")
        words += ["-f", str(folder / "machinefile")]
    else:
        (folder / "hosts").write_text("".join(f"{h}\n" for h in hosts))
        words += ["--map-by", "seq", "-hostfile", str(folder / "hosts")]
    return words, env


def benchmark_runner(program: str, args: Sequence[str], *, sim=None, launcher: str | None = None,
                     table: str | None = None, timeout: float | None = 1800) -> Runner:
    """Median time per size of one table of a benchmark program, with rank k
    on the k-th host (smpirun's hostfile order, or placed_launch)."""
    import shlex
    import tempfile

    def run(hosts: list[str]) -> dict[int, float]:
        if sim is not None:
            res = run_benchmark(program, args, sim=sim, hosts=hosts, timeout=timeout)
        else:
            with tempfile.TemporaryDirectory(prefix="rankwise-verify-") as tmp:
                words, env = placed_launch(launcher, hosts, Path(tmp))
                res = run_benchmark(program, args, launcher=shlex.join(words), timeout=timeout, env=env)
        t = res[table] if table else res.table
        return {int(s): float(m) for s, m in zip(t.size, t.median_us)}
    return run


@dataclass
class Plan:
    """What `optimize` decided, before any verification."""

    model: Model
    network: Network
    traffic: CommMatrix
    result: MapResult
    placement: Placement
    default: Placement
    decision: Decision | None = None
    mpi: str = "smpi"  # what runs the job (workload_of): how its all-to-allv goes

    @property
    def before_hosts(self) -> list[str]:
        return self.default.hosts_in_rank_order()

    @property
    def after_hosts(self) -> list[str]:
        return self.placement.hosts_in_rank_order()

    @property
    def chosen_model_nodes(self) -> list[int]:
        """Model indices of the nodes holding ranks (to mark on heatmaps)."""
        return sorted(self.model.names.index(self.network.names[v]) for v in set(self.result.node_of.tolist()))

    def predicted_speedup(self, workload: Workload) -> float:
        """The predictor's default / rankwise time for another workload on
        the same two placements (a benchmark row's own message size)."""
        return predicted_speedup(workload, self.decision.predictor, self.decision.default.node_of,
                                 self.result.node_of)


def plan(model: Model, traffic: CommMatrix, hosts: Sequence[tuple[str, int]] | None = None, *,
         algorithm: str = "auto", objective: str = "time", selection: str = "weighted", seed: int = 1,
         allow_missing: bool = False, workload: Workload | None = None, min_gain: float = 0.02,
         mpi: str = "smpi") -> Plan:
    """Map the traffic on the model's network, the predictor deciding
    (rankwise.map.decision); the default is the launchers' block placement over
    the allocation in its order. `workload`: what the traffic stands for,
    when known better than its matrix says (a benchmark's pinned algorithm);
    else the matrix as `mpi` runs it (workload_of)."""
    network = Network.from_model(model, hosts, fill_missing=allow_missing)
    predictor = PredictNetwork.from_model(model, hosts, fill_missing=allow_missing)
    groups = model.groups()[[model.names.index(h) for h in network.names]]
    d = decide(traffic, network, predictor, workload=workload or workload_of(traffic, mpi=mpi), algorithm=algorithm,
               objective=objective, selection=selection, seed=seed, min_gain=min_gain, groups=groups)
    result = d.result
    placement = placement_on_nodes(network.names, result.node_of, result.slot_of)
    block = Placement.block([f"n{i}" for i in range(network.n_nodes)], network.slots.tolist(), traffic.n_ranks)
    default = placement_on_nodes(network.names, block.node_of, block.slot_of)
    return Plan(model, network, traffic, result, placement, default, d, mpi)


def predicted_rows(p: Plan, sizes, spec_at: Callable[[int], str]) -> np.ndarray:
    """The predictor's speed-up of each row: the job's workload at that row's
    size, in the default and in rankwise's placement."""
    from rankwise.traffic.patterns import generate

    return np.array([p.predicted_speedup(workload_of(generate(spec_at(int(s))), mpi=p.mpi)) for s in sizes])


def with_bytes(spec: str, key: str = "bytes") -> Callable[[int], str]:
    """spec_at for a pattern whose `key` is the row's message size."""
    name, _, rest = spec.partition(":")
    items = [kv for kv in rest.split(",") if kv and not kv.startswith(key + "=")]
    return lambda size: f"{name}:{','.join([*items, f'{key}={size}'])}"


def benchmark_spec(bench: str, args: Sequence[str], n_ranks: int, table: str | None = None) -> str | None:
    """The pattern a benchmark program's rows stand for, at its first row's
    size (with_bytes sets each row's): alltoall, and the stencil when one
    mode is timed (--mode or --table 1d / 2d / 3d); None for the others,
    whose rows are costed by the profiled traffic as a whole."""
    from rankwise.traffic.patterns import dims_create

    opts = {}
    for i, word in enumerate(args):
        if word.startswith("--"):
            key, eq, value = word.partition("=")
            opts[key] = value if eq else (args[i + 1] if i + 1 < len(args) else "")
    if bench == "alltoall":
        return f"alltoall:ranks={n_ranks},bytes=1K"
    if bench == "stencil":
        mode = table or opts.get("--mode", "all")
        mode = "3d" if mode == "2-2-2" else mode
        if mode not in ("1d", "2d", "3d") or "--periodic" in args:
            return None
        grid = opts.get("--grid") or "x".join(map(str, dims_create(n_ranks, 3)))
        return f"stencil3d:grid={grid},bytes=1K,mode={mode}"
    return None


def model_age(model: Model) -> float:
    """Seconds since the model was first written (inf when unknown)."""
    return time.time() - model.created if np.isfinite(model.created) else float("inf")


def app_runner(app: str, args: Sequence[str], *, sim=None, launcher: str | None = None,
               timeout: float | None = 3600, ok_codes: Sequence[int] = (0,)) -> Runner:
    """Time of a whole run of any application: simulated seconds under SMPI
    (smpi/display-timing), wall seconds under a real launcher.

    An application linked with the profiler (SMPI, or --mpi-flags) is told
    not to write its matrix (RANKWISE_PROFILE_OUT=none): that end-of-run
    write would be timed too. ok_codes: exit codes of a run that finished
    (an application that always ends with `return 1`, as NAS DT does)."""
    import re
    import subprocess
    import tempfile

    from rankwise.cluster import launch
    from rankwise.sim import smpi
    from rankwise.cluster.hostfile import write_hostfile

    def run(hosts: list[str]) -> dict[int, float]:
        with tempfile.TemporaryDirectory(prefix="rankwise-verify-") as tmp:
            hf = Path(tmp) / "hosts"
            write_hostfile(hf, hosts)
            env = launch.mpi_environment()
            env["RANKWISE_PROFILE_OUT"] = "none"
            if sim is not None:
                cmd = smpi.smpirun_command(Path(app).resolve(), list(args), sim, hf, len(hosts),
                                           extra_cfg=("smpi/display-timing:yes",))
                cmd.insert(-1 - len(args), "--log=smpi_utils.thres:info")
            else:
                words, extra = placed_launch(launcher, hosts, Path(tmp))
                cmd = [*words, str(Path(app).resolve()), *args]
                env.update(extra)
            start = time.monotonic()
            try:
                proc = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=timeout,
                                      env=env, cwd=tmp, stdin=subprocess.DEVNULL)
            except subprocess.TimeoutExpired:
                raise RankwiseError(f"{app} did not finish within {timeout:g} s", exit_code=1) from None
            except OSError as exc:
                raise RankwiseError(f"cannot start {cmd[0]}: {exc.strerror}") from None
            wall = time.monotonic() - start
        if proc.returncode not in ok_codes:
            log = [line for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]
            raise RankwiseError(launch.failure_message(app, launch.RunResult(proc.returncode, log)), exit_code=1)
        if sim is None:
            return {0: wall}
        m = re.search(r"Simulated time: ([0-9.eE+-]+) seconds", proc.stdout + proc.stderr)
        if not m:
            raise RankwiseError(f"{app}: smpirun did not report the simulated time", exit_code=1)
        return {0: float(m.group(1))}
    return run


def _stage(console, text: str):
    return console.status(f"[bold]{escape(text)}[/bold]", spinner="dots")


def sim_launch_hint(platform: Path, hosts: Sequence[str], hostfile: Path, app: str, args: Sequence[str]) -> str:
    """The smpirun command that runs the application on the simulated
    cluster with rank k on hosts[k]; writes that hostfile."""
    import shlex

    from rankwise.cluster.hostfile import write_hostfile
    from rankwise.sim import smpi

    write_hostfile(hostfile, list(hosts))
    words = ["smpirun", "-np", str(len(hosts)), "-platform", str(platform), "-hostfile", str(hostfile)]
    words += [f"--cfg={cfg}" for cfg in smpi.SMPI_SETTINGS]
    return shlex.join([*words, app, *args])


def run_optimize(*, console, app: str | None, args: Sequence[str], sim=None, launcher: str | None = None,
                 model_path: Path | None = None, max_age: float = 86400.0, reprobe: bool = False,
                 hosts: Path | None = None, ranks_per_node: int | None = None, ranks: int | None = None,
                 pattern: str | None = None, matrix: Path | None = None, algorithm: str = "auto",
                 objective: str = "time", seed: int = 1, fmt: str = "slurm", out: Path = Path("rankwise-optimize"),
                 verify: bool = True, repeats: int = 3, table: str | None = None, group_by: str | None = None,
                 allow_missing: bool = False):
    """The whole pipeline, printing each stage; returns (plan, comparison or None)."""
    from rankwise.util import paths
    from rankwise.cluster.allocation import read_allocation
    from rankwise.report.placement import print_comparison, print_prediction, print_prediction_check
    from rankwise.cluster.launcher_files import FORMATS, usage_hint, write_placement
    from rankwise.traffic.patterns import generate
    from rankwise.report.plots import plot_model, plot_speedup
    from rankwise.measure.probe import LIGHT_SIM_PROBE, ProbeOptions, probe_launcher, probe_sim
    from rankwise.measure.profile import profile_launcher, profile_sim

    if fmt not in FORMATS:
        raise UsageError(f"--format: unknown format '{fmt}' (choose from {', '.join(FORMATS)})")
    if pattern is not None and matrix is not None:
        raise UsageError("give the traffic as --pattern or --matrix, not both")
    if app is None and pattern is None and matrix is None:
        raise UsageError("nothing to map: give an application to profile, or --pattern / --matrix")
    if ranks_per_node is not None and ranks_per_node < 1:
        raise UsageError(f"--ranks-per-node must be >= 1, got {ranks_per_node}")
    if repeats < 1:
        raise UsageError(f"--repeats must be >= 1, got {repeats}")
    bench = benchmark_name(app) if app else None
    if app and not bench and not Path(app).exists():
        raise RankwiseError(f"application '{app}' not found (a path, or one of {', '.join(PROGRAMS)})")
    platform_hosts = None
    if sim is not None:
        from rankwise.sim.platform_file import read_platform
        from rankwise.predict.validate import platform_files

        if not Path(sim).exists():
            raise RankwiseError(f"{sim}: platform file not found")
        sim, _ = platform_files(sim)  # a folder of rankwise sim platform: its platform.xml
        known = read_platform(sim)  # hosts in file order (None: a compiled platform)
        platform_hosts = None if known is None else {h for h, _ in known}
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RankwiseError(f"{out}: cannot create the output folder: {exc.strerror}") from None
    written: list[tuple[str, Path]] = []
    app_exit_ok = [0]  # exit codes of a run that finished (see the profile step)

    # 1. the model
    path = Path(model_path) if model_path else out / "model.rwm"
    if path.exists() and not reprobe:
        model = Model.load(path)
        age = model_age(model)
        note = f"reusing {path} ({model.n_nodes} nodes, measured {age / 3600:.1f} h ago)"
        if age > max_age:
            console.print(f"[yellow]warning:[/] {escape(str(path))} is {age / 3600:.1f} h old "
                          f"(--max-age {max_age:g} s): the network may have changed; --reprobe measures it again",
                          highlight=False)
        console.print(f"[bold]1/4 model[/bold]  {escape(note)}", highlight=False)
    else:
        console.print(f"[bold]1/4 model[/bold]  probing into {escape(str(path))}", highlight=False)
        if sim is not None:
            model = probe_sim(sim, path, LIGHT_SIM_PROBE, ranks_per_node=max(2, ranks_per_node or 2))
        else:
            model = probe_launcher(launcher, path, ProbeOptions(group_by=group_by), hostfile=hosts)
        written.append(("model", path))
    if platform_hosts is not None:
        stray = [h for h in model.names if h not in platform_hosts]
        if stray:
            raise RankwiseError(f"{path}: node '{stray[0]}' of the model is not a host of {sim} (a model probed "
                                "on another platform?)")
    if hosts is not None:
        alloc = read_allocation(hosts)
    else:
        alloc = [(h, int(k)) for h, k in zip(model.names, model.ranks_per_node)]
    if ranks_per_node is not None:
        alloc = [(h, ranks_per_node) for h, _ in alloc]
    slots = sum(s for _, s in alloc)

    # 2. the traffic
    if pattern is not None or matrix is not None:
        traffic = generate(pattern) if pattern is not None else CommMatrix.load(matrix)
        where = f"pattern {pattern}" if pattern is not None else str(matrix)
    else:
        n = ranks or slots
        if n > slots:
            raise UsageError(f"--ranks {n}: the allocation has {slots} slots")
        tpath = out / "traffic.rwc"
        default_hosts = [h for h, s in alloc for _ in range(s)][:n]  # the launchers' block order
        with _stage(console, f"2/4 traffic: profiling {app} on {n} ranks"):
            if bench and sim is not None:
                run_benchmark(bench, args, sim=sim, hosts=default_hosts, profile=tpath)
                profiled = None
            elif sim is not None:
                import tempfile

                from rankwise.cluster.hostfile import write_hostfile
                with tempfile.TemporaryDirectory(prefix="rankwise-") as tmp:
                    hf = Path(tmp) / "hosts"
                    write_hostfile(hf, default_hosts)
                    profiled = profile_sim(sim, app, list(args), tpath, hostfile=hf, echo=False)
            else:
                binary = str(paths.program(PREFIX + bench, "mpi")) if bench else app
                profiled = profile_launcher(launcher, binary, list(args), tpath, echo=False)
        if profiled is not None and profiled.warning:
            console.print(f"[yellow]warning:[/] {escape(profiled.warning)}", highlight=False)
            app_exit_ok.append(profiled.returncode)
        traffic = CommMatrix.load(tpath)
        where = f"profile of {app}"
        written.append(("traffic", tpath))
    traffic.require_traffic(where)
    if ranks is not None and ranks != traffic.n_ranks:
        raise UsageError(f"--ranks {ranks}: the traffic ({where}) has {traffic.n_ranks} ranks")
    console.print(f"[bold]2/4 traffic[/bold]  {escape(where)}: {traffic.n_ranks} ranks, {traffic.nnz} pairs, "
                  f"{traffic.total_bytes / 2**20:.1f} MiB", highlight=False)

    # 3. the mapping
    with _stage(console, "3/4 mapping"):
        p = plan(model, traffic, alloc, algorithm=algorithm, objective=objective, seed=seed,
                 allow_missing=allow_missing, mpi=job_mpi(launcher, sim))
    placement_path = out / f"placement.{fmt}"
    write_placement(p.placement, fmt, placement_path, app=" ".join([app or "./app", *args]))
    written.append((f"launcher file ({fmt})", placement_path))
    console.print("[bold]3/4 mapping[/bold]", highlight=False)
    if p.network.filled:
        console.print(f"[yellow]warning:[/] the model lacks {p.network.filled} pair(s) of this allocation; "
                      "they are costed as its slowest measured pair (--allow-missing)", highlight=False)
    print_prediction(traffic, p.network, p.result, objective, console)
    heat = plot_model(model, out / "model.png", highlight=p.chosen_model_nodes)
    written.append(("model heatmap, chosen nodes marked", heat))

    # 4. verification
    comparison = None
    if verify and app:
        runner = (benchmark_runner(bench, args, sim=sim, launcher=launcher, table=table) if bench
                  else app_runner(app, args, sim=sim, launcher=launcher, ok_codes=app_exit_ok))
        label = f"{app} {' '.join(args)}".strip()
        with _stage(console, f"4/4 verifying: {label}") as status:
            comparison = compare(label, runner, p.before_hosts, p.after_hosts, repeats=repeats,
                                 unit="us" if bench else "s",
                                 progress=lambda t: status.update(f"[bold]4/4 {escape(t)}"))
        spec = traffic.pattern if pattern is not None and "bytes=" in traffic.pattern else (
            benchmark_spec(bench, args, traffic.n_ranks, table) if bench else None)
        whole = False
        if bench and spec is not None and p.before_hosts != p.after_hosts:
            # The job's pattern at each row's size: the predictor's speed-up beside the measured one.
            comparison.predicted = predicted_rows(p, comparison.sizes, with_bytes(spec))
        else:
            # The default kept (nothing can differ but noise), one whole-run time, or a benchmark
            # whose rows have no pattern of their own: the traffic's predicted gain as a whole.
            comparison.predicted = np.full(comparison.sizes.size, p.result.gain)
            whole = bool(bench) and comparison.sizes.size > 1 and p.before_hosts != p.after_hosts
        console.print(f"[bold]4/4 verified[/bold] ({repeats} interleaved runs each, outliers > "
                      f"{OUTLIER_FACTOR:g}x dropped)", highlight=False)
        print_comparison(comparison, console, title=f"{label}: default placement vs rankwise", errors=True)
        print_prediction_check(comparison, console, source=path.name, whole=whole)
        csv = out / "verify.csv"
        from rankwise.util.files import write_atomic
        write_atomic(csv, comparison.to_csv())
        written.append(("before/after table", csv))
        if comparison.sizes.size > 1:
            written.append(("speed-up plot", plot_speedup([comparison], out / "speedup.png")))
    elif verify:
        console.print("[bold]4/4 verify[/bold]  skipped: no application given", highlight=False)

    command = " ".join([app or "./app", *args])
    if sim is not None:
        # The simulated cluster is run with smpirun, not with the launcher file's srun/mpirun.
        smpi_hosts = out / "placement.smpi-hosts"
        program = str(paths.program(PREFIX + bench, "smpi")) if bench else (app or "./app")
        hint = sim_launch_hint(Path(sim).resolve(), p.after_hosts, smpi_hosts, program, list(args))
        written.append(("smpirun hostfile, rank order", smpi_hosts))
    else:
        hint = usage_hint(fmt, placement_path, traffic.n_ranks, command)
    console.print("\n[bold]written[/bold]", highlight=False)
    # soft_wrap: a path or a command is printed whole, to be copied (a narrow console wraps it otherwise)
    for what, f in written:
        console.print(escape(f"  {f}  ({what})"), highlight=False, soft_wrap=True)
    console.print(f"launch: {escape(hint)}", highlight=False, soft_wrap=True)
    return p, comparison
