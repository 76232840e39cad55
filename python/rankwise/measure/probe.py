"""`rankwise probe`: run the engine's MPI probe on a simulated or real cluster."""

from __future__ import annotations

import re
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from os import PathLike
from pathlib import Path

import numpy as np

from rankwise.cluster import launch

from rankwise.util import paths
from rankwise.util.errors import RankwiseError
from rankwise.util.files import prepare_output
from rankwise.model.model import MISSING, Model
from rankwise.cluster.hostfile import read_hostfile, write_hostfile

PROBE = "rankwise-probe"


@dataclass
class ProbeOptions:
    """What the probe measures; None leaves the engine's default."""

    sizes: str | None = None  # "8,1K,64K,4M"
    repetitions: int | None = None
    rounds: int | None = None
    warmup: int | None = None
    mode: str | None = None  # concurrent | isolated
    timeout: float | None = None
    time_budget: float | None = None
    group_by: str | None = None  # host | rank
    intra: bool = True
    pairs: list[tuple[str, str]] | None = None  # partial re-probe
    update: Path | None = None  # merge into this model
    capacities: str | None = None  # "after" the ping-pong or "only" (on update's pairs): the stress test
    same_nodes: bool = False  # with update: the job must run on update's nodes (a watch series continued)
    references: bool = True  # the reference pass: lone-pair bandwidths across groups (reference.c)

    def args(self) -> list[str]:
        out: list[str] = []
        for flag, value in (
            ("--sizes", self.sizes),
            ("--repetitions", self.repetitions),
            ("--rounds", self.rounds),
            ("--warmup", self.warmup),
            ("--mode", self.mode),
            ("--timeout", self.timeout),
            ("--time-budget", self.time_budget),
            ("--group-by", self.group_by),
            ("--update", Path(self.update).resolve() if self.update is not None else None),
        ):
            if value is not None:
                out += [flag, str(value)]
        if not self.intra:
            out.append("--no-intra")
        if not self.references:
            out.append("--no-references")
        if self.same_nodes and self.update is not None:
            out.append("--same-nodes")
        if self.capacities is not None:
            out.append({"after": "--capacities", "only": "--capacities-only"}[self.capacities])
        if self.pairs:
            out += ["--pairs", ",".join(f"{a}:{b}" for a, b in self.pairs)]
        return out


# A lighter probe than the default for simulated clusters that only need alpha
# and beta (rankwise bench, rankwise optimize): 3 sizes, 2 x 2 ping-pongs, no
# warm-up (SMPI has no caches to warm). The default probe of a 128-node
# platform takes half an hour of simulation.
LIGHT_SIM_PROBE = ProbeOptions(sizes="8,16K,1M", repetitions=2, rounds=2, warmup=0)


def pairs_touching(model_path: str | PathLike, nodes: list[str]) -> list[tuple[str, str]]:
    """Every ordered pair of the model that involves one of `nodes` (a re-probe)."""
    model = Model.load(model_path)
    wanted = {model.names[model.index(n)] for n in nodes}
    return [(a, b) for a in model.names for b in model.names if a != b and (a in wanted or b in wanted)]


@dataclass(frozen=True)
class StressCost:
    """What the stress test took: timed phases, and seconds (simulated under SMPI); pairs across
    groups through a link whose load varies raised to its typical reading."""

    phases: int
    seconds: float
    raised: int = 0


_NO_STRESS = "a node stopped answering: no stress test"  # rankwise-probe's warning
_STRESS_LINE = re.compile(r"stress test: (\d+) phases, (\S+) s, (\d+) pairs through a varying link raised")


def stress_cost(log: list[str]) -> StressCost | None:
    """The cost rankwise-probe printed, None when no stress test ran."""
    for line in log:
        m = _STRESS_LINE.search(line)
        if m:
            return StressCost(int(m.group(1)), float(m.group(2)), int(m.group(3)))
    return None


