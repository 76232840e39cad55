"""`rankwise watch`: periodic (partial, rotating) probes into a time series of models."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape

from rankwise.cli.common import HOSTFILE_OPTION, console
from rankwise.util.errors import UsageError


def _countdown(seconds: float) -> None:
    """Wait, showing the time left before the next probe."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(TextColumn("next probe in"), BarColumn(), TimeRemainingColumn(), console=console,
                  transient=True) as bar:
        task = bar.add_task("wait", total=seconds)
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            time.sleep(min(1.0, left))
            bar.update(task, completed=seconds - max(0.0, end - time.monotonic()))


def watch_command(
    output: Path = typer.Option(..., "--output", "-o", help="Folder of the series: the models, index.tsv, change heatmaps."),
    sim: Optional[Path] = typer.Option(None, "--sim", help="Watch the simulated cluster of this SimGrid platform."),
    launcher: Optional[str] = typer.Option(None, "--launcher", help="Watch a real cluster: e.g. 'mpirun -np 8 --hostfile h'."),
    every: str = typer.Option("10m", "--every", help="Interval between probes: 30s, 10m, 2h (simulated time under --sim)."),
    count: Optional[int] = typer.Option(None, "--count", help="Stop after this many probes (default: until interrupted)."),
    pairs_fraction: float = typer.Option(1.0, "--pairs-fraction", help="Share of the pairs each probe re-measures, those measured longest ago (0.25: every pair every 4 probes)."),
    nodes: Optional[int] = typer.Option(None, "--nodes", help="--sim: use the first N hosts of the platform."),
    hostfile: Optional[Path] = HOSTFILE_OPTION,
    sizes: Optional[str] = typer.Option(None, "--sizes", help="Message sizes of the first probe, e.g. 8,64K,1M (later probes keep them)."),
    repetitions: Optional[int] = typer.Option(None, "--repetitions", help="Timed ping-pongs per pair, size and round (5)."),
    rounds: Optional[int] = typer.Option(None, "--rounds", help="Times each probe's schedule is repeated (3)."),
    threshold: float = typer.Option(0.10, "--threshold", help="Smallest relative change that counts (see rankwise diff)."),
    no_plot: bool = typer.Option(False, "--no-plot", help="Do not draw a change heatmap per probe."),
):
    """Probe periodically (a rotating share of the pairs) into a series of models, each compared with the one before."""
    from rankwise.cli.probe import check_at_least, parse_sizes
    from rankwise.measure.probe import ProbeOptions
    from rankwise.report.diff import headline
    from rankwise.report.diff import render as render_diff
    from rankwise.measure.watch import Watch, launcher_probe, parse_every, sim_probe

    if (sim is None) == (launcher is None):
        raise UsageError("give exactly one of --sim PLATFORM or --launcher 'mpirun ...'")
    interval = parse_every(every)
    for option, value, lowest in (("--count", count, 1), ("--repetitions", repetitions, 1),
                                  ("--rounds", rounds, 1), ("--nodes", nodes, 2), ("--threshold", threshold, 0)):
        check_at_least(option, value, lowest)
    if sizes is not None:
        parse_sizes(sizes)
    options = ProbeOptions(sizes=sizes, repetitions=repetitions, rounds=rounds)
    hosts = None  # the nodes the probes will run on, when known before a launch
    if sim is not None:
        from rankwise.sim.hosts import rank_hosts

        if not sim.is_file():
            raise UsageError(f"--sim {sim}: no such platform file")
        hosts = list(dict.fromkeys(rank_hosts(sim, hostfile=hostfile, nodes=nodes, min_nodes=2)))
        probe = sim_probe(sim, options, nodes=nodes, hostfile=hostfile)
    else:
        probe = launcher_probe(launcher, options, hostfile=hostfile)
    watch = Watch(output, probe, fraction=pairs_fraction, threshold=threshold, simulated=sim is not None,
                  plot=not no_plot, nodes=hosts)
    if watch.removed:
        console.print(f"removed {len(watch.removed)} file(s) the series' index does not list (a probe stopped "
                      f"before it was listed): {escape(', '.join(watch.removed[:4]))}"
                      f"{', ...' if len(watch.removed) > 4 else ''}", highlight=False)
    if watch.previous is not None:
        options.sizes = ",".join(str(int(s)) for s in watch.previous.sizes)  # merging needs the same sizes
        if sizes is not None and [int(s) for s in watch.previous.sizes] != parse_sizes(sizes):
            raise UsageError(f"--sizes {sizes}: the series in {output} was measured at other sizes; drop --sizes")
        console.print(f"continuing the series in [bold]{escape(str(output))}[/bold] after "
                      f"{escape(watch.entries[-1].model)}", highlight=False)
    done = 0
    while count is None or done < count:
        if done or watch.previous is not None:
            if sim is None and interval > 0:
                _countdown(interval)
            watch.wait(interval, time.sleep)
        step = watch.step()
        done += 1
        e = step.entry
        clock = f", simulated {e.sim_start:.6g}..{e.sim_end:.6g} s" if sim is not None else ""
        what = "first model" if step.diff is None else headline(step.diff)
        console.print(f"[bold]#{e.seq}[/bold] {e.time} {escape(e.model)}: {e.pairs} pairs measured{clock}; "
                      f"{escape(what)}", highlight=False)
        if step.diff is not None and step.diff.any_change:
            render_diff(step.diff, console, top=5)
    console.print(f"{done} model(s) written to [bold]{escape(str(output))}[/bold] (index: "
                  f"{escape(str(output / 'index.tsv'))})", highlight=False)
