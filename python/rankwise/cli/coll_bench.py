"""`rankwise coll bench`: the collectives library against the MPI's own
collectives and binomial trees, per operation and size (rankwise.coll.comparison).

    rankwise sim platform --default -o plat
    rankwise coll bench --sim plat --quick
    rankwise coll bench --sim my/cluster.xml --model net.rwm --quick   # any platform, a probed model
    rankwise coll bench --launcher "mpirun -np 8 --oversubscribe" --model net.rwm
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Optional

import typer
from rich import box
from rich.markup import escape
from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from rankwise.cli.common import HOSTFILE_OPTION, console, err_console
from rankwise.util.errors import RankwiseError, UsageError

PREDICTION_TOLERANCE = 0.20  # as rankwise bench's rows


def _int_list(text: str, option: str, low: int) -> list[int]:
    out = []
    for word in [w.strip() for w in text.split(",") if w.strip()]:
        try:
            v = int(word)
        except ValueError:
            raise UsageError(f"{option}: '{word}' is not a whole number (a list like 16,32)") from None
        if v < low:
            raise UsageError(f"{option}: {v} is below {low}")
        out.append(v)
    if not out:
        raise UsageError(f"{option} is empty (a list like 16,32)")
    return list(dict.fromkeys(out))


def _ops(text: str) -> list[str]:
    from rankwise.coll.comparison import OPS

    ops = [o.strip() for o in text.split(",") if o.strip()]
    if not ops:
        raise UsageError(f"--ops is empty (a list like {','.join(OPS)})")
    for op in ops:
        if op not in OPS:
            raise UsageError(f"--ops: unknown operation '{op}' (choose from {', '.join(OPS)})")
    return [o for o in OPS if o in ops]


def _pct(g: float) -> str:
    return f"{g * 100:+.1f}%" if g == g else "-"


def _print_op(points, op: str, title: str) -> None:
    from rankwise.traffic.patterns import format_size

    pts = [p for p in points if p.op == op]
    if not pts:
        return
    table = Table(title=escape(title), title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    for name in ("ranks", "rpn", "size", "default us", "binomial us", "rankwise us", "vs default", "vs binomial",
                 "predicted", "runs"):
        table.add_column(name, justify="left" if name == "runs" else "right", no_wrap=True)
    last = None
    for p in pts:
        shape = (p.ranks, p.rpn)
        table.add_row(str(p.ranks) if shape != last else "", (str(p.rpn) if p.rpn else "-") if shape != last else "",
                      format_size(p.size), f"{p.default:.2f}", f"{p.binomial:.2f}", f"{p.rankwise:.2f}",
                      f"x{p.default / p.rankwise:.3f}", f"x{p.binomial / p.rankwise:.3f}",
                      f"x{p.predicted:.3f}" if p.predicted == p.predicted else "-", escape(p.runs or "-"))
        last = shape
    console.print(table)


def _print_summary(points, label: str, judged: bool) -> bool:
    from rankwise.coll.comparison import band_means, goals

    table = Table(title=escape(f"Averages on {label}: mean of 1 - rankwise / base over the band's sizes and all "
                               "shapes"), title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    for name in ("op", "band", "faster than default", "faster than binomial", "points"):
        table.add_column(name, justify="left" if name in ("op", "band") else "right")
    for op, band, g_def, g_bin, n in band_means(points):
        table.add_row(op, band, _pct(g_def), _pct(g_bin), str(n))
    console.print(table)
    chosen = [p for p in points if p.tree_ran and p.predicted == p.predicted]
    if chosen:
        errors = [p.predicted / (p.default / p.rankwise) - 1 for p in chosen]
        close = sum(abs(e) <= PREDICTION_TOLERANCE for e in errors)
        worst = max(range(len(chosen)), key=lambda i: abs(errors[i]))
        w = chosen[worst]
        console.print(escape(f"where rankwise's tree ran: predicted speed-up over the default within "
                             f"{PREDICTION_TOLERANCE:.0%} of the measured one in {close}/{len(chosen)} rows (worst "
                             f"{errors[worst]:+.0%}: {w.op}, {w.ranks} ranks{f' x {w.rpn}' if w.rpn else ''}, {w.size} B, {w.runs})"), highlight=False)
    ok = True
    if not judged:
        return ok
    for g in goals(points):
        verdict = "-" if g.passed is None else ("[green]PASS[/green]" if g.passed else "[red]FAIL[/red]")
        console.print(f"goal: {escape(g.text)}: {escape(g.figure)} — {verdict}", highlight=False)
        ok &= g.passed is not False
    return ok


def coll_bench_command(
    sim: list[Path] = typer.Option([], "--sim", help="A SimGrid platform: any platform.xml (with --model), or a folder of rankwise sim platform; repeat for several."),
    launcher: Optional[str] = typer.Option(None, "--launcher", help="Real MPI: the launcher and its arguments, e.g. 'mpirun -np 8'."),
    model: Optional[Path] = typer.Option(None, "--model", "-m", help="The probed model to tune the rules from (rankwise probe); --sim: one platform, the one probed (default there: its ground truth)."),
    rules: Optional[Path] = typer.Option(None, "--rules", help="Real MPI: a rules file of 'rankwise coll tune' to use as is."),
    hostfile: Optional[Path] = HOSTFILE_OPTION,
    ranks: Optional[str] = typer.Option(None, "--ranks", help="Simulated: rank counts (default 16,32,64,128; --quick 16,32)."),
    ranks_per_node: Optional[str] = typer.Option(None, "--ranks-per-node", help="Simulated: ranks per node, block placement (default 1,4)."),
    ops: str = typer.Option("bcast,reduce,gather,scatter,allreduce,allgather", "--ops", help="Collectives to measure."),
    sizes: Optional[str] = typer.Option(None, "--sizes", help="Bytes per rank: 8,1K,64K or 8:1M (default 8:1M; --quick 8:1K,4K,32K,256K)."),
    iterations: Optional[int] = typer.Option(None, "--iterations", help="Timed calls per size (default 1 simulated: time is deterministic; 20 real)."),
    overhead: Optional[float] = typer.Option(None, "--overhead", help="Simulated: send and receive overhead of eager messages, s (smpi/os, ois, or); default: with --model the overheads it measured (its latencies hold them), else 1e-6."),
    out: Path = typer.Option(Path("rankwise-coll-bench"), "--out", help="Folder for the CSV tables, PNG plots and rules files."),
    quick: bool = typer.Option(False, "--quick", help="16 and 32 ranks (1 and 4 per node), 9 sizes: well under a minute."),
    brief: bool = typer.Option(False, "--brief", help="Print the averages and goals only (the full tables are in the CSV)."),
):
    """Time each collective under the MPI's default, binomial trees and rankwise's rules, per size: tables, averages, goals."""
    from rankwise.cli.predict import parse_size_list
    from rankwise.coll import comparison as cb
    if (not sim) == (launcher is None):
        raise UsageError("give --sim PLATFORM (simulated) or --launcher 'mpirun -np N' (real MPI), not both")
    op_list = _ops(ops)
    shapes_default, sizes_default = cb.quick_or_full(quick)
    size_list = parse_size_list(sizes) if sizes is not None else sizes_default
    if iterations is not None and iterations < 1:
        raise UsageError(f"--iterations must be >= 1, got {iterations}")
    if overhead is not None and not (0 <= overhead < 1):
        raise UsageError(f"--overhead must be in [0, 1) seconds, got {overhead:g}")
    if sim:
        for opt, value in (("--rules", rules), ("--hostfile", hostfile)):
            if value is not None:
                raise UsageError(f"{opt} is for --launcher runs; a simulated run tunes its rules from --model "
                                 "or the platform's ground truth, on the platform's hosts in file order")
        if model is not None and len(sim) > 1:
            raise UsageError("--model is the probe of one platform: give one --sim with it")
        rank_list = _int_list(ranks, "--ranks", 2) if ranks else sorted({r for r, _ in shapes_default})
        rpn_list = _int_list(ranks_per_node, "--ranks-per-node", 1) if ranks_per_node else sorted(
            {p for _, p in shapes_default})
        targets = [cb.SimTarget(p, overhead, model) for p in sim]
        if len({t.label for t in targets}) != len(targets):
            raise UsageError("--sim: two platforms have the same folder name (their files would collide in --out)")
        shape_list = [cb.Shape(r, p) for p in rpn_list for r in rank_list]
        n_iter = iterations or 1
    else:
        if ranks or ranks_per_node:
            raise UsageError("--ranks and --ranks-per-node are for --sim runs; the launcher sets the job's shape")
        targets = [cb.LauncherTarget(launcher, model, rules, hostfile)]
        n_iter = iterations or 20
    plan = []  # (target, shapes)
    for t in targets:
        if t.simulated:
            fit = []
            for s in shape_list:
                why = t.unfit(s)
                if not why and t.missing(s):
                    raise RankwiseError(f"--model {model}: host '{t.missing(s)}' of {t.xml} is not in the model "
                                        f"({s.ranks} ranks at {s.rpn} per node run on it): probe the platform's "
                                        "hosts, or choose --ranks it covers")
                if why:
                    console.print(escape(f"skipped on {t.label}: {s.ranks} ranks at {s.rpn} per node ({why})"),
                                  highlight=False)
                else:
                    fit.append(s)
            plan.append((t, fit))
    if sim and not any(shapes for _, shapes in plan):
        raise UsageError("no job shape fits the platform(s): choose --ranks and --ranks-per-node they can hold")
    try:
        out.mkdir(parents=True, exist_ok=True)
        (out / "rules").mkdir(exist_ok=True)
    except OSError as exc:
        raise RankwiseError(f"{out}: cannot create the output folder: {exc.strerror}") from None
    inherited = cb.inherited_coll_env()
    if inherited:
        console.print(escape("note: the rankwise runs get " + " ".join(f"{k}={v}" for k, v in inherited.items())
                             + " from the environment"), highlight=False)

    ok = True
    t0 = time.monotonic()
    with cb.workdir() as tmp:
        work = Path(tmp)
        if not sim:
            t = targets[0]
            with console.status("finding the job's size"):
                plan = [(t, [cb.Shape(t.ranks(work), 0)])]
        total = sum(3 * cb.run_weight(s, len(size_list)) for _, shapes in plan for s in shapes)
        results = []
        columns = (TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(), TimeElapsedColumn(),
                   TextColumn("left"), TimeRemainingColumn())
        with Progress(*columns, console=console, transient=True) as bar:
            task = bar.add_task("starting", total=total or 1)

            def step(label: str, done: float) -> None:
                bar.update(task, advance=done, description=escape(label))

            for t, shapes in plan:
                if shapes:
                    results.append((t, cb.measure(t, shapes, op_list, size_list, n_iter, work, out / "rules", step)))
    for t, points in results:
        wrong = [p for p in points if cb.NOT_AS_ASKED in p.runs]
        if wrong:
            w = wrong[0]
            err_console.print(escape(f"rankwise: warning: {len(wrong)} of {len(points)} rows did not run what the "
                                     f"rules asked (e.g. {w.op} {w.size} B: {w.runs}); their 'runs' say "
                                     f"{cb.NOT_AS_ASKED}"), highlight=False, soft_wrap=True)
            ok = False
        console.rule(f"[bold]{escape(t.label)}[/bold]")
        if t.simulated:
            console.print(escape(f"SMPI, {t.folder}: default = Open MPI's choices (smpi/coll-selector:ompi), "
                                 "binomial = SMPI's binomial trees, rankwise = librankwise_coll with the rules of "
                                 f"'rankwise coll tune' from {t.model or 'the ground truth'}; overheads {t.overhead * 1e6:g} / "
                                 f"{t.recv_overhead * 1e6:g} us per eager message (smpi/os and ois / or); time per call of the slowest rank, all ranks starting at one "
                                 "instant"), highlight=False)
        else:
            console.print(escape(f"{t.launcher}: default = the MPI's own, binomial = librankwise_coll with "
                                 "RANKWISE_COLL_<OP>=binomial, rankwise = librankwise_coll "
                                 + ("with the rules" if t.given_rules or t.model else "without rules (every call "
                                    "passes through: the library's own cost)")
                                 + f"; median of {n_iter} calls of the slowest rank"), highlight=False)
        if not brief:
            for op in op_list:
                _print_op(points, op, f"{op} on {t.label}")
        ok &= _print_summary(points, t.label, t.simulated)
        csv = cb.write_csv(points, out / f"coll-{t.label}.csv")
        pngs = [cb.plot_op(points, op, out / f"coll-{t.label}-{op}.png", f"{op} on {t.label}: rankwise's speed-up")
                for op in op_list]
        console.print(escape(f"written: {csv}, {len(pngs)} plots ({pngs[0].name} ...), rules in {out / 'rules'}"),
                      highlight=False)
    console.print(f"took {cb.elapsed(t0)}" + ("" if ok else "; some goals were missed (FAIL above)"), highlight=False)
