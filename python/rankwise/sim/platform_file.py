"""Files a simulated run is given: SimGrid platform XML (read) and SMPI hostfiles (read/write)."""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Sequence
from os import PathLike
from pathlib import Path
from xml.parsers import expat

from rankwise.errors import RankwiseError, file_error

Hosts = list[tuple[str, int]]

_INT = re.compile(r"[+-]?[0-9]+")  # int() alone would also take '1_0' and other digits


def write_atomic(path: str | PathLike, data: str | bytes) -> None:
    """Write a file so that readers see either the old or the new content, never a part."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = data.encode() if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; these files are meant to be shared
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


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
    try:
        data = p.read_bytes()
    except OSError as e:
        raise file_error(path, None, f"cannot read platform file: {e.strerror}") from None

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
            for r in parse_radical(radical, self.path, line):
                self._add(f"{prefix}{r}{suffix}", cores, line)

    def _required(self, attrs: dict[str, str], name: str, tag: str, line: int) -> str:
        value = attrs.get(name, "")
        if not value:
            raise file_error(self.path, line, f"<{tag}> without a '{name}' attribute")
        return value

    def _cores(self, attrs: dict[str, str], line: int) -> int:
        text = attrs.get("core", "1").strip()
        if not _INT.fullmatch(text):
            raise file_error(self.path, line, f"core count '{text}' is not an integer")
        cores = int(text)
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
    """Expand a cluster radical such as '0-15' or '0-3,8,10-11' into its numbers."""
    out: list[int] = []
    for part in text.split(","):
        part = part.strip()
        m = re.fullmatch(r"(\d+)(?:\s*-\s*(\d+))?", part)
        if not m:
            raise file_error(path, line, f"bad radical '{text}': '{part}' is not N or N-M")
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) is not None else lo
        if hi < lo:
            raise file_error(path, line, f"bad radical '{text}': range {lo}-{hi} is empty")
        out.extend(range(lo, hi + 1))
    return out


# --- hostfiles ----------------------------------------------------------------------------


def read_hostfile(path: str | PathLike) -> Hosts:
    """(host, slots) from an MPI hostfile.

    Accepted per line: 'host', 'host:N', 'host slots=N [max_slots=M]'; '#' starts a comment.
    A bare host repeated on several lines (one line per rank, as SMPI and MPICH
    machinefiles have it) adds one slot per line; a host listed twice where
    either line gives a slot count is an error.
    """
    try:
        text = Path(path).read_text()
    except OSError as e:
        raise file_error(path, None, f"cannot read hostfile: {e.strerror}") from None
    except UnicodeDecodeError:
        raise file_error(path, None, "hostfile is not text") from None

    hosts: Hosts = []
    first_line: dict[str, int] = {}
    explicit: dict[str, bool] = {}
    for lineno, raw in enumerate(text.splitlines(), 1):
        tokens = raw.split("#", 1)[0].split()
        if not tokens:
            continue
        name, colon, count = tokens[0].partition(":")
        if not name:
            raise file_error(path, lineno, f"missing host name in '{tokens[0]}'")
        slots = _positive(count, "slot count", path, lineno) if colon else 1
        max_slots = None
        for tok in tokens[1:]:
            key, eq, value = tok.partition("=")
            if not eq or key not in ("slots", "max_slots", "max-slots"):
                raise file_error(path, lineno, f"unexpected '{tok}' (expected slots=N or max_slots=N)")
            if colon and key == "slots":
                raise file_error(path, lineno, f"slots given twice for host '{name}'")
            if key == "slots":
                slots = _positive(value, "slots", path, lineno)
            else:
                max_slots = _positive(value, "max_slots", path, lineno)
        if max_slots is not None and max_slots < slots:
            raise file_error(path, lineno, f"max_slots={max_slots} is below slots={slots}")
        counted = bool(colon) or any(t.startswith("slots=") for t in tokens[1:])
        if name in first_line:
            if counted or explicit[name]:
                raise file_error(
                    path, lineno, f"duplicate host '{name}' (first listed on line {first_line[name]}); use slots=N"
                )
            k = next(k for k, (h, _) in enumerate(hosts) if h == name)
            hosts[k] = (name, hosts[k][1] + 1)
            continue
        first_line[name] = lineno
        explicit[name] = counted
        hosts.append((name, slots))
    if not hosts:
        raise file_error(path, None, "no host in hostfile")
    return hosts


def _positive(text: str, what: str, path: str | PathLike, line: int) -> int:
    if not _INT.fullmatch(text):
        raise file_error(path, line, f"{what} '{text}' is not an integer")
    value = int(text)
    if value <= 0:
        raise file_error(path, line, f"{what} must be positive, got {value}")
    return value


def write_hostfile(path: str | PathLike, hosts: Sequence[str]) -> None:
    """SMPI hostfile: one host name per line; SMPI gives rank k the k-th line."""
    for h in hosts:
        if not h or any(c.isspace() for c in h) or ":" in h or "#" in h:
            raise RankwiseError(f"cannot write host name {h!r} to a hostfile")
    write_atomic(path, "".join(f"{h}\n" for h in hosts))


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
