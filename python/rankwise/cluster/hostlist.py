"""Slurm hostlist expressions: 'node-[0-3,7],login1' <-> a list of names; the one
parser of node lists (allocations, SLURM_JOB_NODELIST, topology.conf) and their writer.

Names ending in a number that share a prefix (and a zero-padded width) are
joined into one bracket: node-0, node-1, node-2, node-7 -> node-[0-2,7]."""

from __future__ import annotations

import itertools
import re
from collections import defaultdict

from rankwise.util.errors import RankwiseError, UsageError
from rankwise.util.numbers import bounded_int, shown

# Nodes in one allocation. A mapping holds N x N arrays of the network
# (8192 nodes: 512 MiB each), and a model of more nodes could not have been
# probed (N^2 pairs); a node list is counted against this before it is
# expanded, so 'n[0-99999999]' is refused at once, not after minutes.
MAX_NODES = 8192

_SPECIAL = set("[],= \t#")


def check_name(name: str) -> None:
    bad = sorted(_SPECIAL & set(name))
    if bad or not name:
        raise RankwiseError(f"node name '{name}' cannot be written in a Slurm hostlist "
                            f"(it holds {' '.join(repr(c) for c in bad) or 'nothing'})")


def _split(name: str) -> tuple[str, str | None]:
    prefix = name.rstrip("0123456789")
    return (prefix, name[len(prefix):]) if len(prefix) < len(name) else (name, None)


def compress(names: list[str]) -> str:
    """The shortest usual hostlist of `names` (order: first appearance of each prefix)."""
    runs: dict[tuple[str, int], list[int]] = defaultdict(list)
    plain: list[str] = []
    keys: list[object] = []
    for name in names:
        check_name(name)
        prefix, digits = _split(name)
        if digits is None:
            plain.append(name)
            keys.append(name)
            continue
        width = len(digits) if digits.startswith("0") and len(digits) > 1 else 0
        key = (prefix, width)
        if key not in runs:
            keys.append(key)
        runs[key].append(int(digits))
    out = []
    for key in keys:
        if isinstance(key, str):
            out.append(key)
            continue
        prefix, width = key
        numbers = sorted(set(runs[key]))
        fmt = (lambda x: f"{x:0{width}d}") if width else str
        if len(numbers) == 1:
            out.append(prefix + fmt(numbers[0]))
            continue
        parts, start = [], numbers[0]
        for prev, cur in zip(numbers, numbers[1:] + [None]):
            if cur != prev + 1:
                parts.append(fmt(start) if start == prev else f"{fmt(start)}-{fmt(prev)}")
                start = cur
        out.append(f"{prefix}[{','.join(parts)}]")
    return ",".join(out)


_RANGE = re.compile(r"([0-9]+)(?:-([0-9]+))?")


def expand(text: str) -> list[str]:
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
