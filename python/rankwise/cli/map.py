"""`rankwise map`: choose nodes and place ranks on the measured network, and
write the file a launcher takes.

    rankwise map --model net.model --pattern stencil3d:grid=8x8x8,bytes=1M --format openmpi -o rankfile
    rankwise map --model net.model --matrix app.rwc --hostfile hostfile --format slurm -o hosts.slurm
    rankwise map --hostfile hostfile --rack-size 32 --objective hop-bytes --matrix app.rwc -o placement.txt
"""

from __future__ import annotations

import dataclasses

from pathlib import Path
from typing import Optional

import numpy as np
import typer
from rich.markup import escape

from rankwise.util.errors import RankwiseError, UsageError
from rankwise.util.files import prepare_output

from rankwise.cli.common import HOSTFILE_OPTION, console

DEFAULT_OUTPUT = {"openmpi": "rankfile", "mpich": "machinefile", "intel": "configfile",
                  "slurm": "slurm.hosts", "permutation": "placement.txt"}


def _traffic(pattern: Optional[str], matrix: Optional[Path], ranks: Optional[int]):
    from rankwise.traffic.matrix import CommMatrix
    from rankwise.traffic.patterns import generate

    if (pattern is None) == (matrix is None):
        raise UsageError("give the traffic as --pattern SPEC or --matrix FILE (one of them)")
    m = generate(pattern) if pattern is not None else CommMatrix.load(matrix)
    m.require_traffic(str(matrix) if matrix is not None else f"pattern '{pattern}'")
    if ranks is None or ranks == m.n_ranks:
        return m
    if ranks < 1:
        raise UsageError(f"--ranks must be >= 1, got {ranks}")
    where = str(matrix) if matrix is not None else f"pattern '{pattern}'"
    beyond = np.flatnonzero((m.src >= ranks) | (m.dst >= ranks))
    if beyond.size:
        k = int(beyond[0])
        raise UsageError(f"{where}: rank {int(m.src[k])} sends to rank {int(m.dst[k])}, "
                         f"beyond the job's {ranks} ranks")
    # The recorded collectives keep their members: a call on the profile's
    # MPI_COMM_WORLD names those ranks, not the resized job's.
    calls = []
    for call in m.collectives:
        members = tuple(range(m.n_ranks)) if call.ranks is None else call.ranks
        if max(members) >= ranks:
            raise UsageError(f"{where}: a {call.op} involves rank {max(members)}, beyond the job's {ranks} ranks")
        calls.append(dataclasses.replace(call, ranks=members))
    return CommMatrix(ranks, m.src, m.dst, m.msgs, m.bytes, source=m.source, pattern=m.pattern,
                      collectives=calls, collectives_dropped=m.collectives_dropped)


def _hosts(hosts: Optional[Path], nodelist: Optional[str], slots: Optional[int], model):
    from rankwise.cluster.allocation import read_allocation
    from rankwise.cluster.hostlist import expand as expand_nodelist
    from rankwise.cluster.hostfile import MAX_SLOTS

    if hosts is not None and nodelist is not None:
        raise UsageError("give the allocation as --hostfile FILE or --nodelist LIST, not both")
    if slots is not None and slots < 1:
        raise UsageError(f"--slots must be >= 1, got {slots}")
    if hosts is not None:
        alloc = [(h, int(s)) for h, s in read_allocation(hosts)]
    elif nodelist is not None:
        alloc = [(h, 1) for h in expand_nodelist(nodelist)]
    elif model is not None:
        alloc = [(h, int(k)) for h, k in zip(model.names, model.ranks_per_node)]
    else:
        raise UsageError("give the allocation (--hostfile FILE or --nodelist LIST) or a --model")
    if slots is not None:
        alloc = [(h, slots) for h, _ in alloc]
    if sum(s for _, s in alloc) > MAX_SLOTS:  # the engine counts slots in 32 bits
        raise RankwiseError(f"the allocation offers {sum(s for _, s in alloc)} slots, more than {MAX_SLOTS}")
    return alloc


