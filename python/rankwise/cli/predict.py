"""`rankwise predict`: what a collective or an application's traffic will cost
on the measured network (docs/concepts/prediction.md).

    rankwise predict --model net.rwm --op alltoall --ranks 32 --sizes 1K:4M
    rankwise predict --model net.rwm --hostfile hosts --op bcast --ranks 64 --ranks-per-node 4 --sizes 1K,1M -o bcast.csv
    rankwise predict --model net.rwm --pattern alltoall:ranks=32,bytes=1M --placement placement.txt
"""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path
from typing import Optional

import numpy as np
import typer
from rich.markup import escape

from rankwise.cli.common import HOSTFILE_OPTION, console
from rankwise.predict.allocation import block_counts, check_ranks
from rankwise.util.errors import RankwiseError, UsageError

MAX_SIZES = 64  # as the benchmark programs (RW_BENCH_MAX_SIZES)
MAX_SIZE = 1 << 30


def parse_size_list(text: str, option: str = "--sizes") -> list[int]:
    """'1K,64K,1M' or '1K:4M' (every power of two times 1K up to 4M) or both,
    K = 1024, as the benchmark programs read --sizes; increasing, 1 B to 1 GiB."""
    from rankwise.traffic.patterns import parse_size

    def one(word: str) -> int:
        try:
            value = parse_size(word)
        except ValueError:
            raise UsageError(f"{option}: '{word}' is not a size (like 8, 1K, 4M)") from None
        if not 1 <= value <= MAX_SIZE:
            raise UsageError(f"{option}: {word} is out of range (1 B to 1G)")
        return value

    sizes: list[int] = []
    for item in [i.strip() for i in text.split(",") if i.strip()]:
        lo, colon, hi = item.partition(":")
        if not colon:
            sizes.append(one(item))
            continue
        a, b = one(lo), one(hi)
        if b < a:
            raise UsageError(f"{option}: range '{item}' ends below its start")
        while a <= b:
            sizes.append(a)
            a *= 2
        if len(sizes) > MAX_SIZES:
            break
    if not sizes:
        raise UsageError(f"{option} is empty (a list like 1K,64K,1M or a range like 1K:4M)")
    if len(sizes) > MAX_SIZES:
        raise UsageError(f"{option} '{text}': more than {MAX_SIZES} sizes")
    if any(b <= a for a, b in zip(sizes, sizes[1:])):
        raise UsageError(f"{option} '{text}': sizes must be increasing")
    return sizes


def check_operation(op: str, algorithm: Optional[str]) -> list[str]:
    """The algorithms to predict: the one asked for, or all of op's."""
    from rankwise.predict.predictor import OPERATIONS, algorithms

    if op not in OPERATIONS:
        raise UsageError(f"--op: unknown operation '{op}' (choose from {', '.join(OPERATIONS)})")
    known = algorithms(op)
    if algorithm is None:
        return known
    if algorithm not in known:
        raise UsageError(f"--algorithm: {op} has no algorithm '{algorithm}' (choose from {', '.join(known)})")
    return [algorithm]


def load_allocation(model_path: Path, hostfile: Optional[Path], ranks: int, ranks_per_node: Optional[int]):
    """(model, hosts [(name, slots)], ranks on each node used, in order): the
    hostfile's hosts, else the model's nodes with as many slots as the ranks
    need spread evenly."""
    from rankwise.cluster.allocation import read_allocation
    from rankwise.model.model import Model

    model = Model.load(model_path)
    if hostfile is not None:
        hosts = [(h, int(s)) for h, s in read_allocation(hostfile)]
        where = str(hostfile)
    else:
        even = math.ceil(max(ranks, 1) / model.n_nodes)
        hosts = [(h, even) for h in model.names]
        where = f"the model ({model.n_nodes} nodes)"
    # --ranks-per-node overrides the hostfile's slots, as map's --slots does.
    counts = block_counts(ranks, [s for _, s in hosts], ranks_per_node, where)
    return model, hosts, counts


def network_of(model, hosts, allow_missing: bool):
    from rankwise.predict.predictor import PredictNetwork

    return PredictNetwork.from_model(model, hosts, fill_missing=allow_missing)


SWITCH_KEYS = {"radix": int, "hops": int, "packet": float, "cycle": float, "load": float}


