"""The predictor against SMPI: run a benchmark program on a simulated
cluster with the collective's algorithm pinned (`--cfg=smpi/OP:NAME`), and
set the predicted time of the same algorithm, on the same ranks, beside the
simulated one (what `rankwise validate` prints; docs/concepts/prediction.md).

The simulated time is the median over the timed iterations of the longest
rank's time (rankwise-bench-alltoall / -collectives), every rank started at
one instant (the programs' harness); the prediction starts them all at 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import Sequence

import numpy as np

from rankwise.util.errors import RankwiseError, UsageError
from rankwise.predict.predictor import SMPI_ALGORITHM, PredictNetwork, predict_collective
from rankwise.cluster.benchmark_programs import run_benchmark
from rankwise.sim.smpi import overhead_settings

US = 1e-6
# Operations whose benchmark program times them (rankwise-bench-collectives --collectives).
BENCH_COLLECTIVES = ("bcast", "reduce", "allreduce", "allgather", "gather", "scatter")


@dataclass(frozen=True)
class Row:
    """One message size of one algorithm: seconds."""

    algorithm: str
    size: int
    simulated: float
    predicted: float
    hockney: float  # the same schedule without contention (alpha + n beta per message)

    @property
    def error(self) -> float:
        return (self.predicted - self.simulated) / self.simulated

    @property
    def hockney_error(self) -> float:
        return (self.hockney - self.simulated) / self.simulated


def platform_files(sim: str | PathLike) -> tuple[Path, Path]:
    """(platform XML, its directory) from a SimGrid platform file of any
    name, or a folder holding platform.xml (`rankwise sim platform` writes
    it there beside ground_truth.json)."""
    path = Path(sim)
    xml = path / "platform.xml" if path.is_dir() else path
    if not xml.is_file():
        raise RankwiseError(f"{sim}: no SimGrid platform there (give a platform XML, or a folder holding "
                            "platform.xml)")
    return xml, xml.parent


def smpi_config(op: str, algorithm: str) -> str:
    """'smpi/alltoall:pair': SMPI's name of the algorithm the predictor's schedule follows."""
    name = SMPI_ALGORITHM.get((op, algorithm))
    if name is None:
        pinnable = sorted(a for (o, a) in SMPI_ALGORITHM if o == op)
        raise UsageError(f"{op} algorithm '{algorithm}' has no SMPI twin to pin "
                         f"(pinnable: {', '.join(pinnable) or 'none'})")
    return f"smpi/{op}:{name}"


def simulate_pinned(platform_xml: str | PathLike, op: str, algorithm: str, sizes: Sequence[int],
                    rank_hosts: Sequence[str], *, iterations: int = 2, warmup: int = 1,
                    timeout: float | None = 600, overheads: tuple[float, float] = (0.0, 0.0)) -> dict[int, float]:
    """size -> seconds SMPI takes for one call (median over the timed
    iterations), one rank per entry of rank_hosts, with these send and
    receive overheads on eager messages (rankwise.sim.smpi.overhead_settings;
    SMPI's default is none). Sizes the program skips (its memory bound) are
    absent."""
    cfg = [smpi_config(op, algorithm)]
    if any(overheads):
        cfg += overhead_settings(*overheads)
    args = ["--sizes", ",".join(str(int(s)) for s in sizes), "--iterations", str(iterations),
            "--warmup", str(warmup)]
    if op == "alltoall":
        table = run_benchmark("alltoall", args, sim=platform_xml, hosts=list(rank_hosts), smpi_cfg=cfg,
                              timeout=timeout).table
    elif op in BENCH_COLLECTIVES:
        table = run_benchmark("collectives", ["--collectives", op, *args], sim=platform_xml,
                              hosts=list(rank_hosts), smpi_cfg=cfg, timeout=timeout)[op]
    else:
        raise UsageError(f"no benchmark program times '{op}'")
    return {int(s): float(t) * US for s, t in zip(table.size, table.median_us)}


def node_indices(network: PredictNetwork, rank_hosts: Sequence[str]) -> np.ndarray:
    """rank -> index of its host among the network's nodes."""
    index = {name: i for i, name in enumerate(network.names)}
    missing = [h for h in dict.fromkeys(rank_hosts) if h not in index]
    if missing:
        raise RankwiseError(f"host '{missing[0]}' is not in the network the prediction uses "
                            f"({len(network.names)} nodes)")
    return np.asarray([index[h] for h in rank_hosts], dtype=np.int32)


def validate(network: PredictNetwork, platform_xml: str | PathLike, op: str, algorithm: str,
             sizes: Sequence[int], rank_hosts: Sequence[str], *, iterations: int = 2,
             warmup: int = 1, overheads: tuple[float, float] = (0.0, 0.0)) -> list[Row]:
    """Predicted and SMPI-simulated time of `op` with `algorithm` per size;
    overheads (send, receive, seconds) are set in SMPI and, when not zero,
    given to every node of the network."""
    node_of = node_indices(network, rank_hosts)
    if any(overheads):
        network = network.with_overheads(*overheads)
    # Predict first: a request the predictor refuses (e.g. pair on 6 ranks) must not cost a simulation.
    predicted = {int(s): predict_collective(network, op, algorithm, s, node_of).span
                 for s in sizes}
    hockney = {int(s): predict_collective(network, op, algorithm, s, node_of,
                                          contention=False).span for s in sizes}
    simulated = simulate_pinned(platform_xml, op, algorithm, sizes, rank_hosts, iterations=iterations,
                                warmup=warmup, overheads=overheads)
    return [Row(algorithm, s, simulated[s], predicted[s], hockney[s]) for s in map(int, sizes) if s in simulated]


def plot_validation(rows: Sequence[Row], title: str, path: str | PathLike) -> Path:
    """Predicted and simulated time against the message size, log-log, one
    pair of lines per algorithm. Written atomically."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from rankwise.report.plots import png_target, save_figure

    path = png_target(path)
    fig = Figure(figsize=(7.0, 4.5), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    for k, alg in enumerate(dict.fromkeys(r.algorithm for r in rows)):
        mine = [r for r in rows if r.algorithm == alg]
        size = [r.size for r in mine]
        color = f"C{k}"
        ax.plot(size, [r.simulated for r in mine], "o-", color=color, label=f"{alg}: SMPI")
        ax.plot(size, [r.predicted for r in mine], "x--", color=color, label=f"{alg}: predicted")
        ax.plot(size, [r.hockney for r in mine], ":", color=color, alpha=0.6, label=f"{alg}: Hockney")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("time (s)")
    ax.set_title(title, fontsize="medium")
    ax.legend(fontsize="small")
    save_figure(fig, path)
    return path
