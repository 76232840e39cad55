"""The `rankwise` command line."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from rankwise.cli_import import import_command
from rankwise.cli_map import map_command
from rankwise.cli_optimize import optimize_command
from rankwise.cli_pattern import pattern_app
from rankwise.cli_profile import profile_app
from rankwise.errors import RankwiseError

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Measure the network an MPI job runs on, and act on what was measured.",
)
sim_app = typer.Typer(no_args_is_help=True, help="The simulated cluster (SimGrid SMPI).")
app.add_typer(sim_app, name="sim")
app.add_typer(pattern_app, name="pattern")
app.add_typer(profile_app, name="profile")
app.command("import", no_args_is_help=True)(import_command)
app.command("map", no_args_is_help=True)(map_command)
app.command("optimize", no_args_is_help=True, context_settings={"allow_interspersed_args": False})(optimize_command)

console = Console()
err_console = Console(stderr=True)


def _pairs(text: Optional[str]) -> Optional[list[tuple[str, str]]]:
    if not text:
        return None
    out = []
    for item in text.split(","):
        src, sep, dst = item.rpartition(":")
        if not sep or not src or not dst:
            raise RankwiseError(f"--pairs: '{item}' is not SRC:DST")
        out.append((src, dst))
    return out


@app.command()
def probe(
    output: Path = typer.Option(..., "--output", "-o", help="Model file to write."),
    sim: Optional[Path] = typer.Option(None, "--sim", help="Probe the simulated cluster of this SimGrid platform."),
    launcher: Optional[str] = typer.Option(None, "--launcher", help="Probe a real cluster: e.g. 'mpirun -np 8 --hostfile h'."),
    nodes: Optional[int] = typer.Option(None, "--nodes", help="--sim: use the first N hosts of the platform."),
    hostfile: Optional[Path] = typer.Option(None, "--hostfile", help="--sim: hosts (and slots = ranks) to use; --launcher: checked, then passed as -hostfile."),
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
):
    """Measure every pair of nodes into a model file."""
    from rankwise.probe import ProbeOptions, pairs_touching, probe_launcher, probe_sim
    from rankwise.report import render, summarize

    if (sim is None) == (launcher is None):
        raise RankwiseError("give exactly one of --sim PLATFORM or --launcher 'mpirun ...'")
    if reprobe and not update:
        raise RankwiseError("--reprobe needs --update MODEL (the model whose pairs are re-measured)")
    wanted = _pairs(pairs) or []
    if reprobe:
        wanted += pairs_touching(update, [n for n in reprobe.split(",") if n])
    options = ProbeOptions(
        sizes=sizes, repetitions=repetitions, rounds=rounds, warmup=warmup, mode=mode,
        timeout=timeout, time_budget=time_budget, group_by=group_by, intra=not no_intra,
        pairs=wanted or None, update=update,
    )
    if sim is not None:
        model = probe_sim(sim, output, options, ranks_per_node=ranks_per_node, nodes=nodes, hostfile=hostfile)
    else:
        model = probe_launcher(launcher, output, options, hostfile=hostfile)
    render(summarize(model), console)
    console.print(f"model written to [bold]{output}[/bold]")


def _is_matrix(path: Path) -> bool:
    if path.suffix == ".npz":
        return True
    try:
        with open(path, "rb") as f:
            return f.read(15) == b"rankwise-matrix"
    except OSError:
        return False  # the model reader says why


@app.command()
def show(
    model_path: Path = typer.Argument(..., metavar="FILE", help="A model (.rwm) or a communication matrix (.rwc, .npz)."),
    plot: Optional[Path] = typer.Option(None, "--plot", help="Also draw heatmaps into this PNG (latency and bandwidth, or traffic)."),
    top: int = typer.Option(10, "--top", help="How many of the slowest pairs to list."),
):
    """Summarise a model (groups of close nodes, slowest and missing pairs) or a traffic matrix."""
    from rankwise.model import Model
    from rankwise.plots import plot_matrix, plot_model
    from rankwise.report import render, summarize

    if _is_matrix(model_path):
        from rankwise.cli_pattern import show_summary
        from rankwise.matrix import CommMatrix

        matrix = CommMatrix.load(model_path)
        show_summary(matrix, model_path)
        if plot:
            plot_matrix(matrix, plot)
            console.print(f"traffic heatmap written to [bold]{plot}[/bold]")
        return
    model = Model.load(model_path)
    render(summarize(model, top=top), console)
    if plot:
        plot_model(model, plot)
        console.print(f"heatmaps written to [bold]{plot}[/bold]")


@sim_app.command("platform")
def sim_platform(
    out: Path = typer.Option(..., "--out", "-o", help="Folder to write platform.xml, hostfile, ground_truth.json into."),
    racks: Optional[int] = typer.Option(None, help="Number of racks (leaf switches)."),
    nodes_per_rack: Optional[int] = typer.Option(None, "--nodes-per-rack", help="Nodes under each leaf switch."),
    cores: Optional[int] = typer.Option(None, help="Cores per node."),
    degrade: list[str] = typer.Option([], "--degrade", help="KIND:INDEX:BW_FACTOR:LAT_FACTOR, KIND node or uplink (repeatable)."),
    vary: list[str] = typer.Option([], "--vary", help="KIND:INDEX: that link's bandwidth varies over time (repeatable)."),
    unreachable: list[int] = typer.Option([], "--unreachable", help="A node that does not answer (repeatable)."),
    oversubscription: Optional[float] = typer.Option(None, help="Rack uplink oversubscription (1 = non-blocking)."),
    seed: Optional[int] = typer.Option(None, help="Seed of every random choice."),
    default: bool = typer.Option(False, "--default", help="The embedded default platform (64 nodes x 4 cores, 4 racks)."),
):
    """Generate a SimGrid platform: a two-level fat tree with what its topology does not show."""
    from rankwise.sim.cli_spec import spec_from_options
    from rankwise.sim.platform import generate

    spec = spec_from_options(
        default=default, racks=racks, nodes_per_rack=nodes_per_rack, cores=cores, degrade=degrade,
        vary=vary, unreachable=unreachable, oversubscription=oversubscription, seed=seed,
    )
    gen = generate(spec, out)
    console.print(f"platform with {len(gen.nodes)} nodes written to [bold]{out}[/bold]")


@app.command()
def demo(
    out: Path = typer.Option(Path("rankwise-demo"), "--out", help="Output folder."),
    nodes: Optional[int] = typer.Option(None, "--nodes", help="Probe only the first N nodes of the default platform."),
):
    """The main job on the embedded simulated cluster: platform, probe, model, heatmaps, summary."""
    from rankwise.demo import run_demo

    run_demo(out, nodes=nodes, console=console)


@app.command("bench")
def bench_command(
    out: Path = typer.Option(Path("rankwise-bench"), "--out", help="Folder for the tables (CSV), plots (PNG) and the platforms' models."),
    only: Optional[str] = typer.Option(None, "--only", help="Comma list of: alltoall, stencil, scaling, groups, uniform, real."),
    quick: bool = typer.Option(False, "--quick", help="Fewer scales and configurations (a couple of minutes)."),
    repeats: int = typer.Option(1, "--repeats", help="Runs per placement (simulated time is deterministic: 1 is enough)."),
):
    """The seeds' before/after tables, reproduced on simulated platforms (and one real-MPI run)."""
    from rankwise.evidence import run_bench

    if repeats < 1:
        raise RankwiseError(f"--repeats must be >= 1, got {repeats}")
    names = [n.strip() for n in only.split(",") if n.strip()] if only else None
    if not run_bench(out, names, quick, repeats, console):
        raise RankwiseError("some goals were missed (see FAIL above)", exit_code=1)


def main() -> None:
    try:
        app(standalone_mode=True)
    except RankwiseError as exc:
        err_console.print(f"[bold red]rankwise: error:[/bold red] {exc}", highlight=False, soft_wrap=True)
        sys.exit(exc.exit_code)


if __name__ == "__main__":
    main()
