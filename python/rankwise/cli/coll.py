"""`rankwise coll`: which algorithm and tree a rooted collective should use on
the measured network, and the rules file the collectives library reads
(docs/concepts/collectives.md).

    rankwise coll predict --model net.rwm --ranks 64 --op bcast --sizes 8:64K
    rankwise coll tune --model net.rwm --hostfile hosts --ranks 64 -o rules.rwr
    rankwise coll predict --platform plat/ --ranks 32 --ranks-per-node 4 --op gather --sizes 64:512
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape

from rankwise.cli.common import HOSTFILE_OPTION, console
from rankwise.coll.selection import COLL_OPS, ROOTED_OPS
from rankwise.predict.allocation import check_ranks, collective_allocation
from rankwise.util.errors import RankwiseError, UsageError

coll_app = typer.Typer(no_args_is_help=True, help="Network-aware collectives: predict, choose, write rules.")

MAX_EVALS = 100000


def _check_op(op: str) -> str:
    if op not in COLL_OPS:
        raise UsageError(f"--op: unknown operation '{op}' (choose from {', '.join(COLL_OPS)})")
    return op


def _parse_ops(text: str) -> list[str]:
    ops = [o.strip() for o in text.split(",") if o.strip()]
    if not ops:
        raise UsageError(f"--ops is empty (a list like {','.join(COLL_OPS)})")
    for op in ops:
        if op not in COLL_OPS:
            raise UsageError(f"--ops: unknown operation '{op}' (choose from {', '.join(COLL_OPS)})")
    return list(dict.fromkeys(ops))


def _parse_roots(text: str, ranks: int) -> list[int]:
    if text.strip() == "all":
        return list(range(ranks))
    roots = []
    for word in [w.strip() for w in text.split(",") if w.strip()]:
        try:
            r = int(word)
        except ValueError:
            raise UsageError(f"--roots: '{word}' is not a rank (a list like 0,5 or 'all')") from None
        if not 0 <= r < ranks:
            raise UsageError(f"--roots: rank {r} is not one of the {ranks} ranks")
        roots.append(r)
    if not roots:
        raise UsageError("--roots is empty (a list like 0,5 or 'all')")
    return list(dict.fromkeys(roots))


def _options(knee: int, eager_limit: Optional[int], min_gain: float, max_evals: int, gamma: float):
    from rankwise.coll.selection import TuneOptions

    if eager_limit is not None and eager_limit < 0:
        raise UsageError(f"--eager-limit must be >= 0 bytes, got {eager_limit}")
    if not 0 <= min_gain < 1:
        raise UsageError(f"--min-gain must be in [0, 1), got {min_gain:g}")
    if not 0 <= max_evals <= MAX_EVALS:
        raise UsageError(f"--max-evals must be in 0..{MAX_EVALS}, got {max_evals}")
    if not (gamma >= 0 and math.isfinite(gamma)):
        raise UsageError(f"--gamma must be >= 0 s per byte, got {gamma:g}")
    limit = eager_limit if eager_limit is not None else (knee if knee > 0 else 65536)
    return TuneOptions(eager_limit=limit, gamma=gamma, min_gain=min_gain, max_evals=max_evals)


MODEL_OPTION = typer.Option(None, "--model", "-m", help="Measured network model (rankwise probe).")
PLATFORM_OPTION = typer.Option(None, "--platform", help="A generated platform's folder: use its ground truth (rankwise sim platform).")
NODES_OPTION = typer.Option(None, "--nodes", help="The allocation's nodes, comma-separated names (default: all, in order).")
RANKS_OPTION = typer.Option(..., "--ranks", help="Communicator size (MPI_COMM_WORLD).")
RPN_OPTION = typer.Option(None, "--ranks-per-node", help="Ranks per node, block placement (default: the hostfile's slots, or spread evenly).")
OVERHEAD_OPTION = typer.Option(None, "--overhead", help="Send overhead o of every node, s (default: the model's, else 0; SMPI: smpi/os).")
RECV_OVERHEAD_OPTION = typer.Option(None, "--recv-overhead", help="Receive overhead of every node, s: the CPU time a received eager message costs, which a forwarding rank pays per segment (default: the model's, else 0; SMPI: smpi/or).")
EAGER_OPTION = typer.Option(None, "--eager-limit", help="First rendezvous size, bytes (default: the model's knee, else 65536).")
GAIN_OPTION = typer.Option(0.05, "--min-gain", help="rankwise runs only when predicted this much faster than the passthrough.")
EVALS_OPTION = typer.Option(1000, "--max-evals", help="Predictor runs each tree's local search may spend.")
GAMMA_OPTION = typer.Option(0.0, "--gamma", help="Reduce: computation, s per byte reduced.")
MISSING_OPTION = typer.Option(False, "--allow-missing", help="Cost pairs the model lacks as its slowest pair.")


@coll_app.command("predict", no_args_is_help=True)
def coll_predict_command(
    op: str = typer.Option(..., "--op", help="bcast, reduce, gather, scatter, allreduce, allgather or alltoall."),
    model_path: Optional[Path] = MODEL_OPTION,
    platform: Optional[Path] = PLATFORM_OPTION,
    hostfile: Optional[Path] = HOSTFILE_OPTION,
    nodes: Optional[str] = NODES_OPTION,
    ranks: int = RANKS_OPTION,
    ranks_per_node: Optional[int] = RPN_OPTION,
    sizes: str = typer.Option("8:64K", "--sizes", help="Sizes: 8,1K,64K or 8:64K (powers of two), K = 1024; bcast, allreduce: the message, others: per rank."),
    root: int = typer.Option(0, "--root", help="Root rank."),
    algorithm: Optional[str] = typer.Option(None, "--algorithm", "-a", help="Only this candidate: binomial, eager, volume (gather, scatter), chain, binary (bcast); allreduce, allgather: binomial, knomial, ring, recursive_doubling, hier, (allgather) multiring; alltoall: pairwise, symmetric."),
    overhead: Optional[float] = OVERHEAD_OPTION,
    recv_overhead: Optional[float] = RECV_OVERHEAD_OPTION,
    eager_limit: Optional[int] = EAGER_OPTION,
    min_gain: float = GAIN_OPTION,
    max_evals: int = EVALS_OPTION,
    gamma: float = GAMMA_OPTION,
    allow_missing: bool = MISSING_OPTION,
    plot: Optional[Path] = typer.Option(None, "--plot", help="Also draw predicted time per size and candidate (PNG)."),
    as_json: bool = typer.Option(False, "--json", help="Print the decisions as one JSON object instead (docs/reference/formats.md)."),
):
    """Per size: each candidate's predicted time (the MPI's own choice included), the choice and its gain."""
    from rankwise.cli.predict import parse_size_list
    from rankwise.coll.report import print_decisions
    from rankwise.coll.tune import CONSTRUCTIONS, decide_sizes, restrict

    _check_op(op)
    if algorithm is not None and algorithm not in CONSTRUCTIONS[op]:
        raise UsageError(f"--algorithm: {op} has no candidate '{algorithm}' "
                         f"(choose from {', '.join(CONSTRUCTIONS[op])})")
    size_list = parse_size_list(sizes)
    opts = _options(0, eager_limit, min_gain, max_evals, gamma)  # knee applied below
    if plot is not None:
        from rankwise.report.plots import png_target

        png_target(plot)  # before any prediction: the PNG follows every output's rules
    net, node_of, counts, knee, label = collective_allocation(model_path, platform, hostfile, nodes, ranks, ranks_per_node,
                                                    overhead, allow_missing, recv_overhead)
    if not 0 <= root < ranks:
        raise UsageError(f"--root: rank {root} is not one of the {ranks} ranks")
    if eager_limit is None and knee > 0:
        opts.eager_limit = knee
    from rankwise._engine.core import interruptible

    with interruptible():  # minutes at thousands of ranks, inside the engine
        decisions = decide_sizes(net, node_of, op, size_list, root, opts)
    if algorithm is not None:
        decisions = [restrict(d, algorithm, opts.min_gain) for d in decisions]
    rpn = f", {ranks_per_node} per node" if ranks_per_node else ""
    where = "" if op not in ROOTED_OPS else f" from rank {root}"
    if as_json:
        from rankwise.coll.report import candidate_label
        from rankwise.report.jsonable import dumps

        sizes_out = [{"bytes": d.nbytes, "runs": "mpi" if d.chosen == 0 else candidate_label(d.choice),
                      "gain": d.gain,
                      "candidates": [{"algorithm": candidate_label(c), "predicted_s": c.time, "runs": i == d.chosen}
                                     for i, c in enumerate(d.candidates)]} for d in decisions]
        print(dumps("coll-prediction", {"op": op, "root": root, "ranks": ranks, "nodes": len(counts), "on": label,
                                        "eager_limit": opts.eager_limit, "sizes": sizes_out}))
    else:
        print_decisions(decisions, f"{op}{where}, {ranks} ranks on {len(counts)} nodes{rpn} "
                                   f"(predicted on {escape(label)}; eager limit {opts.eager_limit} B)", console)
    if plot is not None:
        from rankwise.coll.report import plot_decisions

        plot_decisions(decisions, plot, f"{op}, {ranks} ranks ({label})")
        if not as_json:
            console.print(f"wrote {escape(str(plot))}", highlight=False)


@coll_app.command("tune", no_args_is_help=True)
def coll_tune_command(
    output: Path = typer.Option(..., "--output", "-o", help="Rules file to write (RANKWISE_COLL_RULES)."),
    model_path: Optional[Path] = MODEL_OPTION,
    platform: Optional[Path] = PLATFORM_OPTION,
    hostfile: Optional[Path] = HOSTFILE_OPTION,
    nodes: Optional[str] = NODES_OPTION,
    ranks: int = RANKS_OPTION,
    ranks_per_node: Optional[int] = RPN_OPTION,
    ops: str = typer.Option(",".join(COLL_OPS), "--ops", help="Operations to decide."),
    sizes: str = typer.Option("8:1M", "--sizes", help="Size classes: each from its size to the next (the first from 0)."),
    roots: str = typer.Option("0", "--roots", help="Roots to decide: 0,5 or 'all' (other roots pass through)."),
    overhead: Optional[float] = OVERHEAD_OPTION,
    recv_overhead: Optional[float] = RECV_OVERHEAD_OPTION,
    eager_limit: Optional[int] = EAGER_OPTION,
    min_gain: float = GAIN_OPTION,
    max_evals: int = EVALS_OPTION,
    gamma: float = GAMMA_OPTION,
    allow_missing: bool = MISSING_OPTION,
    file_format: str = typer.Option("rankwise", "--format",
                                    help="rankwise: the library's rules (RANKWISE_COLL_RULES); ompi-rules: Open MPI's "
                                         "own dynamic rules file, choosing among its algorithms (no preload)."),
    verify: Optional[str] = typer.Option(None, "--verify", metavar="LAUNCHER",
                                         help="ompi-rules: run the benchmark program under this launcher (of --ranks "
                                              "ranks) without and with the file, alternately, and keep an algorithm "
                                              "only where it beat Open MPI's fixed decision in every run by 2 %."),
    verify_repeats: int = typer.Option(3, "--verify-repeats", help="--verify: runs without and with the file."),
):
    """Decide every operation, size class and root for an allocation; write the rules file."""
    from rankwise.cli.predict import parse_size_list
    from rankwise.coll.report import print_tune_summary
    from rankwise.coll.selection import ring_order, trinary_order
    from rankwise.coll.tune import format_rules, tune_allocation
    from rankwise.util.files import prepare_output, write_atomic

    if file_format not in ("rankwise", "ompi-rules"):
        raise UsageError(f"--format: unknown format '{file_format}' (choose from rankwise, ompi-rules)")
    op_list = _parse_ops(ops)
    size_list = parse_size_list(sizes)
    opts = _options(0, eager_limit, min_gain, max_evals, gamma)
    check_ranks(ranks)
    root_list = _parse_roots(roots, ranks)
    if verify is not None and file_format != "ompi-rules":
        raise UsageError("--verify: only with --format ompi-rules (the library verifies its own rules in the job)")
    if verify is not None and not verify.strip():
        raise UsageError("--verify: the launcher is empty (e.g. --verify 'mpirun -np 8')")
    if verify_repeats < 1:
        raise UsageError(f"--verify-repeats: {verify_repeats} is not a positive count of runs")
    if file_format == "ompi-rules" and root_list != [0]:
        raise UsageError("--roots: Open MPI's rules cannot depend on the root (ompi-rules decides from rank 0)")
    prepare_output(output)
    net, node_of, counts, knee, label = collective_allocation(model_path, platform, hostfile, nodes, ranks, ranks_per_node,
                                                    overhead, allow_missing, recv_overhead)
    if eager_limit is None and knee > 0:
        opts.eager_limit = knee
    from rankwise._engine.core import interruptible

    if file_format == "ompi-rules":
        _write_ompi_rules(output, net, node_of, op_list, size_list, opts, ranks, len(counts), label, verify,
                          verify_repeats)
        return
    with console.status("deciding") as status, interruptible():  # nothing written yet: a stop loses nothing
        rules = tune_allocation(net, node_of, op_list, size_list, root_list, opts,
                                progress=lambda what: status.update(f"deciding {what}"))
    rpn = sorted(set(counts))
    runs = {r.decision.choice.algorithm for r in rules if r.decision.chosen != 0}
    text = format_rules(rules, ranks, ranks_per_node="/".join(str(k) for k in rpn), eager_limit=opts.eager_limit,
                        min_gain=opts.min_gain, model=label.replace(" ", "_"), nodes=list(net.names),
                        trinary_order=trinary_order(net, node_of) if "trinary" in runs else None,
                        ring_order=ring_order(net, node_of) if "multiring" in runs else None)
    try:
        write_atomic(output, text)
    except OSError as exc:
        raise RankwiseError(f"{output}: cannot write: {exc.strerror or exc}") from None
    print_tune_summary(rules, f"{ranks} ranks on {len(counts)} nodes ({escape(label)})", console)
    console.print(f"wrote {escape(str(output))} ({len(rules)} decisions)", highlight=False)


def _write_ompi_rules(output: Path, net, node_of, op_list, size_list, opts, ranks: int, n_nodes: int,
                      label: str, verify: str | None, verify_repeats: int) -> None:
    from rankwise.coll.ompi_rules import format_ompi_rules, tune_ompi
    from rankwise.coll.report import print_ompi_summary, print_ompi_verification
    from rankwise._engine.core import interruptible
    from rankwise.util.files import write_atomic

    if verify is not None:
        from rankwise.coll.ompi_verify import job_size

        with console.status(f"starting {escape(verify)} once"):
            n = job_size(verify)
        if n != ranks:
            raise UsageError(f"--verify: the launcher starts {n} ranks, the rules are for --ranks {ranks}")
    with console.status("deciding") as status, interruptible():
        rows = tune_ompi(net, node_of, op_list, size_list, opts,
                         progress=lambda what: status.update(f"deciding {what}"))
    note = ""
    if verify is not None:
        from rankwise.coll.ompi_verify import verify_ompi

        with console.status("verifying") as status:
            rows, checked = verify_ompi(rows, verify, ranks, repeats=verify_repeats,
                                        progress=lambda what: status.update(f"verifying: {what}"))
        print_ompi_verification(checked, console)
        note = (f"verified under {verify}: {sum(v.kept for v in checked)} of {len(checked)} algorithms kept "
                f"({verify_repeats} runs each way)")
    text = format_ompi_rules(rows, ranks, model=label, min_gain=opts.min_gain, note=note)
    try:
        write_atomic(output, text)
    except OSError as exc:
        raise RankwiseError(f"{output}: cannot write: {exc.strerror or exc}") from None
    print_ompi_summary(rows, f"Open MPI's algorithms, {ranks} ranks on {n_nodes} nodes ({escape(label)})", console)
    console.print(f"wrote {escape(str(output))}; run with: --mca coll_tuned_use_dynamic_rules 1 "
                  f"--mca coll_tuned_dynamic_rules_filename {escape(str(output))}", highlight=False)


from rankwise.cli.coll_bench import coll_bench_command  # noqa: E402  (its own module: one verb per file)

coll_app.command("bench", no_args_is_help=True)(coll_bench_command)