def parse_switch(text: Optional[str]) -> Optional[dict]:
    """'radix=16,hops=3,packet=32,cycle=3.2e-9,load=0.8': the switches Luo et al.
    2018 eq. 4 charges (radix x radix, hops on a route, packet bytes, cycle s,
    load rho in [0, 1)); None when not given."""
    if text is None:
        return None
    values = {}
    for item in [i.strip() for i in text.split(",") if i.strip()]:
        key, eq, value = item.partition("=")
        if not eq or key not in SWITCH_KEYS:
            raise UsageError(f"--switch: '{item}' is not one of {'=, '.join(SWITCH_KEYS)}= (e.g. radix=16)")
        from rankwise.util.numbers import bounded_int, finite_float, shown

        try:
            values[key] = finite_float(value) if SWITCH_KEYS[key] is float else bounded_int(value, 1 << 20)
        except ValueError as exc:
            raise UsageError(f"--switch: {key}={shown(value)} is {exc}") from None
    missing = [k for k in SWITCH_KEYS if k not in values]
    if missing:
        raise UsageError(f"--switch lacks {', '.join(missing)} (radix, hops, packet, cycle, load are needed)")
    if values["radix"] < 1 or values["hops"] < 0 or values["packet"] <= 0 or values["cycle"] <= 0 \
            or not 0 <= values["load"] < 1:
        raise UsageError("--switch: radix >= 1, hops >= 0, packet > 0, cycle > 0 and 0 <= load < 1 are needed")
    return values


def formulas(op: str, algorithm: str, p: int, size: int, alpha: float, beta: float,
             overhead: float, switch: Optional[dict] = None) -> dict[str, float]:
    """The closed forms that describe this algorithm (docs/concepts/prediction.md), on
    the job's typical pair (alpha, beta); eq. 4 with the switches given."""
    from rankwise.predict.predictor import loggp, luo_bruck, luo_contention, luo_pairwise

    if op != "alltoall" or p < 2:
        return {}
    if algorithm in ("pair", "ring"):
        out = {"LogGP": (p - 1) * loggp(alpha, overhead, beta, size),
               "Luo eq.2": luo_pairwise(p, alpha, beta, size)}
        if switch is not None:
            out["Luo eq.4"] = luo_contention(p, alpha, beta, size, packet=switch["packet"], hops=switch["hops"],
                                             radix=switch["radix"], rho=switch["load"], cycle=switch["cycle"])
        return out
    if algorithm == "bruck":
        return {"Luo eq.1": luo_bruck(p, alpha, beta, size)}
    return {}


def typical_pair(net, used: np.ndarray) -> tuple[float, float, float]:
    """Median alpha, beta over the ordered pairs of the nodes used (inside
    the node when there is one), and the median send overhead."""
    idx = np.unique(used)
    a, b = net.alpha[np.ix_(idx, idx)], net.beta[np.ix_(idx, idx)]
    mask = ~np.eye(idx.size, dtype=bool) if idx.size > 1 else np.ones((1, 1), dtype=bool)
    o = float(np.median(net.overhead[idx])) if net.overhead is not None else 0.0
    return float(np.median(a[mask])), float(np.median(b[mask])), o


def predict_collective_rows(net, op: str, algs: list[str], sizes: list[int], node_of: np.ndarray,
                            strict: bool, switch: Optional[dict] = None):
    """Every algorithm at every size (rankwise.report.prediction.AlgorithmRow);
    an algorithm the predictor refuses (e.g. pair on 6 ranks) is a row with
    the reason, or an error when it was asked for by name (strict)."""
    from rankwise.predict.predictor import predict_collective
    from rankwise.report.prediction import AlgorithmRow

    alpha, beta, o = typical_pair(net, node_of)
    rows = []
    for size in sizes:
        group = []
        for alg in algs:
            try:
                pred = predict_collective(net, op, alg, size, node_of).time
                hock = predict_collective(net, op, alg, size, node_of, contention=False).time
            except RankwiseError as exc:
                if strict:
                    raise
                group.append(AlgorithmRow(size, alg, None, None, note=str(exc)))
                continue
            group.append(AlgorithmRow(size, alg, pred, hock, formulas(op, alg, node_of.size, size, alpha, beta, o, switch)))
        done = [r for r in group if r.predicted is not None]
        if done:
            min(done, key=lambda r: r.predicted).preferred = True
        rows += group
    return rows


