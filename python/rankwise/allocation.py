"""The nodes a job may run on, with their slots: from a hostfile, a Slurm
node list, or the Slurm job's environment."""

from __future__ import annotations

import itertools
import os
import re
from os import PathLike

from rankwise.errors import RankwiseError, UsageError
from rankwise.hostfile import read_hostfile

Allocation = list[tuple[str, int]]


def read_allocation(path: str | PathLike) -> Allocation:
    """(host, slots) from an Open MPI hostfile or MPICH machinefile
    ('host', 'host:N', 'host slots=N'). A host on several bare lines gains a
    slot per line (one line per rank, as machinefiles have it); listed again
    where a count is given, it is refused with 'path:line'."""
    return read_hostfile(path)


_RANGE = re.compile(r"(\d+)(?:-(\d+))?")


def expand_nodelist(text: str) -> list[str]:
    """Slurm's compressed host list: 'node[01-04,07],gpu3' -> node01 ... gpu3
    (zero padding kept; several groups in a name, 'r[1-2]n[1-2]', expand
    left group outermost, as Slurm does). Duplicates are an error."""
    names, depth, start = [], 0, 0
    for i, c in enumerate(text + ","):
        if c == "[":
            if depth:
                raise UsageError(f"node list '{text}': nested '['")
            depth = 1
        elif c == "]":
            if not depth:
                raise UsageError(f"node list '{text}': ']' without '['")
            depth = 0
        elif c == "," and not depth:
            names.append(text[start:i].strip())
            start = i + 1
    if depth:
        raise UsageError(f"node list '{text}': '[' without ']'")
    hosts: list[str] = []
    for name in names:
        if not name:
            raise UsageError(f"node list '{text}': empty host name")
        parts = re.split(r"\[([^\]]*)\]", name)  # literal, group, literal, group, ..., literal
        choices = [[p] if k % 2 == 0 else _expand_group(p, text) for k, p in enumerate(parts)]
        hosts += ["".join(pick) for pick in itertools.product(*choices)]
    seen: set[str] = set()
    for h in hosts:
        if h in seen:
            raise UsageError(f"node list '{text}': host '{h}' appears twice")
        seen.add(h)
    return hosts


def _expand_group(group: str, text: str) -> list[str]:
    out: list[str] = []
    for part in group.split(","):
        m = _RANGE.fullmatch(part.strip())
        if not m:
            raise UsageError(f"node list '{text}': '{part}' is not N or N-M")
        lo, hi = m.group(1), m.group(2) or m.group(1)
        if int(hi) < int(lo):
            raise UsageError(f"node list '{text}': range {lo}-{hi} is empty")
        width = len(lo) if lo.startswith("0") else 0  # 'n[08-10]' keeps two digits
        out += [str(v).zfill(width) for v in range(int(lo), int(hi) + 1)]
    return out


def allocation_from_nodelist(text: str, slots: int = 1) -> Allocation:
    """A Slurm node list with the same number of slots on every node."""
    if slots < 1:
        raise UsageError(f"slots per node must be at least 1, got {slots}")
    return [(h, slots) for h in expand_nodelist(text)]


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
    try:
        hosts = expand_nodelist(nodelist)
    except RankwiseError as exc:  # say where the list came from
        raise RankwiseError(f"SLURM_JOB_NODELIST: {exc}") from None
    tasks = env.get("SLURM_TASKS_PER_NODE")
    slots = parse_tasks_per_node(tasks, len(hosts)) if tasks else [1] * len(hosts)
    return list(zip(hosts, slots))


