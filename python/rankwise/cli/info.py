"""`rankwise info`: version, what the build holds, what to preload, every variable read."""

from __future__ import annotations

import json

import typer
from rich.markup import escape
from rich.table import Table

from rankwise.cli.common import console


def info_command(
    as_json: bool = typer.Option(False, "--json", help="Print it as one JSON object (docs/reference/formats.md)."),
):
    """Version, the build's features (MPI, SMPI, hwloc, METIS), the libraries to preload and every
    environment variable rankwise reads, with its current value."""
    from rankwise._engine.build_info import collect

    info = collect()
    if as_json:
        print(json.dumps(info.as_dict(), indent=2))
        return
    console.print(f"rankwise {escape(info.version)}")
    for title, rows in (("build", info.features), ("files", info.files)):
        table = Table(title=title, title_justify="left", show_header=False, box=None, pad_edge=False)
        table.add_column(style="bold")
        table.add_column(overflow="fold")
        for key, value in rows.items():
            table.add_row(escape(key), escape(value))
        console.print(table)
    table = Table(title="environment variables (docs/guide/environment.md)", title_justify="left")
    table.add_column("variable", no_wrap=True)  # whole, so that it can be copied or grepped
    for col in ("read by", "value", "meaning"):
        table.add_column(col, overflow="fold")
    for v in info.variables:
        table.add_row(v["name"], v["read by"], escape(v["value"]) if v["value"] is not None else "-",
                      escape(v["meaning"]))
    console.print(table)
