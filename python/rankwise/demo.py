"""`rankwise demo`: probe the embedded simulated cluster, then map three jobs and run them before/after."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from rankwise.anomalies import find_slow_links
from rankwise.errors import RankwiseError
from rankwise.optimize import benchmark_runner, compare, plan, predicted_rows, with_bytes
from rankwise.patterns import dims_create, generate
from rankwise.report.placement import print_comparison
from rankwise.plots import plot_model, plot_speedup
from rankwise.probe import ProbeOptions, probe_sim
from rankwise.report.model import render, summarize
from rankwise.sim.platform import default_spec
from rankwise.sim.platform import generate as generate_platform
from rankwise.files import write_atomic
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
