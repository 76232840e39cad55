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
def show_command(synthetic: Optional[str] = SYNTHETIC_OPTION, xml: Optional[Path] = XML_OPTION,
                 as_json: bool = typer.Option(False, "--json", help="Print the topology as one JSON object instead (docs/reference/formats.md).")):
    """Show a node's packages, NUMA domains, shared caches, cores and PUs (default: this machine)."""
    from rankwise.model.node import NodeTopology
    from rankwise.report.node import show_node

    topo = NodeTopology.load(synthetic=synthetic, xml=xml)
    if as_json:
        from dataclasses import fields

        from rankwise.report.jsonable import dumps

        print(dumps("node-topology", {"n_cores": topo.n_cores, **{f.name: getattr(topo, f.name) for f in fields(topo)}}))
    else:
        show_node(topo, console)


@node_app.command("export", no_args_is_help=True)
def export_command(output: Path = typer.Option(..., "--output", "-o", help="hwloc XML file to write (.xml)."),
                   synthetic: Optional[str] = SYNTHETIC_OPTION, xml: Optional[Path] = XML_OPTION):
    """Write a node's topology (default: this machine) as hwloc XML, for `map --node-xml` elsewhere."""
    from rankwise.util.files import prepare_output
    from rankwise.model.node import export_xml
    from rich.markup import escape

    out = prepare_output(output, (".xml",))
    export_xml(out, synthetic=synthetic, xml=xml)
    console.print(f"wrote {escape(str(out))}", highlight=False, soft_wrap=True)