@dataclass(frozen=True)
class ReferenceCost:
    """What the reference pass took (engine/mpi/probe/reference.c): rounds, seconds (simulated
    under SMPI), wall seconds, pairs across groups raised to their lone bandwidth and their
    median gain (0.25: +25 %)."""

    rounds: int
    seconds: float
    wall: float
    raised: int
    gain: float


_REFERENCE_LINE = re.compile(r"reference pass: (\d+) rounds, (\S+) s \(wall (\S+) s\), (\d+) pairs raised "
                             r"\(median \+(\S+) %\)")


def reference_cost(log: list[str]) -> ReferenceCost | None:
    """The reference pass rankwise-probe printed, None when none ran."""
    for line in log:
        m = _REFERENCE_LINE.search(line)
        if m:
            return ReferenceCost(int(m.group(1)), float(m.group(2)), float(m.group(3)), int(m.group(4)),
                                 float(m.group(5)) / 100)
    return None


def _report_cost(result: launch.RunResult, on_stress_cost: Callable[[StressCost], None] | None,
                 on_reference_cost: Callable[[ReferenceCost], None] | None = None) -> None:
    cost = stress_cost(result.log)
    if cost is not None and on_stress_cost is not None:
        on_stress_cost(cost)
    ref = reference_cost(result.log)
    if ref is not None and on_reference_cost is not None:
        on_reference_cost(ref)


def _finish(result: launch.RunResult, what: str, output: Path) -> Model:
    if result.returncode != 0:
        raise RankwiseError(launch.failure_message(what, result), exit_code=1)
    if not output.exists():
        raise RankwiseError(f"{what} ended without writing {output}", exit_code=1)
    return with_direct_links(Model.load(output), output)


def with_direct_links(model: Model, output: Path) -> Model:
    """The model with a direct network's links (a torus's hops, rankwise.model.hops) where its
    latencies show one, rewritten in place (atomically) when it gains them."""
    from rankwise.model.hops import direct_links

    hops = direct_links(model)
    if hops and hops != model.hops:
        model.hops = hops
        model.save(output)
    return model


def probe_sim(
    platform: str | PathLike,
    output: str | PathLike,
    options: ProbeOptions,
    ranks_per_node: int = 1,
    nodes: int | None = None,
    show_progress: bool = True,
    hostfile: str | PathLike | None = None,
    on_stress_cost: Callable[[StressCost], None] | None = None,
    on_reference_cost: Callable[[ReferenceCost], None] | None = None,
) -> Model:
    """Probe the simulated cluster described by a SimGrid platform (all its
    hosts, the first `nodes`, or those of a hostfile). on_stress_cost gets
    the stress test's cost when options ask for it, on_reference_cost the
    reference pass's when one ran."""
    from rankwise.sim.hosts import rank_hosts  # here: probing a real cluster needs no simulator

    # smpirun runs in a temporary directory: every path it is given is absolute.
    platform, output = Path(platform).resolve(), prepare_output(Path(output).resolve())
    lines = rank_hosts(platform, hostfile=hostfile, nodes=nodes, ranks_per_node=ranks_per_node, min_nodes=2)
    return _run_sim(platform, output, options, lines, len(set(lines)), show_progress, on_stress_cost,
                    on_reference_cost)


def _run_sim(platform: Path, output: Path, options: ProbeOptions, lines: list[str], n_hosts: int,
             show_progress: bool, on_stress_cost: Callable[[StressCost], None] | None = None,
             on_reference_cost: Callable[[ReferenceCost], None] | None = None) -> Model:
    """smpirun the SMPI probe with one rank per hostfile line."""
    from rankwise.sim import smpi

    args = ["--output", str(output), "--progress", "--source", f"smpi:{platform}", *options.args()]
    with tempfile.TemporaryDirectory(prefix="rankwise-") as tmp:
        hostfile = Path(tmp) / "hostfile"
        write_hostfile(hostfile, lines)
        cmd = smpi.smpirun_command(paths.program(PROBE, "smpi"), args, platform, hostfile, len(lines),
                                   extra_cfg=smpi.PROBE_SETTINGS)
        result = launch.run_with_progress(cmd, f"probing {n_hosts} simulated nodes", show_progress, cwd=tmp)
    if result.returncode != 0:
        raise RankwiseError(smpi.failure_message("the simulated probe", result.returncode, result.log), exit_code=1)
    model = _finish(result, "the simulated probe", output)
    _report_cost(result, on_stress_cost, on_reference_cost)
    return model


