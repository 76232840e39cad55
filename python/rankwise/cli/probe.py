"""`rankwise probe`: measure every pair of nodes into a model file."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape

from rankwise.cli.common import HOSTFILE_OPTION, console
from rankwise.util.errors import UsageError


def _pairs(text: Optional[str]) -> Optional[list[tuple[str, str]]]:
    if not text:
        return None
    out = []
    for item in text.split(","):
        src, sep, dst = item.rpartition(":")
        if not sep or not src or not dst:
            raise UsageError(f"--pairs: '{item}' is not SRC:DST")
        out.append((src, dst))
    return out


# What rankwise-probe accepts (engine/mpi/tools/rankwise_probe.c), checked here so that a typo is a
# usage error at once rather than a failed launch: sizes like 8, 1K, 64KiB, 4M; increasing, <= 1 GiB.
_SIZE = re.compile(r"[ \t\n\v\f\r]*\+?([0-9]+)([KkMm]?)(?:i?B)?")  # as strtoll reads it
_MAX_SIZES = 40
_MAX_SIZE = 1 << 30
MAX_SERIES = 100000  # RW_MAX_SERIES of engine/mpi/probe/probe.c
DEFAULT_REPETITIONS, DEFAULT_ROUNDS = 5, 3
GROUP_BY = ("host", "rank")
MODES = ("concurrent", "isolated")


def parse_sizes(text: str) -> list[int]:
    """'8,1K,64K,4M' -> bytes; a UsageError naming --sizes otherwise."""
    sizes = []
    for item in [i for i in text.split(",") if i]:  # empty items are skipped, as strtok does
        m = _SIZE.fullmatch(item)
        if not m:
            raise UsageError(f"--sizes: '{text}' is not a list like 8,1K,4M ('{item}' is not a size)")
        sizes.append(int(m.group(1)) << {"": 0, "k": 10, "m": 20}[m.group(2).lower()])
    if not sizes:
        raise UsageError("--sizes is empty (a list like 8,1K,4M)")
    if len(sizes) > _MAX_SIZES:
        raise UsageError(f"--sizes: {len(sizes)} sizes, at most {_MAX_SIZES}")
    if any(b <= a for a, b in zip(sizes, sizes[1:])) or sizes[-1] > _MAX_SIZE:
        raise UsageError(f"--sizes '{text}': sizes must be increasing, between 0 and 1G")
    return sizes


def check_choice(option: str, value: Optional[str], known: tuple[str, ...]) -> None:
    if value is not None and value not in known:
        raise UsageError(f"{option}: '{value}' is not {' or '.join(known)}")


def check_at_least(option: str, value, lowest) -> None:
    if value is not None and not value >= lowest:
        raise UsageError(f"{option} must be >= {lowest:g}, got {value:g}")


def probe_command(
    output: Path = typer.Option(..., "--output", "-o", help="Model file to write."),
    sim: Optional[Path] = typer.Option(None, "--sim", help="Probe the simulated cluster of this SimGrid platform."),
    launcher: Optional[str] = typer.Option(None, "--launcher", help="Probe a real cluster: e.g. 'mpirun -np 8 --hostfile h'."),
    nodes: Optional[int] = typer.Option(None, "--nodes", help="--sim: use the first N hosts of the platform."),
    hostfile: Optional[Path] = HOSTFILE_OPTION,
    ranks_per_node: int = typer.Option(1, "--ranks-per-node", help="--sim: ranks on each host (>= 2 measures intra-node)."),
    sizes: Optional[str] = typer.Option(None, "--sizes", help="Message sizes, e.g. 8,1K,64K,4M (default 8 B..4 MiB)."),
    repetitions: Optional[int] = typer.Option(None, "--repetitions", help="Timed ping-pongs per pair, size and round (5)."),
    rounds: Optional[int] = typer.Option(None, "--rounds", help="Times the whole schedule is repeated (3)."),
    warmup: Optional[int] = typer.Option(None, "--warmup", help="Untimed ping-pongs before each series (1)."),
    mode: Optional[str] = typer.Option(None, "--mode", help="concurrent (all pairs of a round at once) or isolated."),
    timeout: Optional[float] = typer.Option(None, "--timeout", help="Seconds before a pair counts as missing (10)."),
    time_budget: Optional[float] = typer.Option(None, "--time-budget", help="Stop starting new rounds after this many seconds."),
    group_by: Optional[str] = typer.Option(None, "--group-by", help="host (default) or rank (every rank a node: localhost)."),
    no_intra: bool = typer.Option(False, "--no-intra", help="Skip rank-to-rank measurement inside nodes."),
    pairs: Optional[str] = typer.Option(None, "--pairs", help="Only these ordered pairs: SRC:DST,SRC:DST."),
    update: Optional[Path] = typer.Option(None, "--update", help="Merge the new measurements into this model."),
    reprobe: Optional[str] = typer.Option(None, "--reprobe", help="With --update: re-measure every pair touching these nodes (A,B,...)."),
    capacities: bool = typer.Option(False, "--capacities", help="Then run the stress test: shared-link (rack uplink) and NIC capacities."),
    capacities_only: bool = typer.Option(False, "--capacities-only", help="Only the stress test, on the pairs and groups of --update MODEL."),
    no_references: bool = typer.Option(False, "--no-references", help="No reference pass: pairs across groups keep the bandwidth they got among their round-mates."),
    strict: bool = typer.Option(False, "--strict", help="Exit 3 when the model is degraded: pairs or intra-node figures missing (health checks)."),
):
    """Measure every pair of nodes into a model file."""
    from rankwise.measure.probe import ProbeOptions, model_gaps, pairs_touching, probe_launcher, probe_sim
    from rankwise.report.model import render, summarize

    if (sim is None) == (launcher is None):
        raise UsageError("give exactly one of --sim PLATFORM or --launcher 'mpirun ...'")
    if reprobe and not update:
        raise UsageError("--reprobe needs --update MODEL (the model whose pairs are re-measured)")
    if capacities and capacities_only:
        raise UsageError("give one of --capacities (after the ping-pong) or --capacities-only (instead of it)")
    if capacities_only and not update:
        raise UsageError("--capacities-only needs --update MODEL (the model whose groups are stressed)")
    if capacities_only and (pairs or reprobe or sizes):
        raise UsageError("--capacities-only measures no pairs: drop --pairs, --reprobe and --sizes")
    if sizes is not None:
        parse_sizes(sizes)
    check_choice("--mode", mode, MODES)
    check_choice("--group-by", group_by, GROUP_BY)
    for option, value, lowest in (("--repetitions", repetitions, 1), ("--rounds", rounds, 1),
                                  ("--warmup", warmup, 0), ("--time-budget", time_budget, 0),
                                  ("--ranks-per-node", ranks_per_node, 1), ("--nodes", nodes, 2)):
        check_at_least(option, value, lowest)
    series = (repetitions or DEFAULT_REPETITIONS) * (rounds or DEFAULT_ROUNDS)
    if series > MAX_SERIES:
        raise UsageError(f"repetitions x rounds is {series} (--repetitions, --rounds): "
                         f"at most {MAX_SERIES} samples per pair and size")
    if timeout is not None and not timeout > 0:
        raise UsageError(f"--timeout must be > 0 seconds, got {timeout:g}")
    wanted = _pairs(pairs) or []
    if reprobe:
        wanted += pairs_touching(update, [n for n in reprobe.split(",") if n])
    options = ProbeOptions(
        sizes=sizes, repetitions=repetitions, rounds=rounds, warmup=warmup, mode=mode,
        timeout=timeout, time_budget=time_budget, group_by=group_by, intra=not no_intra,
        pairs=wanted or None, update=update, references=not no_references,
        capacities="only" if capacities_only else "after" if capacities else None,
    )
    costs, refs = [], []
    domains = None
    if sim is not None:
        from rankwise.sim.domains import domains_of_platform

        domains = domains_of_platform(sim)  # nodes of one host per NUMA domain (docs/concepts/inside-node.md)
    if domains is not None:
        from rankwise.cli.node import probe_domains_command

        model = probe_domains_command(domains, output, options, ranks_per_node=ranks_per_node, nodes=nodes,
                                      hostfile=hostfile, on_stress_cost=costs.append)
    elif sim is not None:
        model = probe_sim(sim, output, options, ranks_per_node=ranks_per_node, nodes=nodes, hostfile=hostfile,
                          on_stress_cost=costs.append, on_reference_cost=refs.append)
    else:
        model = probe_launcher(launcher, output, options, hostfile=hostfile, on_stress_cost=costs.append,
                               on_reference_cost=refs.append)
    render(summarize(model), console)
    for ref in refs:
        clock = " (simulated)" if sim is not None else ""
        console.print(f"reference pass: {ref.rounds} rounds, {ref.seconds:.3g} s{clock}; {ref.raised} pairs across "
                      f"groups raised to their lone bandwidth (median +{100 * ref.gain:.1f} %)", highlight=False)
    for cost in costs:
        clock = " (simulated)" if sim is not None else ""
        varying = f"; {cost.raised} pairs through a varying link raised to its typical reading" if cost.raised else ""
        console.print(f"stress test: {cost.phases} phases, {cost.seconds:.3g} s{clock}{varying}", highlight=False)
    console.print(f"model written to [bold]{escape(str(output))}[/bold]", highlight=False)
    gaps = model_gaps(model, examples=0)
    if strict and gaps:
        print(f"rankwise: degraded: {'; '.join(gaps)} (--strict)", file=sys.stderr)
        raise typer.Exit(DEGRADED_EXIT)


DEGRADED_EXIT = 3  # a model was written, but it lacks what was asked for
