"""Open MPI's own rules file from a probed model (`rankwise coll tune --format ompi-rules`): does the
algorithm it names run faster than Open MPI's fixed decision where the predictor says so?

Simulated (--sim, deterministic): each generated platform folder given (with its probed model,
`MODEL`), the first --ranks hosts one rank each; per operation and size the predictor's choice among
Open MPI's algorithms (rw_coll_ompi_choose, the same as the verb) and, where it names one, SMPI
runs the benchmark program with the ompi selector (the fixed decision) and with that algorithm
forced (--cfg=smpi/OP:NAME, SMPI's port of it), under the send and receive overheads the model
was probed under (its latencies hold them: rankwise.sim.smpi.model_overheads). Printed: predicted and measured gain per row,
then per platform the rows the file changes, how many ran faster, the worst and the median.

Real MPI (--launcher, e.g. an emulated cluster's `mpirun`): the rules file tuned from --model for
the launcher's job size; the benchmark program runs without it, with it (--mca
coll_tuned_use_dynamic_rules 1 --mca coll_tuned_dynamic_rules_filename FILE) and with rankwise's
library preloaded on `coll tune`'s own rules from the same model, rotated --repeats times; per row
the median of each and the rules file's gain with its min-max.

    .venv/bin/python studies/coll/ompi_rules_gain.py --sim DIR [DIR...] [--ranks 16] [--out OUT]
      (DIR: a platform folder holding MODEL, or a model_fidelity.py output folder seedK-nN/
       with platform/ and rpn1.rwm)
    .venv/bin/python studies/coll/ompi_rules_gain.py --launcher 'mpirun ...' --model M [--repeats 3] [--verify 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

from rich.console import Console
from rich.table import Table as RichTable

from rankwise.util import paths
from rankwise.coll.comparison import PROGRAM, SMPI_DEFAULT
from rankwise.coll.comparison import clean_environment as _clean_env
from rankwise.coll.comparison import program_args as _program_args
from rankwise.coll.comparison import run_program as _run
from rankwise.coll.selection import TuneOptions
from rankwise.coll.ompi_rules import format_ompi_rules, tune_ompi
from rankwise.util.errors import RankwiseError
from rankwise.cluster.benchmark_programs import SMPI_SHARED_BLOCK
from rankwise.sim import smpi

OPS = ("bcast", "reduce", "gather", "scatter", "allreduce", "allgather")
SIZES = [8, 64, 512, 4096, 32768, 262144, 1 << 20]
# SMPI's port of each Open MPI algorithm a rules file can name (by Open MPI's number)
SMPI_NAME = {
    "bcast": {1: "flattree", 3: "ompi_pipeline", 4: "ompi_split_bintree", 5: "NTSB", 6: "binomial_tree",
              8: "scatter_rdb_allgather", 9: "scatter_LR_allgather"},
    "reduce": {1: "ompi_basic_linear", 5: "ompi_binomial"},
    "gather": {1: "ompi_basic_linear", 2: "ompi_binomial"},
    "scatter": {1: "ompi_basic_linear", 2: "ompi_binomial"},
    "allreduce": {2: "redbcast", 3: "rdb", 6: "rab_rdb"},
    "allgather": {2: "bruck", 3: "rdb", 4: "ring", 5: "ompi_neighborexchange"},
}
console = Console()


def rows_for(model: Path, ranks: int, nodes: list[str] | None, overhead: float | None):
    """The verb's choices; overhead None: the model's own (as `coll tune` without --overhead),
    else that send and receive overhead (the simulated runs' SMPI settings)."""
    from rankwise.predict.allocation import collective_allocation as _allocation

    net, node_of, _, knee, label = _allocation(model, None, None, ",".join(nodes) if nodes else None, ranks, 1,
                                               overhead, False, overhead)
    opts = TuneOptions(min_gain=0.05, eager_limit=knee or 65536)
    return tune_ompi(net, node_of, OPS, SIZES, opts), label


def sim_platform(folder: Path, model: Path, ranks: int, iterations: int, work: Path, label: str) -> list[dict]:
    from rankwise.sim.platform_file import read_platform
    from rankwise.predict.validate import platform_files

    xml, _ = platform_files(folder)
    hosts = [h for h, _ in read_platform(xml)][:ranks]
    from rankwise.model.model import Model

    # SMPI runs under the overheads the model was probed under, and the choices take the model's own
    rows, _ = rows_for(model, ranks, hosts, None)
    hostfile = work / "hosts"
    hostfile.write_text("".join(f"{h}\n" for h in hosts))
    base = (SMPI_SHARED_BLOCK, *smpi.overhead_settings(*smpi.model_overheads(Model.load(model))), *SMPI_DEFAULT)
    program = paths.program(PROGRAM, "smpi")

    def run(op: str, sizes: list[int], extra: tuple[str, ...]):
        cmd = smpi.smpirun_command(program, _program_args([op], sizes, iterations, 1_000_000), xml, hostfile,
                                   ranks, extra_cfg=base + extra)
        return _run(cmd, _clean_env(), f"{op} on {folder}", simulated=True)[op]

    out = []
    for op in OPS:
        changed = [r for r in rows if r.op == op and r.choice.chosen]
        if not changed:
            continue
        sizes = [r.choice.nbytes for r in changed]
        fixed = run(op, sizes, ())
        for alg in sorted({r.choice.choice.id for r in changed}):
            at = [r for r in changed if r.choice.choice.id == alg]
            try:
                forced = run(op, [r.choice.nbytes for r in at], (f"smpi/{op}:{SMPI_NAME[op][alg]}",))
            except RankwiseError as exc:  # SMPI's port fails where Open MPI's would not: said, not scored
                console.print(f"  {op} {SMPI_NAME[op][alg]} at {[r.choice.nbytes for r in at]} B: {exc}",
                              highlight=False)
                continue
            for r in at:
                f, c = fixed.at(r.choice.nbytes), forced.at(r.choice.nbytes)
                out.append({"platform": label, "op": op, "bytes": r.choice.nbytes, "fixed": r.choice.fixed.name,
                            "runs": r.choice.choice.name, "predicted_gain": r.choice.gain,
                            "fixed_us": f, "rules_us": c, "measured_gain": 1 - c / f if f > 0 else float("nan")})
    return out


def real(launcher: str, model: Path, repeats: int, iterations: int, work: Path, verify: int) -> list[dict]:
    """Three ways, rotated each repeat: Open MPI's fixed decision, its rules file from the model
    (verify > 0: after `--verify` with that many runs each way, as the verb does it; the runs
    below are new ones), and rankwise's library preloaded with `coll tune`'s own rules from the
    same model."""
    from rankwise.coll.comparison import LauncherTarget, run_tune
    from rankwise.coll.ompi_verify import verify_ompi
    from rankwise.coll.report import print_ompi_verification
    from rankwise.measure.profile import launcher_command

    ranks = LauncherTarget(launcher, None, None, None).ranks(work)
    rows, label = rows_for(model, ranks, None, None)
    if verify:
        rows, checked = verify_ompi(rows, launcher, ranks, repeats=verify, iterations=iterations,
                                    progress=lambda what: console.print(f"  verifying: {what}", highlight=False))
        print_ompi_verification(checked, console)
    rules = work / "ompi.rules"
    rules.write_text(format_ompi_rules(rows, ranks, model=label, min_gain=0.05))
    changed = [r for r in rows if r.choice.chosen]
    ops = sorted({r.op for r in changed}, key=OPS.index)
    sizes = sorted({r.choice.nbytes for r in changed})
    if not changed:
        return []
    lib_rules = run_tune(["--model", str(model), "--ranks", str(ranks), "--ops", ",".join(ops), "--sizes",
                          ",".join(str(x) for x in sizes)], work / "rankwise.rwr")
    lib = paths.PACKAGE_DIR / "_lib" / "librankwise_coll.so"
    ways = {"fixed": ("", {}),
            "rules": (f" --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_dynamic_rules_filename {rules}", {}),
            "preload": ("", {"LD_PRELOAD": str(lib), "RANKWISE_COLL_RULES": str(lib_rules)})}
    times: dict[str, list] = {w: [] for w in ways}
    names = list(ways)
    for k in range(repeats):
        for way in names[k % 3:] + names[:k % 3]:
            extra, variables = ways[way]
            cmd, env = launcher_command(launcher + extra, str(paths.program(PROGRAM, "mpi")),
                                        _program_args(ops, sizes, iterations), variables)
            times[way].append(_run(cmd, env, f"{way} run under {launcher}", simulated=False))
            console.print(f"  run {k + 1}/{repeats}: {way}", highlight=False)
    out = []
    for r in changed:
        f = [t[r.op].at(r.choice.nbytes) for t in times["fixed"]]
        c = [t[r.op].at(r.choice.nbytes) for t in times["rules"]]
        p = [t[r.op].at(r.choice.nbytes) for t in times["preload"]]
        gains = [1 - ci / fi for fi, ci in zip(f, c)]
        out.append({"platform": "real", "op": r.op, "bytes": r.choice.nbytes, "fixed": r.choice.fixed.name,
                    "runs": r.choice.choice.name, "predicted_gain": r.choice.gain, "fixed_us": statistics.median(f),
                    "rules_us": statistics.median(c), "measured_gain": statistics.median(gains),
                    "gain_min": min(gains), "gain_max": max(gains), "preload_us": statistics.median(p),
                    "preload_gain": statistics.median(1 - pi / fi for fi, pi in zip(f, p))})
    return out


def _summary(rs: list[dict]) -> str:
    g = [r["measured_gain"] for r in rs]
    return (f"{len(rs)} rows changed, {sum(x > 0 for x in g)} faster, {sum(x < -0.02 for x in g)} more than 2 % "
            f"slower; measured gain median {statistics.median(g) * 100:+.1f} %, worst {min(g) * 100:+.1f} %; "
            f"predicted median {statistics.median(r['predicted_gain'] for r in rs) * 100:+.1f} %")


def show(results: list[dict], every_row: bool) -> None:
    if not results:
        console.print("the rules file names no algorithm of Open MPI's anywhere: nothing to run")
        return
    if every_row:
        t = RichTable(title="rows where the rules file names an algorithm (gains over Open MPI's fixed decision)")
        preload = any("preload_us" in r for r in results)
        for name in ("platform", "op", "bytes", "fixed", "runs", "predicted", "measured", "fixed us", "rules us",
                     *(("preload us", "preload gain") if preload else ())):
            t.add_column(name)
        for r in results:
            spread = f" ({r['gain_min'] * 100:+.1f}..{r['gain_max'] * 100:+.1f})" if "gain_min" in r else ""
            t.add_row(r["platform"], r["op"], str(r["bytes"]), r["fixed"], r["runs"],
                      f"{r['predicted_gain'] * 100:+.1f} %", f"{r['measured_gain'] * 100:+.1f} %{spread}",
                      f"{r['fixed_us']:.2f}", f"{r['rules_us']:.2f}",
                      *((f"{r['preload_us']:.2f}", f"{r['preload_gain'] * 100:+.1f} %") if preload else ()))
        console.print(t)
    t = RichTable(title="per algorithm the file names: measured gain over the fixed decision")
    for name in ("op", "runs", "rows", "faster", "> 2 % slower", "median", "worst", "predicted median"):
        t.add_column(name)
    by: dict[tuple[str, str], list[dict]] = {}
    for r in results:
        by.setdefault((r["op"], r["runs"]), []).append(r)
    for (op, alg), rs in sorted(by.items(), key=lambda kv: (OPS.index(kv[0][0]), kv[0][1])):
        g = [r["measured_gain"] for r in rs]
        t.add_row(op, alg, str(len(rs)), str(sum(x > 0 for x in g)), str(sum(x < -0.02 for x in g)),
                  f"{statistics.median(g) * 100:+.1f} %", f"{min(g) * 100:+.1f} %",
                  f"{statistics.median(r['predicted_gain'] for r in rs) * 100:+.1f} %")
    console.print(t)
    platforms: dict[str, list[dict]] = {}
    for r in results:
        platforms.setdefault(r["platform"], []).append(r)
    for name, rs in platforms.items():
        console.print(f"{name}: {_summary(rs)}", highlight=False)
    console.print(f"all: {_summary(results)}", highlight=False)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sim", nargs="+", type=Path, help="platform folders (with MODEL) or fidelity seed folders")
    ap.add_argument("--model-name", default="rpn1.rwm", help="the probed model's file name in each folder")
    ap.add_argument("--launcher", help="a real MPI launcher (its job size is the rules' size)")
    ap.add_argument("--model", type=Path, help="with --launcher: the probed model of the launcher's hosts")
    ap.add_argument("--ranks", type=int, default=16)
    ap.add_argument("--iterations", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--verify", type=int, default=0, metavar="RUNS",
                    help="with --launcher: verify the rules file first (`coll tune --verify`), RUNS each way")
    ap.add_argument("--rows", action="store_true", help="print every row, not only the summaries")
    ap.add_argument("--out", type=Path)
    a = ap.parse_args()
    results: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="ompi-rules-") as tmp:
        work = Path(tmp)
        if a.launcher:
            if a.model is None:
                ap.error("--launcher needs --model")
            results = real(a.launcher, a.model, a.repeats, a.iterations, work, a.verify)
        for d in a.sim or []:
            folder = d / "platform" if (d / "platform").is_dir() else d
            model = d / a.model_name
            console.print(f"{folder}: tuning from {model.name}, simulating", highlight=False)
            results += sim_platform(folder, model, a.ranks, a.iterations, work, d.name)
    show(results, a.rows)
    if a.out:
        a.out.mkdir(parents=True, exist_ok=True)
        (a.out / "ompi_rules_gain.json").write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
