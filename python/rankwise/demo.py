"""`rankwise demo`: the main job on the embedded simulated cluster."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.table import Table

from rankwise.anomalies import find_slow_links
from rankwise.errors import RankwiseError
from rankwise.plots import plot_model
from rankwise.probe import ProbeOptions, probe_sim
from rankwise.report import render, summarize
from rankwise.sim.platform import default_spec, generate
from rankwise.sim.verdict import judge


def run_demo(out: Path, nodes: int | None = None, console: Console | None = None) -> bool:
    """Generate the default platform, probe it, write model + heatmaps, print
    the summary and how the slow links found match the hidden ground truth.
    Returns whether every hidden fault was found without false alarms."""
    console = console or Console()
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RankwiseError(f"{out}: cannot create the output folder: {exc.strerror}") from None
    spec = default_spec()
    gen = generate(spec, out / "platform")
    console.rule("[bold]rankwise demo[/bold]: the embedded simulated cluster")
    console.print(
        f"SimGrid platform {gen.platform_xml}: {len(gen.nodes)} nodes x {spec.cores} cores "
        f"in {spec.racks} racks of {spec.nodes_per_rack}, a two-level fat tree; it hides "
        f"{len(gen.altered_links)} altered links (ground truth in {gen.ground_truth})"
    )
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
    console.print(f"\nwritten: {model_path} (model), {heatmaps} (heatmaps), {gen.platform_xml} (platform)")
    return verdict.ok
