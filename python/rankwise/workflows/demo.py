"""`rankwise demo`: probe the embedded simulated cluster, then map three jobs and run them before/after."""

from __future__ import annotations

import os
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from rankwise.model.anomalies import find_slow_links
from rankwise.util.errors import RankwiseError
from rankwise.workflows.optimize import benchmark_runner, compare, plan, predicted_rows, with_bytes
from rankwise.traffic.patterns import dims_create, generate
from rankwise.report.placement import print_comparison
from rankwise.report.plots import plot_model, plot_speedup
from rankwise.measure.probe import ProbeOptions, probe_sim
from rankwise.report.model import render, summarize
from rankwise.sim.platform import default_spec
from rankwise.sim.platform import generate as generate_platform
from rankwise.util.files import write_atomic
from rankwise.sim.verdict import judge


def run_demo(out: Path, nodes: int | None = None, console: Console | None = None) -> bool:
    """Generate the default platform, probe it, write model + heatmaps, print
    the summary and how the slow links found match the hidden ground truth.
    Returns whether every hidden fault was found without false alarms."""
    console = console or Console(emoji=False)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RankwiseError(f"{out}: cannot create the output folder: {exc.strerror}") from None
    spec = default_spec()
    gen = generate_platform(spec, out / "platform")
    console.rule("[bold]rankwise demo[/bold]: the embedded simulated cluster")
    console.print(escape(  # the paths are under the user's --out
        f"SimGrid platform {gen.platform_xml}: {len(gen.nodes)} nodes x {spec.cores} cores "
        f"in {spec.racks} racks of {spec.nodes_per_rack}, a two-level fat tree; it hides "
        f"{len(gen.altered_links)} altered links (ground truth in {gen.ground_truth})"
    ), highlight=False)
    model_path = out / "model.rwm"
    model = probe_sim(gen.platform_xml, model_path, ProbeOptions(), ranks_per_node=2, nodes=nodes)
    console.print(
        f"probed {model.n_nodes} nodes x 2 ranks in {model.duration:.3f} simulated seconds "
        f"(concurrent rounds, {len(model.sizes)} sizes, {model.settings.repetitions} repetitions "
        f"x {model.settings.rounds} rounds)"
    )
    render(summarize(model), console)

    findings = find_slow_links(model)
    verdict = judge(gen, model, findings)
    table = Table(title="Slow links found from the measurements vs the platform's hidden faults")
    for col in ("link", "hidden fault", "found by the probe"):
        table.add_column(col)
    for v in verdict.links:
        found = "[green]yes[/green]" if v.found else ("[red]no[/red]" if v.counted else "not seen (varies)")
        table.add_row(v.link, v.what, found)
    console.print(table)
    console.print(
        f"false alarms: {', '.join(verdict.false_nodes + verdict.false_blocks) or 'none'}"
    )

    heatmaps = plot_model(model, out / "heatmaps.png", highlight=findings.slow_nodes)
    console.print(escape(f"\nwritten: {model_path} (model), {heatmaps} (heatmaps), {gen.platform_xml} (platform)"),
                  highlight=False)

    comparisons, chosen = main_job(gen.platform_xml, model, console, spec.cores)
    speedups = plot_speedup(comparisons, out / "speedup.png", title="default cluster: rankwise vs block placement")
    placed = plot_model(model, out / "chosen-nodes.png", highlight=chosen)
    for c in comparisons:
        write_atomic(out / f"{c.label.split()[0].strip(',').replace('-', '')}.csv", c.to_csv())
    console.print(escape(f"written: {speedups} (speed-up by size), {placed} (nodes rankwise chose for all-to-all), "
                         f"one CSV per benchmark"), highlight=False)
    return verdict.ok


