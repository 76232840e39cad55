"""`rankwise demo`: the embedded simulated cluster, probed, then jobs mapped before/after."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from rankwise.cli.common import console


def demo_command(
    out: Path = typer.Option(Path("rankwise-demo"), "--out", help="Output folder."),
    nodes: Optional[int] = typer.Option(None, "--nodes", help="Probe only the first N nodes of the default platform."),
    emulated: bool = typer.Option(False, "--emulated", help="Real MPI instead: an emulated cluster of 8 hosts (network "
                                                            "namespaces, shaped links; root), brought up and taken down."),
):
    """Probe the embedded simulated cluster, then map three jobs and run them before/after."""
    from rankwise.workflows.demo import run_demo, run_demo_emulated

    if emulated:
        if nodes is not None:
            from rankwise.util.errors import UsageError
            raise UsageError("--nodes is for the simulated cluster; --emulated always has 8 hosts")
        run_demo_emulated(out, console=console)
        return
    run_demo(out, nodes=nodes, console=console)