@node_app.command("probe")
def probe_command(
    launcher: Optional[str] = typer.Option(None, "--launcher",
                                           help="Launcher running the ranks on ONE node, bound to cores (e.g. with a rankfile; default 'mpirun -np 2 --bind-to core')."),
    synthetic: Optional[str] = SYNTHETIC_OPTION, xml: Optional[Path] = XML_OPTION,
    sim: Optional[Path] = typer.Option(None, "--sim", metavar="DIR",
                                       help="A simulated cluster with domains (rankwise sim platform --node-synthetic): probe one of its nodes under SMPI."),
    node: Optional[str] = typer.Option(None, "--node", help="With --sim: the node to probe (default: the first)."),
    per_domain: Optional[int] = typer.Option(None, "--per-domain", help="With --sim: ranks on each domain of the node (default 2)."),
    sizes: str = typer.Option("8,1K,64K", "--sizes", help="Message sizes (e.g. 8,1K,64K)."),
    rounds: int = typer.Option(20, "--rounds", help="Round trips per pair and size (the median is kept)."),
    model: Optional[Path] = typer.Option(None, "--model", help="A model to add the figures to (node-cost lines)."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Where to write that model (.rwm)."),
):
    """Measure rank-to-rank costs inside one node by the level the cores share (cache, domain, package, node)."""
    from rich.markup import escape

    from rankwise.cli.probe import check_at_least, parse_sizes
    from rankwise.util.errors import UsageError
    from rankwise.model.node import LEVELS, NodeTopology
    from rankwise.measure.node_probe import fit_level_costs, fit_pair_costs

    check_at_least("--rounds", rounds, 1)
    check_at_least("--per-domain", per_domain, 1)
    if (model is None) != (output is None):
        raise UsageError("--model and --output go together")
    if sim is not None and (synthetic is not None or xml is not None):
        raise UsageError("--sim reads the node from the platform: drop --synthetic/--xml")
    if sim is None and (node is not None or per_domain is not None):
        raise UsageError(f"{'--node' if node is not None else '--per-domain'} applies to a simulated cluster: "
                         "give --sim DIR")
    if sim is not None and launcher is not None:
        raise UsageError("--sim runs the probe under smpirun: drop --launcher")
    size_list = parse_sizes(sizes)
    if sim is not None:
        from rankwise.sim.domains import load_domains

        dp = load_domains(sim)  # before anything is written
        topology = NodeTopology.load(synthetic=dp.spec.node)
    else:
        topology = NodeTopology.load(synthetic=synthetic, xml=xml)
    out = base = None
    if output is not None:
        from rankwise.util.files import prepare_output
        from rankwise.model.model import Model

        out = prepare_output(output, (".rwm",))
        base = Model.load(model)  # read before probing: a model that cannot be read costs no probe
    if sim is not None:
        from rankwise.measure.node_probe import run_sim

        probe = run_sim(dp, node or dp.nodes[0], size_list, rounds, 2 if per_domain is None else per_domain)
        cpus, samples, loaded, wall = probe.cpus, probe.samples, probe.loaded, probe.wall
        where = (f"{cpus.size} ranks on {probe.node}'s domains "
                 f"({', '.join(f'{h}: core {c}' for h, c in zip(probe.hosts, probe.cores.tolist()))}); ")
        cost = f"probe cost {wall:.2f} s wall, {probe.simulated * 1e3:.3f} ms simulated"
    else:
        from rankwise.cluster.launch import parse_launcher
        from rankwise.measure.node_probe import run

        cpus, samples, loaded, wall = run(parse_launcher(launcher or "mpirun -np 2 --bind-to core"), size_list, rounds)
        where = f"{cpus.size} ranks on cpus {', '.join(map(str, cpus.tolist()))}; "
        cost = f"probe cost {wall:.2f} s"
    alpha, beta = fit_level_costs(topology, cpus, samples)
    beta_loaded = fit_level_costs(topology, cpus, loaded)[1]
    console.print(f"{where}{samples.shape[0]} ping-pongs; {cost}", highlight=False, soft_wrap=True)
    for name, a, b, bl in zip(LEVELS, alpha, beta, beta_loaded):
        text = "not measured" if a != a else f"alpha {a * 1e6:.3f} us  beta {b * 1e9:.4f} ns/B"
        if a == a and bl == bl:
            text += f"  (pairs at once: beta {bl * 1e9:.4f} ns/B)"
        console.print(f"  {name:8s} {text}", highlight=False)
    if sim is not None:  # by domain pair: which pairs make up each level
        from rankwise.report.node import show_domain_pairs

        domain = topology.domain_of[probe.cores]
        level = {(int(domain[a]), int(domain[b])): LEVELS[int(topology.level(probe.cores[a], probe.cores[b]))]
                 for a in range(cpus.size) for b in range(cpus.size) if a != b}
        show_domain_pairs(fit_pair_costs(domain, samples), level, console)
    if out is not None:
        base.node_alpha, base.node_beta = alpha, beta
        base.save(out)
        console.print(f"wrote {escape(str(out))}", highlight=False, soft_wrap=True)


def probe_domains_command(dp, output: Path, options, *, ranks_per_node: int, nodes, hostfile, on_stress_cost):
    """`rankwise probe --sim` on a platform with domains: the network by node, then the inside of
    one node per group built alike (sim.domains.probe_domains), its cost printed."""
    from rankwise.util.errors import UsageError
    from rankwise.model.node import LEVELS
    from rankwise.sim.domains import alike_nodes, probe_domains

    if hostfile is not None or options.pairs or options.update is not None:
        raise UsageError("a platform with domains is probed whole, node by node: drop --hostfile, --pairs, "
                         "--update and --reprobe")
    model, probes = probe_domains(dp, output, options, ranks_per_node=max(ranks_per_node, 2), nodes=nodes,
                                  show_progress=True, on_stress_cost=on_stress_cost)
    groups = alike_nodes(dp)
    for probe, group in zip(probes, groups):
        figures = ", ".join(f"{name} {model.node_alpha[k] * 1e6:.2f} us {1e-9 / model.node_beta[k]:.1f} GB/s"
                            for k, name in enumerate(LEVELS) if model.node_alpha[k] == model.node_alpha[k])
        console.print(f"inside the node: {probe.node} for {len(group)} node(s) built alike ({len(probe.hosts)} ranks, "
                      f"{probe.samples.shape[0]} ping-pongs): {figures}; cost {probe.wall:.2f} s wall, "
                      f"{probe.simulated * 1e3:.2f} ms simulated", highlight=False, soft_wrap=True)
    return model
