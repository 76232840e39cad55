"""Which hosts of a simulated platform a run uses: one hostfile line per rank."""

from __future__ import annotations

from os import PathLike
from pathlib import Path

from rankwise.util.errors import RankwiseError, UsageError
from rankwise.cluster.hostfile import read_hostfile
from rankwise.sim.platform_file import read_platform


def rank_hosts(
    platform: str | PathLike,
    *,
    hostfile: str | PathLike | None = None,
    hosts: list[str] | None = None,
    nodes: int | None = None,
    ranks_per_node: int = 1,
    min_nodes: int = 1,
) -> list[str]:
    """The host of every rank, in rank order: those of a hostfile (slots =
    ranks) or of an explicit list, else the platform's first `nodes` hosts
    (all by default) with `ranks_per_node` ranks each."""
    platform = Path(platform)
    known = read_platform(platform)  # None for a compiled platform
    if hostfile is not None and hosts is not None:
        raise UsageError("give a hostfile or a host list, not both")
    if hostfile is not None:
        hosts = [name for name, slots in read_hostfile(hostfile) for _ in range(slots)]
        where = f"{hostfile}: "
    else:
        where = ""
    if hosts is not None:
        hosts = [str(h) for h in hosts]
        if not hosts:
            raise RankwiseError("the host list is empty")
        names = None if known is None else {name for name, _ in known}
        unknown = [h for h in hosts if names is not None and h not in names]
        if unknown:
            raise RankwiseError(f"{where}host '{unknown[0]}' is not in the platform {platform}")
        return hosts
    if known is None:
        raise RankwiseError(f"{platform}: a compiled platform has no host list to read; give --hostfile FILE")
    if nodes is not None:
        if not min_nodes <= nodes <= len(known):
            raise UsageError(f"--nodes {nodes}: the platform has {len(known)} hosts (need {min_nodes} or more)")
        known = known[:nodes]
    if ranks_per_node < 1:
        raise UsageError("--ranks-per-node must be >= 1")
    small = [name for name, cores in known if cores < ranks_per_node]
    if small:
        raise UsageError(f"--ranks-per-node {ranks_per_node}: host {small[0]} has fewer cores")
    return [name for name, _ in known for _ in range(ranks_per_node)]
