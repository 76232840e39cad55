"""Slurm hostlist expressions: 'node-[0-3,7],login1' <-> a list of names.

Names ending in a number that share a prefix (and a zero-padded width) are
joined into one bracket: node-0, node-1, node-2, node-7 -> node-[0-2,7]."""

from __future__ import annotations

import re
from collections import defaultdict

from rankwise.util.errors import RankwiseError

_SPECIAL = set("[],= \t#")
_ITEM = re.compile(r"([^\[\],]*)(?:\[([0-9,\-]+)\])?([^\[\],]*)")


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


def expand(expression: str) -> list[str]:
    """The names of a hostlist expression (one bracket per item)."""
    items, depth, cur = [], 0, ""
    for ch in expression:
        depth += ch == "["
        depth -= ch == "]"
        if ch == "," and depth == 0:
            items.append(cur)
            cur = ""
        else:
            cur += ch
    items.append(cur)
    names = []
    for item in items:
        m = _ITEM.fullmatch(item)
        if not item or not m:
            raise ValueError(f"'{item}' is not a hostlist item")
        prefix, ranges, suffix = m.groups()
        if ranges is None:
            names.append(item)
            continue
        for part in ranges.split(","):
            lo, _, hi = part.partition("-")
            width = len(lo) if lo.startswith("0") and len(lo) > 1 else 0
            if not lo.isdigit() or (hi and not hi.isdigit()) or (hi and int(hi) < int(lo)):
                raise ValueError(f"'{part}' is not a range in '{item}'")
            for x in range(int(lo), int(hi or lo) + 1):
                names.append(f"{prefix}{x:0{width}d}{suffix}")
    return names