def probe_launcher(
    launcher: str,
    output: str | PathLike,
    options: ProbeOptions,
    show_progress: bool = True,
    hostfile: str | PathLike | None = None,
    warn: Callable[[str], None] | None = None,
    on_stress_cost: Callable[[StressCost], None] | None = None,
    on_reference_cost: Callable[[ReferenceCost], None] | None = None,
) -> Model:
    """Probe a real cluster through an MPI launcher ('mpirun -np 8 ...', 'srun ...').
    A hostfile is checked here, then handed to the launcher as -hostfile.

    A rank that stops answering costs its pairs, not the run: once the model
    is written the job is ended if it does not end by itself, and `warn`
    (default: a 'rankwise: warning:' line on stderr) says what was missing."""
    output = prepare_output(Path(output).resolve())  # refused or its folder made before probing
    words = launch.parse_launcher(launcher)
    if hostfile is not None:
        read_hostfile(hostfile)
        words += ["-hostfile", str(Path(hostfile).resolve())]
    args = ["--output", str(output), "--progress", "--source", f"mpi:{launcher}", *options.args()]
    cmd = [*words, str(paths.program(PROBE, "mpi")), *args]
    result = launch.run_with_progress(cmd, "probing", show_progress, end_after_written=True)
    if result.written is None or not output.exists():  # a file there is from an earlier run
        cause = launch.failure_message("the probe", result) if result.returncode != 0 else \
            f"the probe ended without writing {output}"
        raise RankwiseError(f"{cause.rstrip('.')}; no model was written", exit_code=1)
    model = with_direct_links(Model.load(output), output)
    _report_cost(result, on_stress_cost, on_reference_cost)
    if result.returncode != 0 or result.unfinalized or result.ended_after is not None:
        (warn or _warn_stderr)(_unfinished_job_warning(model, result))
    return model


def _warn_stderr(message: str) -> None:
    print(f"rankwise: warning: {message}", file=sys.stderr)


def model_gaps(model: Model, examples: int = 6) -> list[str]:
    """What a written model lacks, one phrase each (empty: nothing): nodes that
    stopped answering (every pair of theirs missing), the missing pairs (the
    first `examples` named), nodes whose intra-node measurement failed."""
    missing = model.state == MISSING
    n = model.n_nodes
    silent = [model.names[i] for i in range(n) if n > 1 and missing[i].sum() == n - 1]
    pairs = [f"{model.names[i]} -> {model.names[j]}" for i, j in np.argwhere(missing)]
    what = [f"{', '.join(silent)} stopped answering"] if silent else []
    if pairs and examples:
        more = f", and {len(pairs) - examples} more" if len(pairs) > examples else ""
        what.append(f"{len(pairs)} pair(s) missing ({', '.join(pairs[:examples])}{more})")
    elif pairs:
        what.append(f"{len(pairs)} pair(s) missing")
    failed_intra = [model.names[i] for i in np.flatnonzero(model.intra_state == MISSING)]
    if failed_intra:
        what.append(f"intra-node measurement failed on {', '.join(failed_intra)}")
    return what


def _unfinished_job_warning(model: Model, result: launch.RunResult) -> str:
    """What the job lost and how it ended, after the model was written."""
    what = model_gaps(model)
    if any(_NO_STRESS in line for line in result.log):
        what.append("a node stopped answering during the stress test: no shared links or NIC caps measured")
    if result.ended_after is not None:
        how = f"the job did not end by itself: rankwise ended it {result.ended_after:.0f} s after the model was written"
    elif result.unfinalized:
        how = "the job was ended without MPI_Finalize once the model was written"
    else:
        how = f"the launcher failed after the model was written (exit code {result.returncode})"
    return f"{'; '.join(what) or 'a rank stopped answering'}; {how}"
