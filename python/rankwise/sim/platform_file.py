"""SimGrid platform XML as users give it: the hosts it defines, and hostfiles for them."""

from __future__ import annotations

import re
from collections.abc import Sequence
from os import PathLike
from pathlib import Path
from xml.parsers import expat

from rankwise.util.errors import RankwiseError, file_error
from rankwise.cluster.hostfile import Hosts, write_hostfile
from rankwise.util.inputs import read_input
from rankwise.util.numbers import bounded_int, shown

_INT = re.compile(r"[+-]?[0-9]+")  # int() alone would also take '1_0' and other digits
MAX_CORES = 1 << 16  # cores of one host

# Hosts one platform file may define through cluster radicals: far beyond any
# simulation SMPI can run (its time grows with the cube of the ranks), and
# refused before a range is expanded, so that 'radical="0-99999999"' fails at
# once instead of building a list for minutes (docs/concepts/simulation.md).
MAX_RADICAL_HOSTS = 1_000_000


# --- platform XML -------------------------------------------------------------------------


def read_platform(path: str | PathLike) -> Hosts | None:
    """(host name, cores) of every host of a SimGrid platform, in file order.

    Hosts may be nested in zones; <cluster>/<cabinet> expand to prefix+radical+suffix.
    A C++ platform (.so, accepted by SMPI) gives None: its hosts are unknown until it runs.
    """
    p = Path(path)
    if p.suffix == ".so":
        if not p.is_file():
            raise file_error(path, None, "platform library not found")
        return None
    data = read_input(path, "platform file")  # a FIFO or a directory is refused, never waited on

    collector = _HostCollector(path)
    parser = expat.ParserCreate()
    collector.parser = parser
    parser.StartElementHandler = collector.start
    try:
        parser.Parse(data, True)
    except expat.ExpatError as e:
        raise file_error(path, e.lineno, f"XML syntax error: {expat.ErrorString(e.code)}") from None
    if not collector.hosts:
        raise file_error(path, None, "no host defined in the platform")
    return [(name, cores) for name, cores, _ in collector.hosts]


class _HostCollector:
    """Expat start-element handler gathering hosts with the line that defines them."""

    def __init__(self, path: str | PathLike):
        self.path = path
        self.parser: expat.XMLParserType | None = None
        self.hosts: list[tuple[str, int, int]] = []
        self.first_line: dict[str, int] = {}
        self.seen_root = False

    def start(self, tag: str, attrs: dict[str, str]) -> None:
        line = self.parser.CurrentLineNumber
        if not self.seen_root:
            self.seen_root = True
            if tag != "platform":
                raise file_error(self.path, line, f"root element is <{tag}>, expected <platform>")
            return
        if tag in ("host", "peer"):  # a <peer> (Vivaldi zones) is a host too
            self._add(self._required(attrs, "id", tag, line), self._cores(attrs, line), line)
        elif tag in ("cluster", "cabinet"):
            prefix = attrs.get("prefix", "")
            suffix = attrs.get("suffix", "")
            radical = self._required(attrs, "radical", tag, line)
            cores = self._cores(attrs, line)
            numbers = parse_radical(radical, self.path, line)
            if len(self.hosts) + len(numbers) > MAX_RADICAL_HOSTS:
                raise file_error(self.path, line, f"the platform defines more than {MAX_RADICAL_HOSTS:,} hosts "
                                                  "(the limit of a platform file)")
            for r in numbers:
                self._add(f"{prefix}{r}{suffix}", cores, line)

    def _required(self, attrs: dict[str, str], name: str, tag: str, line: int) -> str:
        value = attrs.get(name, "")
        if not value:
            raise file_error(self.path, line, f"<{tag}> without a '{name}' attribute")
        return value

    def _cores(self, attrs: dict[str, str], line: int) -> int:
        text = attrs.get("core", "1").strip()
        if not _INT.fullmatch(text):
            raise file_error(self.path, line, f"core count '{shown(text)}' is not an integer")
        try:
            cores = bounded_int(text, MAX_CORES)
        except ValueError:
            raise file_error(self.path, line, f"core count {shown(text)} is more than {MAX_CORES}") from None
        if cores <= 0:
            raise file_error(self.path, line, f"core count must be positive, got {cores}")
        return cores

    def _add(self, name: str, cores: int, line: int) -> None:
        if name in self.first_line:
            raise file_error(
                self.path, line, f"duplicate host '{name}' (first defined on line {self.first_line[name]})"
            )
        self.first_line[name] = line
        self.hosts.append((name, cores, line))


def parse_radical(text: str, path: str | PathLike = "<radical>", line: int | None = None) -> list[int]:
    """Expand a cluster radical such as '0-15' or '0-3,8,10-11' into its numbers
    (at most MAX_RADICAL_HOSTS of them)."""
    out: list[int] = []
    count = 0
    for part in text.split(","):
        part = part.strip()
        m = re.fullmatch(r"(\d+)(?:\s*-\s*(\d+))?", part)
        if not m:
            raise file_error(path, line, f"bad radical '{_short(text)}': '{_short(part)}' is not N or N-M")
        if max(len(g) for g in m.groups() if g is not None) > 100:  # int() refuses past 4,300 digits
            raise file_error(path, line, f"bad radical '{_short(text)}': a number of more than 100 digits")
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) is not None else lo
        if hi < lo:
            raise file_error(path, line, f"bad radical '{text}': range {lo}-{hi} is empty")
        count += hi - lo + 1
        if count > MAX_RADICAL_HOSTS:
            raise file_error(path, line, f"radical '{_short(text)}' names more than {MAX_RADICAL_HOSTS:,} hosts "
                                         "(the limit of a platform file)")
        out.extend(range(lo, hi + 1))
    return out


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def hostfile_for(
    platform_nodes: Sequence[tuple[str, int]], ranks_per_node: int, path: str | PathLike | None = None
) -> list[str]:
    """Hostfile lines placing ranks_per_node consecutive ranks on each node (block placement).

    Written to path when given. Every node needs at least ranks_per_node cores.
    """
    if ranks_per_node < 1:
        raise RankwiseError(f"ranks per node must be at least 1, got {ranks_per_node}")
    short = [(name, cores) for name, cores in platform_nodes if cores < ranks_per_node]
    if short:
        name, cores = short[0]
        raise RankwiseError(
            f"{ranks_per_node} ranks per node do not fit: host '{name}' has {cores} core(s)"
            + (f" ({len(short)} such hosts)" if len(short) > 1 else "")
        )
    lines = [name for name, _ in platform_nodes for _ in range(ranks_per_node)]
    if path is not None:
        write_hostfile(path, lines)
    return lines
