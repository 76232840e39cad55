"""`rankwise export`: what a model found, in other tools' formats."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape

from rankwise.cli.common import console
from rankwise.util.errors import RankwiseError, UsageError

export_app = typer.Typer(no_args_is_help=True, help="Write what a model found in other tools' formats.")


@export_app.command("slurm-topology", no_args_is_help=True)
def slurm_topology(
    model_path: Path = typer.Argument(..., metavar="MODEL", help="A model (.rwm)."),
    output: Path = typer.Option(..., "--output", "-o", help="The topology.conf to write."),
    avoid: Optional[Path] = typer.Option(None, "--avoid", help="The list of nodes to avoid (default: beside it, .avoid)."),
):
    """A Slurm topology.conf (tree plugin) whose switches are the measured groups, and the nodes to avoid."""
    from rankwise.util.files import prepare_output, write_atomic
    from rankwise.cluster.hostlist import compress
    from rankwise.model.model import Model
    from rankwise.cluster.slurm_topology import avoid_text, build_switches, nodes_to_avoid, topology_conf

    avoid = avoid if avoid is not None else output.with_suffix(".avoid")
    if avoid.resolve() == output.resolve():
        raise UsageError(f"--avoid {avoid}: the same file as -o")
    if model_path.is_dir():
        raise RankwiseError(f"{model_path}: is a directory; give a model (.rwm)")
    model = Model.load(model_path)
    if model.n_nodes == 0:
        raise RankwiseError(f"{model_path}: the model has no nodes")
    switches = build_switches(model)
    bad = nodes_to_avoid(model)
    for path in (output, avoid):
        prepare_output(path)
    write_atomic(output, topology_conf(model, switches, model_path.name))
    write_atomic(avoid, avoid_text(bad, model_path.name))
    leaves = [s for s in switches if s.nodes]
    console.print(f"{len(leaves)} leaf switch(es), {len(switches) - len(leaves)} above them, written to "
                  f"[bold]{escape(str(output))}[/bold]", highlight=False)
    console.print(f"{len(bad)} node(s) to avoid written to [bold]{escape(str(avoid))}[/bold]"
                  + (f": {escape(compress([a.name for a in bad]))}" if bad else ""), highlight=False)
