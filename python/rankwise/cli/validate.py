"""`rankwise validate`: the predictor against SMPI on a simulated cluster,
with the collective's algorithm pinned (docs/concepts/prediction.md, "Verbs").

    rankwise validate --sim myplat --op alltoall --algorithm pair --ranks 16 --sizes 1K:1M --plot a2a.png
    rankwise validate --sim myplat/platform.xml --op bcast --ranks 16 --ranks-per-node 2 --model net.rwm -o bcast.csv
    rankwise validate --sim myplat --op bcast --algorithm flat --ranks 16 --os 1 --or 1
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape

from rankwise.cli.common import console
from rankwise.cli.predict import check_operation, parse_size_list, write_csv
from rankwise.predict.allocation import block_counts
from rankwise.util.errors import RankwiseError, UsageError

NETWORKS = ("truth", "model")


def validate_command(
    sim: Path = typer.Option(..., "--sim", help="Simulated cluster: the folder (or platform.xml) of rankwise sim platform."),
    op: str = typer.Option(..., "--op", help="Collective: alltoall, bcast, reduce, allreduce, allgather, gather, scatter."),
    ranks: int = typer.Option(..., "--ranks", help="Job size."),
    sizes: str = typer.Option("1K:1M", "--sizes", help="Message sizes: 1K,64K,1M or 1K:1M (powers of two), K = 1024."),
    algorithm: Optional[str] = typer.Option(None, "--algorithm", "-a", help="One algorithm (default: every one SMPI can pin)."),
    ranks_per_node: int = typer.Option(1, "--ranks-per-node", help="Ranks per node, on the platform's first hosts (block)."),
    network: Optional[str] = typer.Option(None, "--network", help="Figures the prediction uses: truth (the platform's ground truth) | model (--model)."),
    model_path: Optional[Path] = typer.Option(None, "--model", "-m", help="Predict from this probed model (implies --network model)."),
    iterations: int = typer.Option(2, "--iterations", help="Timed iterations per size (SMPI is deterministic)."),
    send_overhead: float = typer.Option(0.0, "--os", help="Send overhead of every eager message (< 64 KiB), microseconds: SMPI's smpi/os and smpi/ois, and the prediction's (1 for collective experiments; default none, as SMPI)."),
    recv_overhead: float = typer.Option(0.0, "--or", help="Receive overhead of every eager message, microseconds: SMPI's smpi/or, and the prediction's."),
    allow_missing: bool = typer.Option(False, "--allow-missing", help="--model: cost missing pairs as the slowest pair instead of failing."),
    plot: Optional[Path] = typer.Option(None, "--plot", help="PNG: predicted and simulated time against size, log-log."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Also write the rows as CSV."),
):
    """Run a collective under SMPI with its algorithm pinned; print predicted against simulated time."""
    from rankwise.predict.predictor import SMPI_ALGORITHM, PredictNetwork, predict_collective

    algs = check_operation(op, algorithm)
    pinnable = [a for a in algs if (op, a) in SMPI_ALGORITHM]
    if algorithm is not None and not pinnable:
        raise UsageError(f"--algorithm: {op} '{algorithm}' has no SMPI twin to pin "
                         f"(choose from {', '.join(a for (o, a) in SMPI_ALGORITHM if o == op)})")
    size_list = parse_size_list(sizes)
    network = network or ("model" if model_path is not None else "truth")
    if network not in NETWORKS:
        raise UsageError(f"--network: '{network}' is not {' or '.join(NETWORKS)}")
    if network == "model" and model_path is None:
        raise UsageError("--network model needs --model FILE")
    if network == "truth" and model_path is not None:
        raise UsageError("--model predicts from the model: drop --network truth")
    if iterations < 1:
        raise UsageError(f"--iterations must be >= 1, got {iterations}")
    if ranks < 2:  # one rank sends nothing: 0 s simulated, no error to compute
        raise UsageError(f"--ranks must be >= 2 (a collective on one rank sends nothing), got {ranks}")
    for name, value in (("--os", send_overhead), ("--or", recv_overhead)):
        if not 0 <= value < 1e6:  # NaN fails too
            raise UsageError(f"{name} must be >= 0 and below 1 s (microseconds), got {value}")
    overheads = (send_overhead * 1e-6, recv_overhead * 1e-6)
    if plot is not None:
        from rankwise.report.plots import png_target

        png_target(plot)  # a PNG that cannot be written must not cost a simulation first
    if output is not None:
        from rankwise.util.files import prepare_output

        prepare_output(output)  # nor a CSV

    from rankwise.model.model import Model
    from rankwise.report.prediction import print_validation
    from rankwise.sim.platform_file import read_platform
    from rankwise.predict.validate import node_indices, platform_files, plot_validation, validate

    xml, folder = platform_files(sim)
    known = read_platform(xml)
    if known is None:
        raise UsageError(f"{xml}: a compiled platform lists no hosts; give the XML rankwise sim platform wrote")
    platform_hosts = [name for name, _ in known]
    counts = block_counts(ranks, [ranks_per_node] * len(platform_hosts), ranks_per_node, f"{xml}")
    rank_hosts = [h for h, c in zip(platform_hosts, counts) for _ in range(c)]
    if network == "truth":
        if not (folder / "ground_truth.json").is_file():
            raise UsageError(f"{folder}: no ground_truth.json beside {xml.name} (a platform of your own?): predict "
                             f"from a probed model, --model MODEL (rankwise probe --sim {xml} -o MODEL)")
        net = PredictNetwork.from_ground_truth(folder)
    else:
        used = list(dict.fromkeys(rank_hosts))
        net = PredictNetwork.from_model(Model.load(model_path), [(h, rank_hosts.count(h)) for h in used],
                                        fill_missing=allow_missing)

    rows = []
    for alg in pinnable:
        if algorithm is None:  # every algorithm: leave out, and say, those the predictor refuses here
            try:
                predict_collective(net, op, alg, size_list[0], node_indices(net, rank_hosts))
            except RankwiseError as exc:
                console.print(f"left out: {escape(alg)}: {escape(str(exc))}", highlight=False, soft_wrap=True)
                continue
        rows += validate(net, xml, op, alg, size_list, rank_hosts, iterations=iterations, overheads=overheads)
    if not rows:
        raise RankwiseError(f"no {op} algorithm could be validated on {ranks} ranks")
    source = "ground truth" if network == "truth" else model_path.name
    title = f"{op}, {ranks} ranks on {len(counts)} nodes of {xml.parent.name or xml.name}: SMPI vs predicted ({source})"
    if any(overheads):
        title += f", overheads {send_overhead:g}/{recv_overhead:g} us"
    print_validation(rows, title, console)
    if output is not None:
        write_csv(output, ["algorithm", "size", "simulated_s", "predicted_s", "error", "hockney_s", "hockney_error"],
                  [[r.algorithm, r.size, f"{r.simulated:.9g}", f"{r.predicted:.9g}", f"{r.error:.6f}",
                    f"{r.hockney:.9g}", f"{r.hockney_error:.6f}"] for r in rows])
        console.print(f"wrote {escape(str(output))}", highlight=False)
    if plot is not None:
        plot_validation(rows, title, plot)
        console.print(f"wrote {escape(str(plot))}", highlight=False)