def demo_jobs(n_nodes: int, probed: int, cores: int) -> list[tuple[str, str, list[str], str | None, int]]:
    """(title, pattern spec, benchmark program + args, table, slots per node)
    of the three before/after runs. All-to-all and stencil run half the
    probed slots (32 nodes' worth of ranks on the default cluster: rankwise
    must choose the nodes); the groups fill every core of a quarter of the
    nodes, groups of a node's size (Getmansky et al. 2015, Table 3's shape, scaled)."""
    n = max(8, n_nodes * probed // 2)
    n -= n % 8
    px, py, pz = dims_create(n, 3)
    per_group = cores
    groups = max(2, n_nodes * cores // 4 // per_group)
    sizes = "1K,16K,64K,256K,1M"
    return [
        (f"all-to-all, {n} ranks", f"alltoall:ranks={n},bytes=64K",
         ["alltoall", "--sizes", sizes, "--iterations", "2"], None, probed),
        (f"stencil 3-D mode (2-2-2), {px}x{py}x{pz} ranks",
         f"stencil3d:grid={px}x{py}x{pz},bytes=64K,mode=3d",
         ["stencil", "--grid", f"{px}x{py}x{pz}", "--mode", "3d", "--sizes", sizes, "--iterations", "2"], "3d",
         probed),
        (f"synthetic groups (Getmansky et al. 2015), {groups} x {per_group} ranks",
         f"groups:groups={groups},per_group={per_group},bytes=1M,link_bytes=64K",
         ["groups", "--groups", str(groups), "--sizes", "64K,256K,1M", "--link-bytes", "64K",
          "--iterations", "2"], None, cores),
    ]


def main_job(platform, model, console: Console, cores: int):
    """The pipeline on the probed model: map each benchmark's traffic, run it
    in the default block placement and in rankwise's, print the tables."""
    console.rule("[bold]three jobs[/bold]: map, then run before / after on the simulated cluster")
    comparisons, chosen = [], []
    jobs = demo_jobs(model.n_nodes, int(model.ranks_per_node.max()), cores)
    for title, spec, (program, *args), table, slots in jobs:
        p = plan(model, generate(spec), [(h, slots) for h in model.names])
        runner = benchmark_runner(program, args, sim=platform, table=table)
        with console.status(f"[bold]{title}[/bold]: running both placements"):
            c = compare(title, runner, p.before_hosts, p.after_hosts, repeats=1)
        c.predicted = predicted_rows(p, c.sizes, with_bytes(spec))
        comparisons.append(c)
        if not chosen:
            chosen = p.chosen_model_nodes
        console.print(f"{title}: {escape(p.result.algorithm)} chose {p.result.n_selected} nodes "
                      f"(default: the first {len(p.default.used_nodes())}), predicted x{p.result.gain:.2f}",
                      highlight=False)
        print_comparison(c, console, title=f"{title} — simulated time per iteration")
    return comparisons, chosen


# --- the same job on an emulated cluster of real hosts (rankwise demo --emulated, make demo-real) ---

EMULATED_SLOW = 1  # node-1's NIC at a quarter: inside the launchers' default block of the first hosts


def emulated_jobs() -> list[tuple[str, str, list[str], str | None, int]]:
    """The demo's three jobs at the emulated cluster's scale: 6 ranks on 8 hosts of one slot
    (rankwise chooses which 6), sizes kept small enough for 200 Mbit/s links."""
    sizes = "16K,64K,256K"
    return [
        ("all-to-all, 6 ranks", "alltoall:ranks=6,bytes=64K",
         ["alltoall", "--sizes", sizes, "--iterations", "3"], None, 1),
        ("stencil 3-D mode (2-2-2), 3x2x1 ranks", "stencil3d:grid=3x2x1,bytes=64K,mode=3d",
         ["stencil", "--grid", "3x2x1", "--mode", "3d", "--sizes", sizes, "--iterations", "3"], "3d", 1),
        ("synthetic groups (Getmansky et al. 2015), 3 x 2 ranks", "groups:groups=3,per_group=2,bytes=256K,link_bytes=16K",
         ["groups", "--groups", "3", "--sizes", "64K,256K", "--link-bytes", "16K", "--iterations", "3"], None, 1),
    ]


def run_demo_emulated(out: Path, console: Console | None = None) -> bool:
    """The demo on real MPI: an emulated cluster of 8 hosts in 2 racks (NICs 200 Mbit/s, node-1's
    at a quarter) brought up, probed through Open MPI, the same tables as the simulated demo,
    the three jobs run before/after across the hosts; the cluster always taken down."""
    import hashlib
    import time

    from rankwise.emulate import down, up
    from rankwise.emulate.system import check_supported
    from rankwise.workflows.optimize import benchmark_runner
    from rankwise.measure.probe import probe_launcher
    from rankwise.sim.platform import Degraded, PlatformSpec, load_generated

    console = console or Console(emoji=False)
    check_supported()  # root and namespaces, or one line and exit 2
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RankwiseError(f"{out}: cannot create the output folder: {exc.strerror}") from None
    cluster = (out / "cluster").resolve()
    name = "demo" + hashlib.sha1(f"{cluster}{os.getpid()}".encode()).hexdigest()[:6]
    spec = PlatformSpec(racks=2, nodes_per_rack=4, cores=1, node_bw=200e6 / 8,
                        degraded=(Degraded("node", EMULATED_SLOW, bw_factor=0.25),))
    console.rule("[bold]rankwise demo --emulated[/bold]: real MPI on an emulated cluster")
    plan_ = up(spec, cluster, name)
    try:
        console.print(escape(f"emulated cluster {name}: 8 hosts (network namespaces) in 2 racks on {plan_.subnet}, "
                             f"NICs shaped to 200 Mbit/s, node-{EMULATED_SLOW}'s to 50 (ground truth in "
                             f"{cluster}/ground_truth.json)"), highlight=False)
        launcher = f"{cluster}/mpirun --hostfile {cluster}/hostfile -np 8"
        model_path = out / "model.rwm"
        start = time.monotonic()
        model = probe_launcher(launcher, model_path, ProbeOptions(sizes="8,64K,1M", repetitions=3, rounds=2,
                                                                  timeout=60), show_progress=True)
        console.print(f"probed {model.n_nodes} hosts through Open MPI in {time.monotonic() - start:.0f} s "
                      f"(3 sizes, 3 repetitions x 2 rounds)")
        render(summarize(model), console)
        findings = find_slow_links(model)
        verdict = judge(load_generated(cluster), model, findings)
        table = Table(title="Slow links found from the measurements vs the emulated cluster's shaped links")
        for col in ("link", "shaped", "found by the probe"):
            table.add_column(col)
        for v in verdict.links:
            table.add_row(v.link, v.what, "[green]yes[/green]" if v.found else "[red]no[/red]")
        console.print(table)
        console.print(f"false alarms: {', '.join(verdict.false_nodes + verdict.false_blocks) or 'none'}")
        heatmaps = plot_model(model, out / "heatmaps.png", highlight=findings.slow_nodes)

        console.rule("[bold]three jobs[/bold]: map, then run before / after across the emulated hosts")
        comparisons = []
        for title, pattern, (program, *args), tbl, slots in emulated_jobs():
            p = plan(model, generate(pattern), [(h, slots) for h in model.names], mpi="openmpi")  # the cluster's mpirun
            runner = benchmark_runner(program, args, launcher=f"{cluster}/mpirun -np {len(p.after_hosts)}",
                                      table=tbl, timeout=300)
            with console.status(f"[bold]{title}[/bold]: running both placements"):
                c = compare(title, runner, p.before_hosts, p.after_hosts, repeats=1)
            c.predicted = predicted_rows(p, c.sizes, with_bytes(pattern))
            comparisons.append(c)
            console.print(f"{title}: {escape(p.result.algorithm)} chose {', '.join(p.after_hosts)} "
                          f"(default: {', '.join(p.before_hosts)}), predicted x{p.result.gain:.2f}", highlight=False)
            print_comparison(c, console, title=f"{title} — measured time per iteration (real MPI)")
        speedups = plot_speedup(comparisons, out / "speedup.png", title="emulated cluster: rankwise vs block placement")
        for c in comparisons:
            write_atomic(out / f"{c.label.split()[0].strip(',').replace('-', '')}.csv", c.to_csv())
        console.print(escape(f"written: {model_path} (model), {heatmaps} (heatmaps), {speedups} (speed-up by size), "
                             "one CSV per benchmark"), highlight=False)
        return verdict.ok
    finally:
        down(cluster)
        console.print(f"emulated cluster {name} taken down", highlight=False)
