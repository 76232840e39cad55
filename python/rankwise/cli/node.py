"""`rankwise node`: the inside of a compute node as hwloc reads it.

    rankwise node show                                   # this machine
    rankwise node show --synthetic "pack:2 numa:2 core:4 pu:1"
    rankwise node show --xml node.xml                    # lstopo --of xml on a compute node
    rankwise node export -o node.xml                     # this machine (a compute node) as hwloc XML
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from rankwise.cli.common import console

node_app = typer.Typer(no_args_is_help=True,
                       help="Inside the node: packages, NUMA domains, shared caches and cores (hwloc).")

SYNTHETIC_OPTION = typer.Option(
    None, "--synthetic", metavar="DESC",
    help="A synthetic node in hwloc's syntax, e.g. 'pack:2 numa:2 core:4 pu:1'.")
XML_OPTION = typer.Option(None, "--xml", metavar="FILE", help="An hwloc XML topology (lstopo --of xml).")


@node_app.command("show")
def show_command(synthetic: Optional[str] = SYNTHETIC_OPTION, xml: Optional[Path] = XML_OPTION):
    """Show a node's packages, NUMA domains, shared caches, cores and PUs (default: this machine)."""
    from rankwise.node import NodeTopology
    from rankwise.report.node import show_node

    show_node(NodeTopology.load(synthetic=synthetic, xml=xml), console)


@node_app.command("export", no_args_is_help=True)
def export_command(output: Path = typer.Option(..., "--output", "-o", help="hwloc XML file to write (.xml)."),
                   synthetic: Optional[str] = SYNTHETIC_OPTION, xml: Optional[Path] = XML_OPTION):
    """Write a node's topology (default: this machine) as hwloc XML, for `map --node-xml` elsewhere."""
    from rankwise.files import prepare_output
    from rankwise.node import export_xml
    from rich.markup import escape

    out = prepare_output(output, (".xml",))
    export_xml(out, synthetic=synthetic, xml=xml)
    console.print(f"wrote {escape(str(out))}", highlight=False, soft_wrap=True)


@node_app.command("probe")
def probe_command(
    launcher: str = typer.Option("mpirun -np 2 --bind-to core", "--launcher",
                                 help="Launcher running the ranks on ONE node, bound to cores (e.g. with a rankfile)."),
    synthetic: Optional[str] = SYNTHETIC_OPTION, xml: Optional[Path] = XML_OPTION,
    sizes: str = typer.Option("8,1K,64K", "--sizes", help="Message sizes (e.g. 8,1K,64K)."),
    rounds: int = typer.Option(20, "--rounds", help="Round trips per pair and size (the median is kept)."),
    model: Optional[Path] = typer.Option(None, "--model", help="A model to add the figures to (node-cost lines)."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Where to write that model (.rwm)."),
):
    """Measure rank-to-rank costs inside one node by the level the cores share (cache, domain, package, node)."""
    from rich.markup import escape

    from rankwise.cli.probe import check_at_least, parse_sizes
    from rankwise.errors import UsageError
    from rankwise.launch import parse_launcher
    from rankwise.node import LEVELS, NodeTopology
    from rankwise.node_probe import fit_level_costs, run

    check_at_least("--rounds", rounds, 1)
    if (model is None) != (output is None):
        raise UsageError("--model and --output go together")
    topology = NodeTopology.load(synthetic=synthetic, xml=xml)
    out = None
    if output is not None:
        from rankwise.files import prepare_output
        out = prepare_output(output, (".rwm",))
    cpus, samples, loaded, wall = run(parse_launcher(launcher), parse_sizes(sizes), rounds)
    alpha, beta = fit_level_costs(topology, cpus, samples)
    beta_loaded = fit_level_costs(topology, cpus, loaded)[1]
    console.print(f"{cpus.size} ranks on cpus {', '.join(map(str, cpus.tolist()))}; "
                  f"{samples.shape[0]} ping-pongs; probe cost {wall:.2f} s", highlight=False)
    for name, a, b, bl in zip(LEVELS, alpha, beta, beta_loaded):
        text = "not measured" if a != a else f"alpha {a * 1e6:.3f} us  beta {b * 1e9:.4f} ns/B"
        if a == a and bl == bl:
            text += f"  (pairs at once: beta {bl * 1e9:.4f} ns/B)"
        console.print(f"  {name:8s} {text}", highlight=False)
    if out is not None:
        from rankwise.model import Model
        m = Model.load(model)
        m.node_alpha, m.node_beta = alpha, beta
        m.save(out)
        console.print(f"wrote {escape(str(out))}", highlight=False, soft_wrap=True)
