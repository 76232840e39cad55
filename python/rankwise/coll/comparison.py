"""`rankwise coll bench`: the collectives library measured against the MPI's own
collectives (docs/concepts/collectives.md, "coll bench").

For each job shape (ranks, ranks per node) the collectives benchmark program
(rankwise-bench-collectives) runs three times:

- default: the MPI's own collectives. Under SMPI, Open MPI's choices
  (`smpi/coll-selector:ompi`), as the issue's baseline;
- binomial: under SMPI, SMPI's own algorithms pinned to binomial trees
  (`smpi/bcast:binomial_tree`, `reduce:binomial`, `gather:ompi_binomial`,
  `scatter:ompi_binomial`, `allreduce:redbcast` and `allgather:GB` over
  them); under a real MPI, the library with RANKWISE_COLL_<OP>=binomial;
- rankwise: the program with librankwise_coll (SMPI: the build linked
  --whole-archive; real MPI: LD_PRELOAD) and RANKWISE_COLL_RULES set to
  the rules `rankwise coll tune` writes for that allocation.

Under SMPI every run has the same deterministic settings (rankwise.sim.smpi)
and the send/receive overheads of collective experiments (1 us below the
eager limit; SMPI's default of 0 makes flat trees win), and the program
starts every call on all ranks at one simulated instant, so one timed call
per size is the measurement."""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rankwise.cluster import launch

from rankwise.util import paths
from rankwise.util.errors import RankwiseError, UsageError
from rankwise.traffic.patterns import format_size
from rankwise.cluster.benchmark_programs import SMPI_SHARED_BLOCK, Table, parse_output
from rankwise.sim import smpi

OPS = ("bcast", "reduce", "gather", "scatter", "allreduce", "allgather")
VARIANTS = ("default", "binomial", "rankwise")
PROGRAM = "rankwise-bench-collectives"
LINKED = "rankwise-bench-collectives-coll"  # SMPI: linked with librankwise_coll.a

SIZES = [8 << k for k in range(18)]  # 8 B .. 1 MiB
QUICK_SIZES = [8, 64, 128, 256, 512, 1024, 4096, 32768, 262144]
SHAPES = [(r, p) for p in (1, 4) for r in (16, 32, 64, 128)]
QUICK_SHAPES = [(16, 1), (32, 1), (16, 4), (32, 4)]

SMPI_DEFAULT = ("smpi/coll-selector:ompi",)
SMPI_BINOMIAL = ("smpi/bcast:binomial_tree", "smpi/reduce:binomial", "smpi/gather:ompi_binomial",
                 "smpi/scatter:ompi_binomial", "smpi/allreduce:redbcast", "smpi/allgather:GB")
SLOWER_LIMIT = 0.02  # never more than 2 % slower than the passthrough
# "At least as fast" allows 2 ns: the program prints times to the ns, and SimGrid updates
# simulated times to 1e-9 s (precision/timing), so one call's time moves by a ns with its start.
SAME_US = 0.002


@dataclass(frozen=True)
class Band:
    """A goal of issue 11: rankwise's mean gain over `label`'s sizes."""

    label: str
    contains: Callable[[int], bool]
    goal: float


BANDS = {
    "bcast": Band("below 64 KiB", lambda s: s < 65536, 0.20),  # Wang et al. 2024: 15.5 %
    "reduce": Band("below 2 KiB", lambda s: s < 2048, 0.15),  # 12.1 %
    "gather": Band("64-512 B", lambda s: 64 <= s <= 512, 0.12),  # 10 %
}
SCATTER_GOAL = 0.10  # where the predictor chose rankwise's tree


@dataclass
class Point:
    """One (shape, op, size): the slowest rank's time per call, us."""

    platform: str
    ranks: int
    rpn: int  # 0: not known (a real launcher's own placement)
    op: str
    size: int
    default: float
    binomial: float
    rankwise: float
    runs: str = ""  # what the rules chose: 'MPI' (passthrough), a tree's construction, or '' (no rules)
    predicted: float = float("nan")  # the rules' predicted speed-up over the passthrough

    @property
    def tree_ran(self) -> bool:
        """The rules ran one of rankwise's algorithms here (not the MPI's own)."""
        return bool(self.runs) and not self.runs.startswith("MPI")

    def gain(self, base: str) -> float:
        """1 - rankwise / base: the share of the base's time rankwise saves."""
        ref = getattr(self, base)
        return 1.0 - self.rankwise / ref if ref > 0 else float("nan")


