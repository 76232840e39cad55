"""`rankwise sim`: the simulated cluster (SimGrid SMPI) — platforms."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape

from rankwise.cli.common import console
from rankwise.util.errors import UsageError


sim_app = typer.Typer(no_args_is_help=True, help="The simulated cluster (SimGrid SMPI).")


@sim_app.command("platform")
def sim_platform(
    out: Path = typer.Option(..., "--out", "-o", help="Folder to write platform.xml, hostfile, ground_truth.json into."),
    topology: str = typer.Option("fat-tree", "--topology", help="fat-tree (racks of nodes), fat-tree3:P,R,N (pods, racks per pod, nodes per rack), torus:X,Y,Z or dragonfly:G,R,N (groups, routers per group, nodes per router)."),
    nics: Optional[int] = typer.Option(None, "--nics", help="NICs per node (torus only; default 1)."),
    racks: Optional[int] = typer.Option(None, help="Number of racks (leaf switches)."),
    nodes_per_rack: Optional[int] = typer.Option(None, "--nodes-per-rack", help="Nodes under each leaf switch."),
    cores: Optional[int] = typer.Option(None, help="Cores per node."),
    degrade: list[str] = typer.Option([], "--degrade", help="KIND:INDEX:BW_FACTOR:LAT_FACTOR, KIND node or uplink (fat-tree3: node, uplink, pod; torus: node, x, y, z; dragonfly: node, local, global) (repeatable)."),
    vary: list[str] = typer.Option([], "--vary", help="KIND:INDEX: that link's bandwidth varies over time (repeatable)."),
    unreachable: list[int] = typer.Option([], "--unreachable", help="A node that does not answer (repeatable)."),
    oversubscription: Optional[float] = typer.Option(None, help="Rack uplink oversubscription (1 = non-blocking; torus, dragonfly: router links at 1/F)."),
    seed: Optional[int] = typer.Option(None, help="Seed of every random choice."),
    shuffle: bool = typer.Option(False, "--shuffle", help="Deal racks to hosts in a seeded shuffled order."),
    shared_nics: bool = typer.Option(False, "--shared-nics", help="A node's sends and receives share its link (SimGrid SHARED; two-level fat tree only)."),
    default: bool = typer.Option(False, "--default", help="The embedded default platform (64 nodes x 4 cores, 4 racks)."),
    protocol_switch: Optional[str] = typer.Option(None, "--protocol-switch", help="An MPI eager/rendezvous switch at this size (e.g. 64K): a knee in every round-trip curve."),
    send_overhead: Optional[float] = typer.Option(None, "--send-overhead", help="Seconds every blocking send keeps its sender busy (SMPI's smpi/os)."),
    recv_overhead: Optional[float] = typer.Option(None, "--recv-overhead", help="Seconds every received message keeps its receiver busy (SMPI's smpi/or)."),
    degrade_at: Optional[float] = typer.Option(None, "--degrade-at", help="The --degrade links change at this simulated time (s), not from the start (SimGrid profiles)."),
    node_synthetic: Optional[str] = typer.Option(None, "--node-synthetic", metavar="DESC", help="Nodes with memory domains, built like this hwloc synthetic node (e.g. 'pack:2 numa:2 core:4 pu:1'): one host per NUMA domain, links between the domains (fat tree only)."),
):
    """Generate a SimGrid platform (a two- or three-level fat tree, a torus or a dragonfly) with what its topology does not show."""
    from rankwise.cli.sim_options import spec_from_options
    from rankwise.sim.platform import generate

    later = []
    if degrade_at is not None:  # the --degrade items become changes at that time (sim/profiles.py)
        from rankwise.cli.sim_options import parse_degrade
        if not degrade:
            raise UsageError("--degrade-at needs at least one --degrade KIND:INDEX:BW[:LAT]")
        later, degrade = [parse_degrade(d) for d in degrade], []
    spec = spec_from_options(
        default=default, racks=racks, nodes_per_rack=nodes_per_rack, cores=cores, degrade=degrade,
        vary=vary, unreachable=unreachable, oversubscription=oversubscription, seed=seed,
        protocol_switch=protocol_switch, send_overhead=send_overhead, recv_overhead=recv_overhead, topology=topology, nics=nics,
    )
    if shuffle:
        if topology != "fat-tree" and not topology.startswith("fat-tree3:"):
            raise UsageError("--shuffle deals the fat tree's racks (fat-tree, fat-tree3); a torus or dragonfly has none to deal")
        spec = dataclasses.replace(spec, shuffle_racks=True)
    if shared_nics:
        if node_synthetic is not None:  # the topology the spec checks; a node's own tree is not in it
            raise UsageError("--shared-nics applies to the fat tree's node links, not --node-synthetic")
        spec = dataclasses.replace(spec, shared_nics=True)
    if node_synthetic is not None:
        _domains_platform(spec, out, node_synthetic, cores=cores, later=later, shuffle=shuffle)
        return
    if later:
        from rankwise.sim.profiles import check, schedule

        check(spec, later, degrade_at)  # before anything is written
    gen = generate(spec, out)
    if later:
        schedule(gen, later, degrade_at)
    shape = "" if spec.shape is None else f" ({spec.topology}" + (f", {spec.nics} NICs per node)" if spec.nics > 1 else ")")
    console.print(f"platform with {len(gen.nodes)} nodes{escape(shape)} written to [bold]{escape(str(out))}[/bold]",
                  highlight=False)


def _domains_platform(spec, out: Path, node: str, *, cores, later, shuffle) -> None:
    """`--node-synthetic`: the fat tree with nodes of one host per NUMA domain (sim/domains.py)."""
    from rankwise.sim.domains import DomainSpec, generate_domains

    for given, what in ((cores is not None, "--cores (the node's cores come from --node-synthetic)"),
                        (bool(later), "--degrade-at"), (shuffle, "--shuffle"),
                        (spec.topology != "fat-tree", f"--topology {spec.topology}")):
        if given:
            raise UsageError(f"--node-synthetic builds nodes with domains on a plain fat tree: drop {what}")
    dp = generate_domains(DomainSpec(network=spec, node=node), out)
    console.print(f"platform with {len(dp.nodes)} nodes of {dp.n_domains} domains ({dp.cores_per_node} cores; "
                  f"{len(dp.hosts)} hosts) written to [bold]{escape(str(out))}[/bold]", highlight=False)
