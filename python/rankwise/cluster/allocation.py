"""The nodes a job may run on, with their slots: from a hostfile, a Slurm
node list, or the Slurm job's environment."""

from __future__ import annotations

import os
import re
from os import PathLike

from rankwise.util.errors import RankwiseError, UsageError, file_error
from rankwise.cluster.hostfile import read_hostfile
from rankwise.cluster.hostlist import MAX_NODES, expand
from rankwise.util.numbers import bounded_int, shown

Allocation = list[tuple[str, int]]



def read_allocation(path: str | PathLike) -> Allocation:
    """(host, slots) from an Open MPI hostfile or MPICH machinefile
    ('host', 'host:N', 'host slots=N'). A host on several bare lines gains a
    slot per line (one line per rank, as machinefiles have it); listed again
    where a count is given, it is refused with 'path:line'."""
    hosts = read_hostfile(path)
    if len(hosts) > MAX_NODES:
        raise file_error(path, None, f"{len(hosts)} hosts: an allocation has at most {MAX_NODES} nodes")
    return hosts


def allocation_from_nodelist(text: str, slots: int = 1) -> Allocation:
    """A Slurm node list with the same number of slots on every node."""
    if slots < 1:
        raise UsageError(f"slots per node must be at least 1, got {slots}")
    return [(h, slots) for h in expand(text)]


def parse_tasks_per_node(text: str, n_nodes: int) -> list[int]:
    """SLURM_TASKS_PER_NODE ('2(x3),1') -> [2, 2, 2, 1] for n_nodes nodes."""
    counts: list[int] = []
    for item in text.split(","):
        m = re.fullmatch(r"\s*([0-9]+)(?:\(x([0-9]+)\))?\s*", item)
        if not m:
            raise RankwiseError(f"SLURM_TASKS_PER_NODE '{shown(text, 80)}': '{shown(item)}' is not N or N(xM)")
        try:
            tasks, repeat = bounded_int(m.group(1), MAX_NODES << 16), bounded_int(m.group(2) or "1", MAX_NODES)
        except ValueError:
            raise RankwiseError(f"SLURM_TASKS_PER_NODE '{shown(text, 80)}': '{shown(item)}' is out of range") from None
        counts += [tasks] * repeat
        if len(counts) > n_nodes:
            break  # refused just below, before a huge repeat is built
    if len(counts) != n_nodes:
        raise RankwiseError(f"SLURM_TASKS_PER_NODE '{shown(text, 80)}' gives {len(counts)} nodes, the node list {n_nodes}")
    return counts


def allocation_from_env(env=None) -> Allocation | None:
    """The Slurm job's nodes and tasks per node, or None outside a job."""
    env = os.environ if env is None else env
    nodelist = env.get("SLURM_JOB_NODELIST") or env.get("SLURM_NODELIST")
    if not nodelist:
        return None
    try:
        hosts = expand(nodelist)
    except RankwiseError as exc:  # say where the list came from
        raise RankwiseError(f"SLURM_JOB_NODELIST: {exc}") from None
    tasks = env.get("SLURM_TASKS_PER_NODE")
    slots = parse_tasks_per_node(tasks, len(hosts)) if tasks else [1] * len(hosts)
    return list(zip(hosts, slots))