def map_command(
    model_path: Optional[Path] = typer.Option(None, "--model", "-m", help="Measured network model (rankwise probe)."),
    pattern: Optional[str] = typer.Option(None, "--pattern", "-p", help="Traffic as a pattern spec, e.g. alltoall:ranks=64,bytes=1M."),
    matrix: Optional[Path] = typer.Option(None, "--matrix", help="Traffic as a matrix file (.rwc, .npz; rankwise profile/import/pattern)."),
    hosts: Optional[Path] = HOSTFILE_OPTION,
    nodelist: Optional[str] = typer.Option(None, "--nodelist", help="Allocation as a Slurm node list, e.g. 'node[01-16]' (with --slots)."),
    slots: Optional[int] = typer.Option(None, "--slots", help="Slots on every node (overrides the allocation's counts)."),
    ranks: Optional[int] = typer.Option(None, "--ranks", help="Job size (default: the matrix's rank count)."),
    objective: str = typer.Option("time", "--objective", help="time | bottleneck | hop-bytes (no model: --rack-size)."),
    algorithm: str = typer.Option("auto", "--algorithm", "-a", help="auto | block | greedy | refine | anneal | exhaustive | stencil | torus | multilevel."),
    select: str = typer.Option("weighted", "--select", help="Node selection: weighted | greedy | first | all."),
    seed: int = typer.Option(1, "--seed", help="Seed of the randomised algorithms."),
    time_limit: float = typer.Option(0.0, "--time-limit", help="Seconds the search may take (0: the default, 10 s)."),
    min_gain: float = typer.Option(0.02, "--min-gain", help="Keep the default placement unless the predictor rates rankwise's this fraction faster."),
    no_pattern: bool = typer.Option(False, "--no-pattern", help="Ignore the pattern a matrix records (map it as a bare matrix)."),
    rack_size: Optional[int] = typer.Option(None, "--rack-size", help="hop-bytes: nodes per rack switch, in allocation order."),
    allow_missing: bool = typer.Option(False, "--allow-missing", help="Cost pairs the model lacks as its slowest pair (warns) instead of failing."),
    fmt: str = typer.Option("permutation", "--format", "-f", help="openmpi | mpich | intel | slurm | permutation."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="File to write (default: by format, e.g. rankfile)."),
    app_cmd: Optional[str] = typer.Option(None, "--app", help="Application command line (Intel MPI configfile lines; usage hint)."),
    node_synthetic: Optional[str] = typer.Option(None, "--node-synthetic", metavar="DESC", help="Place ranks on the cores of nodes built like this synthetic hwloc node, e.g. 'pack:2 numa:2 core:4 pu:1', and bind them."),
    node_xml: Optional[Path] = typer.Option(None, "--node-xml", metavar="FILE", help="Place ranks on the cores of nodes built like this hwloc XML topology (rankwise node export), and bind them."),
):
    """Choose nodes and place ranks where the traffic flows fastest; write the launcher's file."""
    from rankwise.cluster.launcher_files import FORMATS, usage_hint, write_placement
    from rankwise.map.mapping import ALGORITHMS, OBJECTIVES, SELECTIONS, Network, map_ranks
    from rankwise.model.model import Model
    from rankwise.cluster.placement import placement_on_nodes
    from rankwise.report.placement import print_prediction
    from rankwise.report.model import compress_names

    # Cheap checks first: a typo must not cost a probe-sized load.
    for value, known, what in ((objective, OBJECTIVES, "objective"), (algorithm, ALGORITHMS, "algorithm"),
                               (select, SELECTIONS, "node selection"), (fmt, tuple(FORMATS), "format")):
        if value not in known:
            raise UsageError(f"unknown {what} '{value}' (choose from {', '.join(known)})")
    if fmt == "intel" and not app_cmd:
        raise UsageError("the intel configfile names the application: give --app 'CMD ARGS'")
    if time_limit < 0:
        raise UsageError(f"--time-limit must be >= 0, got {time_limit}")
    if not 0 <= min_gain < 1:
        raise UsageError(f"--min-gain must be in [0, 1), got {min_gain}")

    out = prepare_output(output or Path(DEFAULT_OUTPUT[fmt]))  # before any work: -o as in every verb
    topology = None
    if node_synthetic is not None or node_xml is not None:
        from rankwise.model.node import NodeTopology

        topology = NodeTopology.load(synthetic=node_synthetic, xml=node_xml)
    traffic = _traffic(pattern, matrix, ranks)
    model = Model.load(model_path) if model_path is not None else None
    alloc = _hosts(hosts, nodelist, slots, model)
    if objective == "hop-bytes" or model is None:
        if model is None and objective != "hop-bytes":
            hint = "" if rack_size else " (with --rack-size N: nodes per rack switch)"
            raise UsageError(f"without a --model only --objective hop-bytes applies{hint}")
        network = Network.tree(alloc, rack_size or len(alloc))
    else:
        network = Network.from_model(model, alloc, fill_missing=allow_missing)
        if network.filled:
            console.print(f"[yellow]warning:[/] the model lacks {network.filled} pair(s) of this allocation; "
                          "they are costed as its slowest measured pair", highlight=False)
    if network.total_slots < traffic.n_ranks:
        raise UsageError(f"the allocation has {network.total_slots} slots for {traffic.n_ranks} ranks")

    if objective == "hop-bytes" or model is None:
        # Hop counts hold no times: the search's own objective decides.
        result = map_ranks(traffic, network, algorithm=algorithm, objective=objective, selection=select,
                           seed=seed, time_limit=time_limit, use_pattern=not no_pattern, min_gain=min_gain)
    else:
        from rankwise.map.decision import decide
        from rankwise.predict.predictor import PredictNetwork

        predictor = PredictNetwork.from_model(model, alloc, fill_missing=allow_missing)
        groups = model.groups()[[model.names.index(h) for h in network.names]]
        result = decide(traffic, network, predictor, algorithm=algorithm, objective=objective, selection=select,
                        seed=seed, time_limit=time_limit, use_pattern=not no_pattern, min_gain=min_gain,
                        groups=groups).result
    placement = placement_on_nodes(network.names, result.node_of, result.slot_of)
    binding, cpu_list = None, None
    if topology is not None:  # inside the node: a core for each rank of each host (rankwise_node.h)
        from rankwise.cluster.core_binding import CoreBinding
        from rankwise.model.node import place_on_cores
        from rankwise.cluster.placement import Placement

        from rankwise.model.node import NodeCosts

        costs = NodeCosts.from_model(model) if model is not None else None  # measured, else defaults
        cores = place_on_cores(traffic, placement.node_of, placement.nodes, topology, costs)
        placement = Placement(placement.nodes, placement.node_of, cores)
        binding = CoreBinding.from_cores(topology, cores)
        if fmt in ("slurm", "mpich"):
            cpu_list = binding.common_cpu_list(placement, fmt)
    write_placement(placement, fmt, out, app=app_cmd, binding=binding)

    print_prediction(traffic, network, result, objective, console)
    console.print(f"nodes: {escape(compress_names(result.used_nodes))}", highlight=False)
    console.print(escape(f"wrote {out} ({fmt}); run: {usage_hint(fmt, out, traffic.n_ranks, app_cmd, cpu_list)}"),
                  highlight=False, soft_wrap=True)  # the command whole, to be copied