def traffic_rows(net, hosts, matrix, counts, placement_file: Optional[Path], iterations: float):
    """(label, predicted, Hockney) for the block placement and the file's."""
    from rankwise.cluster.launcher_files import read_placement
    from rankwise.predict.predictor import placement, predict_traffic

    block = placement(counts)[: matrix.n_ranks]
    rows = [("default (block)", predict_traffic(net, matrix, block, iterations=iterations).time,
             predict_traffic(net, matrix, block, iterations=iterations, contention=False).time)]
    if placement_file is not None:
        pl = read_placement("permutation", placement_file)
        if pl.n_ranks < matrix.n_ranks:
            raise RankwiseError(f"{placement_file}: places {pl.n_ranks} ranks, the traffic has {matrix.n_ranks}")
        index = {h: i for i, (h, _) in enumerate(hosts)}
        unknown = [h for h in pl.nodes if h not in index]
        if unknown:
            raise RankwiseError(f"{placement_file}: node '{unknown[0]}' is not in the allocation "
                                f"({len(hosts)} nodes)")
        node_of = np.asarray([index[pl.nodes[k]] for k in pl.node_of], dtype=np.int32)[: matrix.n_ranks]
        rows.append((placement_file.name, predict_traffic(net, matrix, node_of, iterations=iterations).time,
                     predict_traffic(net, matrix, node_of, iterations=iterations, contention=False).time))
    return rows


def write_csv(path: Path, header: list[str], rows: list[list]) -> None:
    from rankwise.util.files import write_atomic

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    try:
        write_atomic(path, buf.getvalue())
    except OSError as exc:
        raise RankwiseError(f"{path}: cannot write: {exc.strerror or exc}") from None