@dataclass
class Goal:
    text: str
    figure: str
    passed: bool | None  # None: nothing to judge (no size in the band)


@dataclass
class Shape:
    ranks: int
    rpn: int


# --------------------------------------------------------------- rules


_RULE = re.compile(r"^rule\s+(.*)$")


def read_choices(path: Path) -> list[tuple[str, int, int, str, float]]:
    """(op, lo, hi, what runs, predicted speed-up over the passthrough) of a
    rules file's root-0 rules: 'MPI' for the passthrough, else the tree's
    construction ('eager', 'binary /8K')."""
    out = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        m = _RULE.match(line.strip())
        if not m:
            continue
        kv = dict(w.split("=", 1) for w in m.group(1).split() if "=" in w)
        if kv.get("root", "0") not in ("0", "*") or ":" not in kv.get("bytes", ""):
            continue
        lo, hi = (int(x) for x in kv["bytes"].split(":"))
        alg = kv.get("alg", "")
        what = "MPI" if alg == "passthrough" else kv.get("via", alg)
        seg = int(kv.get("segment", "0") or 0)
        if what != "MPI" and seg:
            what += f" /{format_size(seg)}"
        try:
            speedup = float(kv["passthrough-predicted"]) / float(kv["predicted"])
        except (KeyError, ValueError, ZeroDivisionError):
            speedup = float("nan")
        out.append((kv.get("op", ""), lo, hi, what, speedup))
    return out


NOT_AS_ASKED = "NOT AS ASKED"  # the start of a row's 'runs' when the library ran something else


def verified(asked: str, ran: set[str]) -> str:
    """A row's 'runs' from what the rules asked and what the library traced: as asked, or
    flagged (a rankwise algorithm asked and the MPI's own ran, or the other way round); the
    flagged rows count as the MPI's own wherever rankwise's runs are counted."""
    wanted = bool(asked) and not asked.startswith("MPI")
    if wanted and not ran:
        return f"MPI: {NOT_AS_ASKED} (rules: {asked})"
    if not wanted and ran:
        return f"{'/'.join(sorted(ran))}: {NOT_AS_ASKED} (rules: {asked or 'none'})"
    return asked


def choice_at(choices, op: str, size: int) -> tuple[str, float]:
    """What the rules run for (op, size) and its predicted speed-up."""
    for o, lo, hi, what, speedup in choices:
        if o == op and lo <= size <= hi:
            return what, speedup
    return "MPI (no rule)", float("nan")


def run_tune(args: list[str], output: Path) -> Path:
    """`rankwise coll tune ARGS -o output`, the verb users run."""
    cmd = [sys.executable, "-m", "rankwise", "coll", "tune", *args, "-o", str(output)]
    r = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if r.returncode != 0:
        lines = [x for x in (r.stderr + r.stdout).splitlines() if x.strip()]
        raise RankwiseError(f"rankwise coll tune failed: {lines[-1] if lines else f'exit code {r.returncode}'}")
    return output


# ------------------------------------------------------------- targets


# Simulated runs start every call at a whole simulated second, so each call of the three runs meets the
# same state of a link whose bandwidth varies over time (the default platform's node-30: a 0.01 s cycle);
# otherwise a call's time would depend on how long the calls before it took in that run. Sleeping
# costs no wall time under SMPI; the longest call measured (an allgather of 1 MiB per rank on 128
# ranks over binomial trees) takes well under a second.
SIM_START_EVERY_US = 1_000_000


def program_args(ops: Sequence[str], sizes: Sequence[int], iterations: int, start_every_us: int = 0) -> list[str]:
    """rankwise-bench-collectives' arguments: these operations and sizes, one warm-up call."""
    args = ["--collectives", ",".join(ops), "--sizes", ",".join(str(s) for s in sizes),
            "--iterations", str(iterations), "--warmup", "1"]
    return args + (["--start-every", str(start_every_us)] if start_every_us else [])


