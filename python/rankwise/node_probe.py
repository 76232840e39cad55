"""Figures inside the node from a probe's rank-to-rank ping-pongs: each rank
is attributed to the core it reports running on (its first PU's OS cpu id,
as bound by the launcher), each pair of ranks to the level their cores
share (rankwise.node.LEVELS), and every level gets alpha + beta * bytes
fitted by least squares over its pairs. Attributing by the reported cpu,
not by the binding asked for, keeps the figures honest when a launcher
binds elsewhere (or not at all)."""

from __future__ import annotations

import numpy as np

from rankwise.errors import RankwiseError
from rankwise.node import LEVELS, NodeTopology


def cores_of_cpus(topology: NodeTopology, cpus) -> np.ndarray:
    """Logical core of each rank from the OS cpu id it reports; a cpu that
    is no core's first PU in the topology is refused, naming the rank."""
    index = {int(c): k for k, c in enumerate(topology.cpu_of.tolist())}
    out = np.empty(len(cpus), dtype=np.int64)
    for rank, cpu in enumerate(np.asarray(cpus, dtype=np.int64).tolist()):
        if cpu not in index:
            raise RankwiseError(f"rank {rank} reports cpu {cpu}, which is the first cpu of no core of the "
                                f"node topology ({topology.source})")
        out[rank] = index[cpu]
    return out


def fit_level_costs(topology: NodeTopology, cpus, samples) -> tuple[np.ndarray, np.ndarray]:
    """(alpha, beta) by level (LEVELS order; NaN where no pair of ranks
    shares that level, or its pairs were timed at one size only) from
    samples, rows of (rank a, rank b, bytes, one-way seconds)."""
    samples = np.asarray(samples, dtype=float).reshape(-1, 4)
    cores = cores_of_cpus(topology, cpus)
    a, b = samples[:, 0].astype(np.int64), samples[:, 1].astype(np.int64)
    if samples.size and (min(a.min(), b.min()) < 0 or max(a.max(), b.max()) >= cores.size):
        raise RankwiseError(f"a ping-pong sample names a rank outside 0..{cores.size - 1}")
    if np.any(a == b):
        raise RankwiseError("a ping-pong sample pairs a rank with itself")
    level = topology.level(cores[a], cores[b])
    alpha, beta = np.full(len(LEVELS), np.nan), np.full(len(LEVELS), np.nan)
    for lv in range(len(LEVELS)):
        x, t = samples[level == lv, 2], samples[level == lv, 3]
        if np.unique(x).size < 2:
            continue
        (al, be), *_ = np.linalg.lstsq(np.column_stack([np.ones_like(x), x]), t, rcond=None)
        alpha[lv], beta[lv] = max(al, 0.0), max(be, 0.0)  # noise must not give negative costs
    return alpha, beta


def parse_output(text: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(cpu of each local rank, samples one pair at a time, samples with
    the disjoint pairs at once) from rankwise-node-probe's output; the
    launcher's own lines are skipped."""
    cpus: dict[int, int] = {}
    samples, loaded = [], []
    for line in text.splitlines():
        f = line.split()
        if len(f) == 3 and f[0] == "cpu":
            cpus[int(f[1])] = int(f[2])
        elif len(f) == 5 and f[0] in ("pp", "bw"):
            (samples if f[0] == "pp" else loaded).append((int(f[1]), int(f[2]), int(f[3]), float(f[4])))
    if not cpus or sorted(cpus) != list(range(len(cpus))):
        raise RankwiseError("rankwise-node-probe reported no cpu for its ranks: "
                            + (text.strip().splitlines() or ["no output"])[-1])
    return (np.array([cpus[k] for k in range(len(cpus))]), np.array(samples, dtype=float).reshape(-1, 4),
            np.array(loaded, dtype=float).reshape(-1, 4))


def run(launcher: list[str], sizes: list[int], rounds: int, timeout: float = 600.0):
    """Run rankwise-node-probe under a real launcher (its ranks on one node,
    bound as the launcher says): (cpus, samples, loaded samples, wall seconds)."""
    import subprocess
    import time

    from rankwise import launch, paths

    cmd = [*launcher, str(paths.program("rankwise-node-probe", "mpi")), ",".join(map(str, sizes)), str(rounds)]
    t0 = time.monotonic()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=timeout,
                           env=launch.mpi_environment(), stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise RankwiseError(f"rankwise-node-probe did not end within {timeout:g} s") from None
    except OSError as exc:
        raise RankwiseError(f"cannot start {cmd[0]}: {exc.strerror}") from None
    wall = time.monotonic() - t0
    if r.returncode != 0:
        last = (r.stderr.strip() or r.stdout.strip()).splitlines()
        raise RankwiseError(f"rankwise-node-probe failed (exit {r.returncode}): {last[0] if last else 'no output'}")
    cpus, samples, loaded = parse_output(r.stdout)
    if cpus.size < 2:
        raise RankwiseError(f"rankwise-node-probe ran {cpus.size} rank on the node of rank 0: "
                            "the launcher must start at least 2 ranks on one node")
    return cpus, samples, loaded, wall