def predict_command(
    model_path: Path = typer.Option(..., "--model", "-m", help="Measured network model (rankwise probe)."),
    hostfile: Optional[Path] = HOSTFILE_OPTION,
    op: Optional[str] = typer.Option(None, "--op", help="Collective: alltoall, bcast, reduce, allreduce, allgather, gather, scatter."),
    ranks: Optional[int] = typer.Option(None, "--ranks", help="Job size (--op; with a matrix: its rank count)."),
    sizes: str = typer.Option("1K:4M", "--sizes", help="Message sizes: 1K,64K,1M or 1K:4M (powers of two), K = 1024."),
    algorithm: Optional[str] = typer.Option(None, "--algorithm", "-a", help="One algorithm (default: every one of the operation)."),
    ranks_per_node: Optional[int] = typer.Option(None, "--ranks-per-node", help="Ranks per node, block placement (default: the hostfile's slots, or spread evenly)."),
    matrix: Optional[Path] = typer.Option(None, "--matrix", help="An application's traffic (.rwc, .npz), predicted as one phase."),
    pattern: Optional[str] = typer.Option(None, "--pattern", "-p", help="Traffic as a pattern spec, e.g. alltoall:ranks=32,bytes=1M."),
    placement_file: Optional[Path] = typer.Option(None, "--placement", help="With the traffic: also predict this placement (rankwise map --format permutation)."),
    iterations: float = typer.Option(1.0, "--iterations", help="With the traffic: iterations the matrix sums (one phase = total / iterations)."),
    switch: Optional[str] = typer.Option(None, "--switch", help="Luo et al. 2018 eq. 4 for all-to-all: radix=16,hops=3,packet=32,cycle=3.2e-9,load=0.8."),
    allow_missing: bool = typer.Option(False, "--allow-missing", help="Cost pairs the model lacks as its slowest pair instead of failing."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Also write the table as CSV."),
    as_json: bool = typer.Option(False, "--json", help="Print the table as one JSON object instead (docs/reference/formats.md)."),
):
    """Predict a collective's time per size and algorithm, or an application's traffic per placement."""
    traffic_given = matrix is not None or pattern is not None
    if traffic_given == (op is not None):
        raise UsageError("give a collective (--op) or an application's traffic (--matrix FILE or --pattern SPEC)")
    if matrix is not None and pattern is not None:
        raise UsageError("give the traffic as --pattern SPEC or --matrix FILE, not both")
    if placement_file is not None and not traffic_given:
        raise UsageError("--placement is for an application's traffic (--matrix or --pattern)")
    if not iterations > 0:
        raise UsageError(f"--iterations must be > 0, got {iterations:g}")
    if switch is not None and traffic_given:
        raise UsageError("--switch is for a collective's formulas (--op alltoall)")
    if output is not None:
        from rankwise.util.files import prepare_output

        prepare_output(output)  # before any prediction: a table that cannot be written costs nothing
    if traffic_given:
        _predict_traffic(model_path, hostfile, matrix, pattern, ranks, ranks_per_node, placement_file,
                         iterations, allow_missing, output, as_json)
        return
    algs = check_operation(op, algorithm)
    size_list = parse_size_list(sizes)
    switch_figures = parse_switch(switch)
    if ranks is None:
        raise UsageError("--op needs --ranks (the job size)")
    check_ranks(ranks)
    model, hosts, counts = load_allocation(model_path, hostfile, ranks, ranks_per_node)
    check_ranks(ranks, len(counts))
    net = network_of(model, hosts[: len(counts)], allow_missing)
    from rankwise.predict.predictor import placement
    from rankwise.report.prediction import print_collective

    node_of = placement(counts)
    from rankwise._engine.core import interruptible

    with interruptible():  # minutes at thousands of ranks, inside the engine; nothing written yet
        rows = predict_collective_rows(net, op, algs, size_list, node_of, strict=algorithm is not None,
                                       switch=switch_figures)
    if not any(r.predicted is not None for r in rows):
        raise RankwiseError(f"no {op} algorithm applies to {ranks} ranks: {rows[0].note}")
    shape = f"{len(counts)} nodes" + (f", {ranks_per_node} per node" if ranks_per_node else "")
    names = sorted({n for r in rows for n in r.formulas})
    header = ["size", "algorithm", "predicted_s", "hockney_s", *[f"{n}_s" for n in names], "preferred"]
    table = [[r.size, r.algorithm, r.predicted, r.hockney, *[r.formulas.get(n) for n in names], int(r.preferred)]
             for r in rows]
    if as_json:
        _print_json("collective-prediction", {"model": str(model_path), "op": op, "ranks": ranks,
                                              "nodes": len(counts)}, header, table)
    else:
        print_collective(rows, f"{op}, {ranks} ranks on {shape} (predicted from {model_path.name})", console)
    if output is not None:
        write_csv(output, header, [[_cell(v) for v in row] for row in table])
        if not as_json:
            console.print(f"wrote {escape(str(output))}", highlight=False)


def _cell(value) -> str:
    """A CSV cell: seconds to 9 digits, nothing for no figure."""
    if value is None:
        return ""
    return f"{value:.9g}" if isinstance(value, float) else str(value)


def _print_json(kind: str, about: dict, header: list[str], table: list[list]) -> None:
    """The table as one JSON document: what it is about, then one object per row."""
    from rankwise.report.jsonable import dumps

    print(dumps(kind, {**about, "rows": [dict(zip(header, row)) for row in table]}))


def _predict_traffic(model_path, hostfile, matrix_path, pattern, ranks, ranks_per_node, placement_file,
                     iterations, allow_missing, output, as_json=False):
    from rankwise.cli.map import _traffic
    from rankwise.report.prediction import print_traffic

    traffic = _traffic(pattern, matrix_path, ranks)
    model, hosts, counts = load_allocation(model_path, hostfile, traffic.n_ranks, ranks_per_node)
    if placement_file is None:
        hosts = hosts[: len(counts)]
    net = network_of(model, hosts, allow_missing)
    rows = traffic_rows(net, hosts, traffic, counts, placement_file, iterations)
    header, table = ["placement", "predicted_s", "hockney_s"], [[label, p, h] for label, p, h in rows]
    if as_json:
        _print_json("traffic-prediction", {"model": str(model_path), "traffic": str(matrix_path or pattern),
                                           "ranks": traffic.n_ranks}, header, table)
    else:
        what = escape(str(matrix_path) if matrix_path is not None else pattern)
        print_traffic(rows, f"{what}: {traffic.n_ranks} ranks, one phase (predicted from {model_path.name})", console)
    if output is not None:
        write_csv(output, header, [[_cell(v) for v in row] for row in table])
        if not as_json:
            console.print(f"wrote {escape(str(output))}", highlight=False)
