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