def clean_environment() -> dict[str, str]:
    """The MPI environment without RANKWISE_COLL_* (each run sets its own)."""
    return {k: v for k, v in launch.mpi_environment().items() if not k.startswith("RANKWISE_COLL_")}


def run_program(cmd: list[str], env: dict[str, str], what: str, simulated: bool, timeout: float = 3600,
         stderr: list[str] | None = None) -> dict[str, Table]:
    """Run rankwise-bench-collectives (`cmd`, as a launcher or smpirun gives it): its tables,
    or its failure as one line naming `what`."""
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, errors="replace", env=env, timeout=timeout,
                           stdin=subprocess.DEVNULL, start_new_session=True)
    except subprocess.TimeoutExpired:
        raise RankwiseError(f"{what} did not finish within {timeout:g} s") from None
    except OSError as exc:
        raise RankwiseError(f"cannot start {cmd[0]}: {exc.strerror}") from None
    if r.returncode != 0:
        log = [x for x in (r.stdout + "\n" + r.stderr).splitlines() if x.strip()]
        msg = (smpi.failure_message(PROGRAM, r.returncode, log) if simulated
               else launch.failure_message(PROGRAM, launch.RunResult(r.returncode, log)))
        raise RankwiseError(f"{what}: {msg}")
    result = parse_output(r.stdout, PROGRAM)
    if not result.tables:
        raise RankwiseError(f"{what}: {PROGRAM} printed no table")
    if stderr is not None:
        stderr.extend(r.stderr.splitlines())
    return result.tables


_TRACE = re.compile(r"rankwise-coll: (\w+) (\w+) (\d+) bytes(?: \(.*\))?")


def traced(lines: Sequence[str]) -> dict[tuple[str, int], set[str]]:
    """What the library says it ran (RANKWISE_COLL_TRACE=1, rank 0): (op, bytes) -> the
    algorithms of its own that ran; a call the MPI ran itself (passthrough) leaves no line."""
    out: dict[tuple[str, int], set[str]] = {}
    for line in lines:
        m = _TRACE.fullmatch(line.strip())
        if m:
            out.setdefault((m.group(1), int(m.group(3))), set()).add(m.group(2))
    return out


def check_rules_file(path: Path, ranks: int | None = None) -> None:
    """A --rules file read by the library's own reader before anything runs: a file the library
    would refuse (truncated, another version, binary, empty) or of another job size would make
    every 'rankwise' row the MPI's own collective, reported as rankwise's."""
    from rankwise.coll.selection import Rules
    from rankwise.util.inputs import check_input

    check_input(path)
    try:
        rules = Rules(path)
    except RankwiseError as exc:
        text = str(exc)
        raise RankwiseError(f"--rules: {text if str(path) in text else f'{path}: {text}'}") from None
    try:
        if ranks is not None and rules.comm_size != ranks:
            raise RankwiseError(f"--rules: {path} is for {rules.comm_size} ranks; the job runs {ranks} "
                                "(the library would pass every call through)")
    finally:
        rules.close()


