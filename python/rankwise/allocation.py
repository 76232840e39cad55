"""The nodes a job may run on, with their slots: from a hostfile, a Slurm
node list, or the Slurm job's environment."""

from __future__ import annotations

import os
import re
from os import PathLike

from rankwise.errors import RankwiseError
from rankwise.sim.platform_file import read_hostfile

Allocation = list[tuple[str, int]]


def read_allocation(path: str | PathLike) -> Allocation:
    """(host, slots) from an Open MPI hostfile or MPICH machinefile
    ('host', 'host:N', 'host slots=N'); duplicates are refused with their line."""
    return read_hostfile(path)


_RANGE = re.compile(r"(\d+)(?:-(\d+))?")


def expand_nodelist(text: str) -> list[str]:
    """Slurm's compressed host list: 'node[01-04,07],gpu3' -> node01 ... gpu3
    (zero padding kept). Duplicates are an error."""
    hosts: list[str] = []
    i, n = 0, len(text)
    while i < n:
        j = i
        while j < n and text[j] not in ",[":
            j += 1
        prefix = text[i:j]
        if j < n and text[j] == "[":
            k = text.find("]", j)
            if k < 0:
                raise RankwiseError(f"node list '{text}': '[' without ']'")
            suffix_end = k + 1
            while suffix_end < n and text[suffix_end] != ",":
                suffix_end += 1
            suffix = text[k + 1:suffix_end]
            if "[" in suffix or "]" in suffix:
                raise RankwiseError(f"node list '{text}': one bracket group per name is supported")
            for part in text[j + 1:k].split(","):
                m = _RANGE.fullmatch(part.strip())
                if not m:
                    raise RankwiseError(f"node list '{text}': '{part}' is not N or N-M")
                lo, hi = m.group(1), m.group(2) or m.group(1)
                if int(hi) < int(lo):
                    raise RankwiseError(f"node list '{text}': range {lo}-{hi} is empty")
                width = len(lo) if lo.startswith("0") else 0
                hosts += [f"{prefix}{str(v).zfill(width)}{suffix}" for v in range(int(lo), int(hi) + 1)]
            i = suffix_end + 1
        else:
            if not prefix.strip():
                raise RankwiseError(f"node list '{text}': empty host name")
            hosts.append(prefix.strip())
            i = j + 1
    if not hosts:
        raise RankwiseError("empty node list")
    seen = set()
    for h in hosts:
        if h in seen:
            raise RankwiseError(f"node list '{text}': host '{h}' appears twice")
        seen.add(h)
    return hosts


def parse_tasks_per_node(text: str, n_nodes: int) -> list[int]:
    """SLURM_TASKS_PER_NODE ('2(x3),1') -> [2, 2, 2, 1] for n_nodes nodes."""
    counts: list[int] = []
    for item in text.split(","):
        m = re.fullmatch(r"\s*(\d+)(?:\(x(\d+)\))?\s*", item)
        if not m:
            raise RankwiseError(f"SLURM_TASKS_PER_NODE '{text}': '{item}' is not N or N(xM)")
        counts += [int(m.group(1))] * int(m.group(2) or 1)
    if len(counts) != n_nodes:
        raise RankwiseError(f"SLURM_TASKS_PER_NODE '{text}' gives {len(counts)} nodes, the node list {n_nodes}")
    return counts


def allocation_from_env(env=None) -> Allocation | None:
    """The Slurm job's nodes and tasks per node, or None outside a job."""
    env = os.environ if env is None else env
    nodelist = env.get("SLURM_JOB_NODELIST") or env.get("SLURM_NODELIST")
    if not nodelist:
        return None
    hosts = expand_nodelist(nodelist)
    tasks = env.get("SLURM_TASKS_PER_NODE")
    slots = parse_tasks_per_node(tasks, len(hosts)) if tasks else [1] * len(hosts)
    return list(zip(hosts, slots))


