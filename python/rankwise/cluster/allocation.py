"""The nodes a job may run on, with their slots: from a hostfile, a Slurm
node list, or the Slurm job's environment."""

from __future__ import annotations

import itertools
import os
import re
from os import PathLike

from rankwise.util.errors import RankwiseError, UsageError, file_error
from rankwise.cluster.hostfile import read_hostfile
from rankwise.util.numbers import bounded_int, shown

Allocation = list[tuple[str, int]]

# Nodes in one allocation. A mapping holds N x N arrays of the network
# (8192 nodes: 512 MiB each), and a model of more nodes could not have been
# probed (N^2 pairs); a node list is counted against this before it is
# expanded, so 'n[0-99999999]' is refused at once, not after minutes.
MAX_NODES = 8192


def read_allocation(path: str | PathLike) -> Allocation:
    """(host, slots) from an Open MPI hostfile or MPICH machinefile
    ('host', 'host:N', 'host slots=N'). A host on several bare lines gains a
    slot per line (one line per rank, as machinefiles have it); listed again
    where a count is given, it is refused with 'path:line'."""
    hosts = read_hostfile(path)
    if len(hosts) > MAX_NODES:
        raise file_error(path, None, f"{len(hosts)} hosts: an allocation has at most {MAX_NODES} nodes")
    return hosts


_RANGE = re.compile(r"([0-9]+)(?:-([0-9]+))?")


def expand_nodelist(text: str) -> list[str]:
    """Slurm's compressed host list: 'node[01-04,07],gpu3' -> node01 ... gpu3
    (zero padding kept; several groups in a name, 'r[1-2]n[1-2]', expand
    left group outermost, as Slurm does). Duplicates are an error."""
    names, depth, start = [], 0, 0
    for i, c in enumerate(text + ","):
        if c == "[":
            if depth:
                raise UsageError(f"node list '{shown(text, 80)}': nested '['")
            depth = 1
        elif c == "]":
            if not depth:
                raise UsageError(f"node list '{shown(text, 80)}': ']' without '['")
            depth = 0
        elif c == "," and not depth:
            names.append(text[start:i].strip())
            start = i + 1
    if depth:
        raise UsageError(f"node list '{shown(text, 80)}': '[' without ']'")
    hosts: list[str] = []
    split = []
    for name in names:
        if not name:
            raise UsageError(f"node list '{shown(text, 80)}': empty host name")
        parts = re.split(r"\[([^\]]*)\]", name)  # literal, group, literal, group, ..., literal
        groups = [_ranges(p, text) if k % 2 else None for k, p in enumerate(parts)]
        split.append((parts, groups))
    # Counted before expanding: ranges hold up to 10^18 names.
    count = 0
    for parts, groups in split:
        size = 1
        for ranges in filter(None, groups):
            size *= sum(hi - lo + 1 for lo, hi, _ in ranges)
        count += size
        if count > MAX_NODES:
            raise UsageError(f"node list '{shown(text, 80)}' names more than {MAX_NODES} nodes, "
                             "the most an allocation may have")
    for parts, groups in split:
        choices = [[p] if ranges is None else _expand(ranges) for p, ranges in zip(parts, groups)]
        hosts += ["".join(pick) for pick in itertools.product(*choices)]
    seen: set[str] = set()
    for h in hosts:
        if h in seen:
            raise UsageError(f"node list '{shown(text, 80)}': host '{shown(h)}' appears twice")
        seen.add(h)
    return hosts


def _ranges(group: str, text: str) -> list[tuple[int, int, int]]:
    """(lo, hi, zero-padded width) of each 'N' or 'N-M' of a bracket group."""
    out = []
    for part in group.split(","):
        m = _RANGE.fullmatch(part.strip())
        if not m:
            raise UsageError(f"node list '{shown(text, 80)}': '{shown(part)}' is not N or N-M")
        lo_text, hi_text = m.group(1), m.group(2) or m.group(1)
        try:
            lo, hi = bounded_int(lo_text, 10**18), bounded_int(hi_text, 10**18)
        except ValueError:
            raise UsageError(f"node list '{shown(text, 80)}': '{shown(part)}' has more than 18 digits") from None
        if hi < lo:
            raise UsageError(f"node list '{shown(text, 80)}': range {lo_text}-{hi_text} is empty")
        width = len(lo_text) if lo_text.startswith("0") else 0  # 'n[08-10]' keeps two digits
        out.append((lo, hi, width))
    return out


def _expand(ranges: list[tuple[int, int, int]]) -> list[str]:
    return [str(v).zfill(width) for lo, hi, width in ranges for v in range(lo, hi + 1)]


def allocation_from_nodelist(text: str, slots: int = 1) -> Allocation:
    """A Slurm node list with the same number of slots on every node."""
    if slots < 1:
        raise UsageError(f"slots per node must be at least 1, got {slots}")
    return [(h, slots) for h in expand_nodelist(text)]


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
        hosts = expand_nodelist(nodelist)
    except RankwiseError as exc:  # say where the list came from
        raise RankwiseError(f"SLURM_JOB_NODELIST: {exc}") from None
    tasks = env.get("SLURM_TASKS_PER_NODE")
    slots = parse_tasks_per_node(tasks, len(hosts)) if tasks else [1] * len(hosts)
    return list(zip(hosts, slots))


