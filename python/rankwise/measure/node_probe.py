"""Figures inside the node from a probe's rank-to-rank ping-pongs: each rank
is attributed to the core it reports running on (its first PU's OS cpu id,
as bound by the launcher), each pair of ranks to the level their cores
share (rankwise.model.node.LEVELS), and every level gets alpha + beta * bytes
fitted by least squares over its pairs. Attributing by the reported cpu,
not by the binding asked for, keeps the figures honest when a launcher
binds elsewhere (or not at all)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rankwise.util.errors import RankwiseError
from rankwise.model.node import LEVELS, NodeTopology


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

    from rankwise.cluster import launch

    from rankwise.util import paths
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


def parse_extras(text: str) -> tuple[list[str], float]:
    """(host name of each local rank, the measurement's span in seconds by MPI_Wtime: simulated
    seconds under SMPI) from rankwise-node-probe's output."""
    hosts: dict[int, str] = {}
    span = float("nan")
    for line in text.splitlines():
        f = line.split()
        if len(f) == 3 and f[0] == "host":
            hosts[int(f[1])] = f[2]
        elif len(f) == 2 and f[0] == "time":
            span = float(f[1])
    return [hosts[k] for k in sorted(hosts)], span


def fit_pair_costs(group_of, samples) -> dict[tuple[int, int], tuple[float, float]]:
    """(alpha, beta) per unordered pair of groups (a domain pair: (d, d) inside domain d) from
    ping-pong samples (rank a, rank b, bytes, seconds); group_of[rank] names each rank's group.
    Pairs timed at one size only are left out."""
    samples = np.asarray(samples, dtype=float).reshape(-1, 4)
    group_of = np.asarray(group_of)
    ga, gb = group_of[samples[:, 0].astype(int)], group_of[samples[:, 1].astype(int)]
    lo, hi = np.minimum(ga, gb), np.maximum(ga, gb)
    out = {}
    for key in sorted({(int(a), int(b)) for a, b in zip(lo, hi)}):
        sel = (lo == key[0]) & (hi == key[1])
        x, t = samples[sel, 2], samples[sel, 3]
        if np.unique(x).size < 2:
            continue
        (al, be), *_ = np.linalg.lstsq(np.column_stack([np.ones_like(x), x]), t, rcond=None)
        out[key] = (max(float(al), 0.0), max(float(be), 0.0))
    return out


@dataclass
class SimNodeProbe:
    """The intra-node probe of one node of a simulated domain-aware cluster (sim/domains.py)."""

    node: str
    hosts: list[str]  # of each rank
    cores: np.ndarray  # logical core each rank stands for (from its host's domain)
    cpus: np.ndarray  # those cores' first cpus (what fit_level_costs attributes by)
    samples: np.ndarray
    loaded: np.ndarray
    simulated: float  # s, the measurement's span in simulated time
    wall: float  # s, smpirun's wall time


def run_sim(dp, node: str, sizes: list[int], rounds: int, per_domain: int = 2,
            timeout: float = 600.0) -> SimNodeProbe:
    """rankwise-node-probe under smpirun on one node of a domain-aware platform (dp, a
    sim.domains.DomainPlatform): `per_domain` ranks on the host of each of its domains, all of them
    taken as one node (--world). A rank is attributed to a core of its host's domain by the
    platform's layout (the j-th rank on a domain host: that domain's j-th core), not by
    sched_getcpu, which under SMPI reports the machine running the simulation."""
    import subprocess
    import tempfile
    import time
    from pathlib import Path

    from rankwise.cluster import launch

    from rankwise.util import paths
    from rankwise.cluster.hostfile import write_hostfile
    from rankwise.sim import smpi

    if node not in dp.nodes:
        raise RankwiseError(f"'{node}' is no node of the platform {dp.platform_xml} "
                            f"(nodes: {dp.nodes[0]} .. {dp.nodes[-1]})")
    width = int((dp.cores_of_domain >= 0).sum(axis=1).min())
    if not 1 <= per_domain <= width:
        raise RankwiseError(f"--per-domain {per_domain}: a domain of this node has {width} cores")
    i = dp.nodes.index(node)
    hosts = [dp.host(i, d) for d in range(dp.n_domains) for _ in range(per_domain)]
    cores = np.array([dp.cores_of_domain[d, j] for d in range(dp.n_domains) for j in range(per_domain)])
    args = [",".join(map(str, sizes)), str(rounds), "--world"]
    with tempfile.TemporaryDirectory(prefix="rankwise-node-probe-") as tmp:
        hf = Path(tmp) / "hostfile"
        write_hostfile(hf, hosts)
        cmd = smpi.smpirun_command(paths.program("rankwise-node-probe", "smpi"), args, dp.platform_xml, hf, len(hosts))
        t0 = time.monotonic()
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=timeout, cwd=tmp,
                               env=launch.mpi_environment(), stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise RankwiseError(f"the simulated node probe did not end within {timeout:g} s") from None
        wall = time.monotonic() - t0
    if r.returncode != 0:
        log = [line for line in (r.stdout + "\n" + r.stderr).splitlines() if line.strip()]
        raise RankwiseError(smpi.failure_message("the simulated node probe", r.returncode, log))
    _, samples, loaded = parse_output(r.stdout)
    reported, span = parse_extras(r.stdout)
    if reported != hosts:  # SMPI runs rank k on the hostfile's k-th line; anything else is a bug
        raise RankwiseError(f"the simulated node probe ran on {reported}, not on {hosts}")
    from rankwise.model.node import NodeTopology

    topology = NodeTopology.load(synthetic=dp.spec.node)
    return SimNodeProbe(node, hosts, cores, topology.cpu_of[cores], samples, loaded, span, wall)
