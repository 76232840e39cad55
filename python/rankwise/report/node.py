"""What `rankwise node show` prints: the node's counts, then each package's
domains with their cores (logical index and the OS cpu a launcher binds to)."""

from __future__ import annotations

import numpy as np
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from rankwise.report.matrix import human_bytes


def _ranges(values) -> str:
    """'0-3,8,10-11' for sorted distinct integers."""
    out, run = [], []
    for v in values:
        if run and v == run[-1] + 1:
            run.append(v)
        else:
            if run:
                out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else f"{run[0]}")
            run = [v]
    if run:
        out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else f"{run[0]}")
    return ",".join(out)


def show_node(topo, console: Console) -> None:
    """Plain aligned lines (never cut to the terminal width, for grep)."""
    caches = "none"
    if topo.n_caches:
        levels = sorted(set(topo.cache_level.tolist()))
        caches = f"{topo.n_caches} (" + ", ".join(
            f"L{lv}: {int(np.median(topo.cache_cores[topo.cache_level == lv]))} cores each" for lv in levels) + ")"
    rows = [("source", topo.source), ("packages", str(topo.n_packages)), ("NUMA domains", str(topo.n_domains)),
            ("shared caches", caches), ("cores", str(topo.n_cores)), ("PUs", str(topo.n_pus))]
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        console.print(f"{key:<{width}}  {escape(value)}", highlight=False, soft_wrap=True)
    for p in range(topo.n_packages):
        in_pkg = np.flatnonzero(topo.package_of == p)
        console.print(f"package {p}: cores {_ranges(in_pkg.tolist())}", highlight=False, soft_wrap=True)
        for d in sorted(set(topo.domain_of[in_pkg].tolist())):
            cores = in_pkg[topo.domain_of[in_pkg] == d]
            mem = topo.domain_bytes[d] if d < topo.domain_bytes.size else 0
            memory = f", {human_bytes(float(mem))} memory" if mem else ""
            console.print(f"  domain {d}{memory}: cores {_ranges(cores.tolist())} "
                          f"(OS cpus {_ranges(sorted(topo.cpu_of[cores].tolist()))})",
                          highlight=False, soft_wrap=True)
    for dev in topo.devices:
        where = [f"package {dev.package}" if dev.package >= 0 else "the whole machine"]
        if dev.domain >= 0 and topo.n_domains > 1:
            where.append(f"domain {dev.domain}")
        pci = f" (PCI {dev.pci})" if dev.pci else ""
        console.print(f"{dev.kind} {escape(dev.name)}{pci}: attached to {', '.join(where)}", highlight=False,
                      soft_wrap=True)


def show_domain_pairs(costs: dict, level: dict, console) -> None:
    """The intra-node probe's figures by domain pair: (domain a, domain b) -> (alpha s, beta s/B),
    each with the level its cores share (`level`: (a, b) -> name)."""
    table = Table(title="by domain pair", title_justify="left")
    for name in ("domains", "level", "alpha (us)", "beta (ns/B)", "bandwidth (GB/s)"):
        table.add_column(name, justify="left" if name in ("domains", "level") else "right")
    for (a, b), (alpha, beta) in sorted(costs.items()):
        bw = f"{1 / beta / 1e9:.2f}" if beta > 0 else "-"
        table.add_row(f"{a}-{b}", level[a, b], f"{alpha * 1e6:.3f}", f"{beta * 1e9:.4f}", bw)
    console.print(table)