class SimTarget:
    """A SimGrid platform: a folder of `rankwise sim platform` (platform.xml
    beside ground_truth.json) or any platform.xml (a user's own), whose
    hosts come from the XML in file order; the first ranks / rpn hosts,
    block placement. The rules are tuned from `model` (a probed model) when
    given, else from the generated platform's ground truth."""

    simulated = True

    def __init__(self, path: Path, overhead: float | None, model: Path | None = None):
        from rankwise.sim.platform_file import read_platform
        from rankwise.predict.validate import platform_files

        try:
            self.xml, self.folder = platform_files(path)
        except RankwiseError as exc:
            raise UsageError(f"--sim {exc}") from None
        self.label = (self.folder if Path(path).is_dir() or self.xml.name == "platform.xml"
                      else self.xml.with_suffix("")).resolve().name
        self.overhead = self.recv_overhead = overhead
        self.model = model
        if model is None and not (self.folder / "ground_truth.json").is_file():
            raise UsageError(f"--sim {path}: no ground_truth.json beside {self.xml.name} (a platform of your "
                             f"own?): tune from a probed model, --model MODEL (rankwise probe --sim {self.xml} "
                             "-o MODEL)")
        self.hosts = read_platform(self.xml) or []
        if not self.hosts:
            raise RankwiseError(f"{self.xml}: a compiled platform lists no hosts; give its XML")
        self.modelled: set[str] | None = None
        if model is not None:
            from rankwise.model.model import Model

            probed = Model.load(model)
            self.modelled = set(probed.names)
            if overhead is None:
                self.overhead, self.recv_overhead = smpi.model_overheads(probed)
        if self.overhead is None:
            self.overhead, self.recv_overhead = smpi.COLLECTIVE_OVERHEADS

    def missing(self, shape: Shape) -> str | None:
        """The first host the shape runs on that the model lacks, or None."""
        if self.modelled is None:
            return None
        return next((h for h in self.nodes(shape) if h not in self.modelled), None)

    def unfit(self, shape: Shape) -> str | None:
        """Why the platform cannot hold the shape, or None."""
        if shape.ranks % shape.rpn:
            return f"{shape.ranks} ranks are not a multiple of {shape.rpn} per node"
        if shape.ranks // shape.rpn > len(self.hosts):
            return f"needs {shape.ranks // shape.rpn} nodes, the platform has {len(self.hosts)}"
        if any(cores < shape.rpn for _, cores in self.hosts[: shape.ranks // shape.rpn]):
            return f"a node has fewer than {shape.rpn} cores"
        return None

    def nodes(self, shape: Shape) -> list[str]:
        return [name for name, _ in self.hosts[: shape.ranks // shape.rpn]]

    def rules(self, shape: Shape, ops: Sequence[str], sizes: Sequence[int], output: Path) -> Path:
        network = ["--model", str(self.model)] if self.model is not None else ["--platform", str(self.folder)]
        return run_tune([*network, "--nodes", ",".join(self.nodes(shape)),
                         "--ranks", str(shape.ranks), "--ranks-per-node", str(shape.rpn),
                         "--overhead", repr(self.overhead), "--recv-overhead", repr(self.recv_overhead),
                         "--ops", ",".join(ops),
                         "--sizes", ",".join(str(s) for s in sizes)], output)

    def run(self, variant: str, shape: Shape, ops, sizes, iterations: int, rules: Path | None,
            work: Path) -> dict[str, Table]:
        hostfile = work / f"hosts-{shape.ranks}x{shape.rpn}"
        hostfile.write_text("".join(f"{h}\n" for h in self.nodes(shape) for _ in range(shape.rpn)))
        cfg = (SMPI_SHARED_BLOCK, *smpi.overhead_settings(self.overhead, self.recv_overhead), *SMPI_DEFAULT)
        env = clean_environment()
        program = PROGRAM
        if variant == "binomial":
            cfg += SMPI_BINOMIAL
        elif variant == "rankwise":
            program = LINKED
            env.update(inherited_coll_env())
            if rules is not None:
                env["RANKWISE_COLL_RULES"] = str(rules)
        cmd = smpi.smpirun_command(paths.program(program, "smpi"),
                                   program_args(ops, sizes, iterations, SIM_START_EVERY_US),
                                   self.xml, hostfile, shape.ranks, extra_cfg=cfg)
        return run_program(cmd, env, f"{variant} run of {shape.ranks} ranks ({shape.rpn} per node) on {self.label}",
                    simulated=True)


def inherited_coll_env() -> dict[str, str]:
    """RANKWISE_COLL_* of the caller's environment reach the rankwise runs
    (RANKWISE_COLL_BCAST=knomial to try an algorithm); the CLI says so. Verification in the job
    is off unless the caller sets it: the benchmark measures the rules' choices as written
    (with it, a decision's first calls alternate with the MPI's own and the faster stays,
    docs/concepts/collectives.md "Verified in the job"; studies/coll/coll_verify_real.py measures that)."""
    return {"RANKWISE_COLL_VERIFY": "0",
            **{k: v for k, v in os.environ.items() if k.startswith("RANKWISE_COLL_") and k != "RANKWISE_COLL_RULES"}}


class LauncherTarget:
    """A real MPI through a launcher ('mpirun -np 8'): the launcher fixes the
    shape; the library is preloaded into the plain program."""

    simulated = False

    def __init__(self, launcher: str, model: Path | None, rules: Path | None, hostfile: Path | None):
        launch.parse_launcher(launcher)  # a one-line error for an unknown launcher
        self.launcher, self.model, self.given_rules, self.hostfile = launcher, model, rules, hostfile
        self.label = "real-mpi"
        for opt, p in (("--model", model), ("--rules", rules), ("--hostfile", hostfile)):
            if p is not None and not p.is_file():
                raise UsageError(f"{opt}: {p} is not a file")
        if model is not None and rules is not None:
            raise UsageError("give the rules as --rules FILE or a --model FILE to tune them from, not both")
        if rules is not None:
            check_rules_file(rules)  # before any run; its size once the job's is known (ranks())

    def rules(self, shape: Shape, ops: Sequence[str], sizes: Sequence[int], output: Path) -> Path | None:
        if self.given_rules is not None:
            return self.given_rules
        if self.model is None:
            return None
        args = ["--model", str(self.model), "--ranks", str(shape.ranks), "--ops", ",".join(ops),
                "--sizes", ",".join(str(s) for s in sizes)]
        if self.hostfile is not None:
            args += ["--hostfile", str(self.hostfile)]
        return run_tune(args, output)

    def run(self, variant: str, shape: Shape | None, ops, sizes, iterations: int, rules: Path | None,
            work: Path) -> dict[str, Table]:
        from rankwise.measure.profile import launcher_command

        variables: dict[str, str] = {}
        if variant != "default":
            lib = paths.PACKAGE_DIR / "_lib" / "librankwise_coll.so"
            if not lib.is_file():
                raise RankwiseError(f"{lib} is missing: run 'make'")
            variables["LD_PRELOAD"] = " ".join(p for p in (str(lib), os.environ.get("LD_PRELOAD", "")) if p)
            if variant == "binomial":
                variables.update({f"RANKWISE_COLL_{op.upper()}": "binomial" for op in OPS})
            else:
                variables.update(inherited_coll_env())
                if rules is not None:
                    variables["RANKWISE_COLL_RULES"] = str(rules)
        args = program_args(ops, sizes, iterations)
        launcher = self.launcher
        if self.hostfile is not None:
            launcher += f" -hostfile {self.hostfile}"
        cmd, env = launcher_command(launcher, str(paths.program(PROGRAM, "mpi")), args, variables)
        env = {k: v for k, v in env.items() if not k.startswith("RANKWISE_COLL_") or k in variables}
        return run_program(cmd, env, f"{variant} run under {self.launcher}", simulated=False)

    def ranks(self, work: Path) -> int:
        """The job's size, from a one-size run of the program."""
        from rankwise.measure.profile import launcher_command

        cmd, env = launcher_command(
            self.launcher + (f" -hostfile {self.hostfile}" if self.hostfile else ""),
            str(paths.program(PROGRAM, "mpi")), program_args(["bcast"], [8], 1), {})
        r = subprocess.run(cmd, capture_output=True, text=True, errors="replace", env=env, stdin=subprocess.DEVNULL,
                           timeout=600)
        if r.returncode != 0:
            log = [x for x in (r.stdout + "\n" + r.stderr).splitlines() if x.strip()]
            raise RankwiseError(launch.failure_message(PROGRAM, launch.RunResult(r.returncode, log)))
        meta = parse_output(r.stdout, PROGRAM).meta
        try:
            n = int(meta["ranks"])
        except (KeyError, ValueError):
            raise RankwiseError(f"{PROGRAM} did not say how many ranks ran") from None
        if self.given_rules is not None:
            check_rules_file(self.given_rules, n)
        return n

    def trace(self, shape: Shape | None, ops, sizes, rules: Path | None, work: Path) -> dict[tuple[str, int], set[str]]:
        """What the library ran for each (op, size) with these rules: one untimed call each,
        traced (RANKWISE_COLL_TRACE=1; the timed runs are not traced, a trace line costs time)."""
        from rankwise.measure.profile import launcher_command

        lib = paths.PACKAGE_DIR / "_lib" / "librankwise_coll.so"
        variables = {"LD_PRELOAD": " ".join(p for p in (str(lib), os.environ.get("LD_PRELOAD", "")) if p),
                     **inherited_coll_env(), "RANKWISE_COLL_TRACE": "1"}
        if rules is not None:
            variables["RANKWISE_COLL_RULES"] = str(rules)
        launcher = self.launcher + (f" -hostfile {self.hostfile}" if self.hostfile is not None else "")
        cmd, env = launcher_command(launcher, str(paths.program(PROGRAM, "mpi")), program_args(ops, sizes, 1),
                                    variables)
        env = {k: v for k, v in env.items() if not k.startswith("RANKWISE_COLL_") or k in variables}
        lines: list[str] = []
        run_program(cmd, env, f"traced run under {self.launcher}", simulated=False, stderr=lines)
        return traced(lines)


# ----------------------------------------------------------------- run


def run_weight(shape: Shape, n_sizes: int) -> float:
    """Simulation cost of one run, roughly: messages x flows in flight."""
    return shape.ranks * math.log2(max(shape.ranks, 2)) * n_sizes


def measure(target, shapes: Sequence[Shape], ops: Sequence[str], sizes: Sequence[int], iterations: int,
            work: Path, rules_dir: Path, progress: Callable[[str, float], None] | None = None) -> list[Point]:
    """Every shape, three runs each; progress(label, work done) after each step."""
    points: list[Point] = []
    for shape in shapes:
        tag = f"{target.label}: {shape.ranks} ranks" + (f", {shape.rpn} per node" if shape.rpn else "")
        rules = target.rules(shape, ops, sizes, rules_dir / f"{target.label}-{shape.ranks}x{shape.rpn}.rwr")
        choices = read_choices(rules) if rules is not None else None
        if progress:
            progress(f"{tag}: tuned", 0.0)
        tables = {}
        for variant in VARIANTS:
            tables[variant] = target.run(variant, shape, ops, sizes, iterations, rules, work)
            if progress:
                progress(f"{tag}: {variant}", run_weight(shape, len(sizes)))
        ran = target.trace(shape, ops, sizes, rules, work) if hasattr(target, "trace") else None
        for op in ops:
            rows = [tables[v].get(op) for v in VARIANTS]
            if any(t is None for t in rows):
                raise RankwiseError(f"{PROGRAM} printed no {op} table")
            for size in rows[0].size.tolist():
                t = [r.at(size) for r in rows]
                runs, predicted = ("", float("nan")) if choices is None else choice_at(choices, op, size)
                if ran is not None:
                    runs = verified(runs, ran.get((op, int(size)), set()))
                points.append(Point(target.label, shape.ranks, shape.rpn, op, int(size), *t, runs=runs,
                                    predicted=predicted))
    return points


# --------------------------------------------------------------- goals


def _mean(values) -> float:
    a = np.asarray(list(values), dtype=float)
    return float(a.mean()) if a.size else float("nan")


def goals(points: Sequence[Point]) -> list[Goal]:
    """Issue 11's figures for one platform's points (deterministic SMPI)."""
    out: list[Goal] = []
    by_op: dict[str, list[Point]] = {}
    for p in points:
        by_op.setdefault(p.op, []).append(p)
    for op, band in BANDS.items():
        pts = [p for p in by_op.get(op, []) if band.contains(p.size)]
        for base, name in (("default", "ompi"), ("binomial", "binomial")):
            g = _mean(p.gain(base) for p in pts)
            out.append(Goal(f"{op} {band.label}: on average >= {band.goal:.0%} faster than {name}",
                            f"{g * 100:+.1f} %" if pts else "no size", (g >= band.goal) if pts else None))
    pts = [p for p in by_op.get("scatter", []) if p.tree_ran]
    g = _mean(p.gain("default") for p in pts)
    out.append(Goal(f"scatter where the rules run rankwise's tree: >= {SCATTER_GOAL:.0%} faster than ompi",
                    f"{g * 100:+.1f} % over {len(pts)} sizes" if pts else "no size chosen",
                    (g >= SCATTER_GOAL) if pts else None))
    for op in ("allreduce", "allgather"):
        pts = by_op.get(op, [])
        if pts:
            worst = min(pts, key=lambda p: p.gain("default"))
            out.append(Goal(f"{op}: at least as fast as ompi at every size",
                            f"worst {worst.gain('default') * 100:+.2f} % ({_where(worst)})",
                            all(p.rankwise <= p.default + SAME_US for p in pts)))
    if points:
        worst = min(points, key=lambda p: p.gain("default"))
        out.append(Goal(f"every collective and size: at most {SLOWER_LIMIT:.0%} slower than ompi",
                        f"worst {worst.gain('default') * 100:+.2f} % ({worst.op}, {_where(worst)})",
                        all(p.rankwise <= (1 + SLOWER_LIMIT) * p.default + SAME_US for p in points)))
    return out


def _where(p: Point) -> str:
    rpn = f"x{p.rpn}" if p.rpn else ""
    return f"{p.ranks}{rpn} {format_size(p.size)}"


def band_means(points: Sequence[Point]) -> list[tuple[str, str, float, float, int]]:
    """(op, band, mean gain vs default, vs binomial, points) per op: the
    issue's band for bcast, reduce and gather, every size for the others."""
    rows = []
    for op in OPS:
        band = BANDS.get(op)
        pts = [p for p in points if p.op == op and (band is None or band.contains(p.size))]
        if pts:
            rows.append((op, band.label if band else "all sizes", _mean(p.gain("default") for p in pts),
                         _mean(p.gain("binomial") for p in pts), len(pts)))
    return rows


# ---------------------------------------------------------------- files


CSV_HEAD = "platform,ranks,ranks_per_node,op,size,default_us,binomial_us,rankwise_us,speedup_default,speedup_binomial,predicted_speedup,runs"


def write_csv(points: Sequence[Point], path: Path) -> Path:
    from rankwise.util.files import write_atomic

    lines = [CSV_HEAD] + [
        f"{p.platform},{p.ranks},{p.rpn},{p.op},{p.size},{p.default:.3f},{p.binomial:.3f},{p.rankwise:.3f},"
        f"{p.default / p.rankwise:.4f},{p.binomial / p.rankwise:.4f},{p.predicted:.4f},{p.runs}" for p in points]
    write_atomic(path, "\n".join(lines) + "\n")
    return path


def plot_op(points: Sequence[Point], op: str, path: Path, title: str) -> Path:
    """Speed-up of rankwise over the default and over binomial by size, one
    line per shape; goal line of the op's band."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from rankwise.report.plots import save_figure

    fig = Figure(figsize=(11, 4.5), layout="constrained")
    FigureCanvasAgg(fig)
    shapes = sorted({(p.ranks, p.rpn) for p in points if p.op == op})
    band = BANDS.get(op)
    for i, (base, name) in enumerate((("default", "ompi"), ("binomial", "binomial"))):
        ax = fig.add_subplot(1, 2, i + 1)
        for ranks, rpn in shapes:
            pts = sorted((p for p in points if p.op == op and (p.ranks, p.rpn) == (ranks, rpn)),
                         key=lambda p: p.size)
            ax.plot([p.size for p in pts], [getattr(p, base) / p.rankwise for p in pts], marker="o", ms=3,
                    label=f"{ranks} ranks" + (f", {rpn}/node" if rpn else ""))
        ax.axhline(1.0, color="grey", lw=0.8, ls="--")
        inside = sorted({p.size for p in points if p.op == op and band is not None and band.contains(p.size)})
        if inside:  # the goal over its band only
            ax.hlines(1 / (1 - band.goal), inside[0], inside[-1], color="green", lw=1.2, ls=":",
                      label=f"goal ({band.label}: {band.goal:.0%} less time)")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")  # x0.1 and x30 both happen (Open MPI's segmented reduce on a degraded node)
        ax.yaxis.set_major_formatter("x{x:g}")
        ax.yaxis.set_minor_formatter("x{x:g}")
        ax.set_xlabel("bytes per rank")
        ax.set_ylabel(f"speed-up ({name} time / rankwise time)")
        ax.set_title(f"vs {name}", fontsize="medium")
        ax.legend(fontsize="x-small")
    fig.suptitle(title, fontsize="medium")
    return save_figure(fig, path)


def quick_or_full(quick: bool) -> tuple[list[tuple[int, int]], list[int]]:
    return (QUICK_SHAPES, QUICK_SIZES) if quick else (SHAPES, SIZES)


def elapsed(t0: float) -> str:
    s = time.monotonic() - t0
    return f"{s:.0f} s" if s < 120 else f"{s / 60:.1f} min"


def workdir() -> tempfile.TemporaryDirectory:
    return tempfile.TemporaryDirectory(prefix="rankwise-coll-bench-")


