"""`rankwise watch`: periodic, partial probes into a time series of models.

Each probe re-measures a share of the node pairs (`--pairs-fraction`), the
next slice of them in turn, merged into the previous model as `rankwise probe
--update --pairs` does, so every pair is refreshed every 1/F probes; the
first probe of a folder measures every pair. Each new model is compared
with the previous one (rankwise.model.diff) and listed in the folder's
index (docs/reference/formats.md "Watch index"), which a later `watch` into the same
folder continues.

Under `--sim` the interval is simulated time: the simulated clock runs on
through the probes (their duration) and the waits, nothing sleeps, and
each probe runs on the platform as it stands at that clock
(rankwise.sim.profiles.platform_at), so a platform that degrades at a given
time (`rankwise sim platform --degrade-at`) is seen degrading."""

from __future__ import annotations

import math
import os
import re
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rankwise.util.errors import RankwiseError, UsageError, file_error
from rankwise.util.files import remove_stale_temporaries_in, write_atomic
from rankwise.util.numbers import bounded_int, finite_float
from rankwise.model.model import MEASURED, Model
from rankwise.model.diff import ModelDiff, diff_models

INDEX = "index.tsv"
HEADER = "rankwise-watch 1"
COLUMNS = ("seq", "time", "model", "pairs", "changed", "links", "nodes", "sim_start", "sim_end")
_DURATION = re.compile(r"\s*([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?)\s*(s|m|h|d)?\s*", re.IGNORECASE)
_UNIT = {None: 1, "s": 1, "m": 60, "h": 3600, "d": 86400}
# What a series writes into its folder besides the index: only these are ever removed.
_MODEL_NAME = re.compile(r"model-([0-9]{4,9})-[0-9]{8}T[0-9]{6}Z\.rwm")
_PLOT_NAME = re.compile(r"change-([0-9]{4,9})\.png")
MAX_SEQ = 10**9 - 1
MAX_PAIRS = 1 << 40


def parse_every(text: str) -> float:
    """'10m', '30s', '2h', '1.5', '0' -> seconds."""
    m = _DURATION.fullmatch(text)
    if not m:
        raise UsageError(f"--every: '{text}' is not a duration like 30s, 10m or 2h")
    return float(m.group(1)) * _UNIT[m.group(2) and m.group(2).lower()]


@dataclass
class Entry:
    """One line of the index: a model of the series."""

    seq: int
    time: str  # UTC, ISO 8601, when the probe ended
    model: str  # file name inside the folder
    pairs: int  # pairs (re-)measured by this probe
    changed: int | None  # pairs changed since the previous model (None: the first)
    links: list[str]
    nodes: list[str]
    sim_start: float  # simulated clock at the probe's start and end (NaN: a real cluster)
    sim_end: float

    def line(self) -> str:
        def num(x: float) -> str:
            return "-" if math.isnan(x) else f"{x:.9g}"

        return "\t".join([str(self.seq), self.time, self.model, str(self.pairs),
                          "-" if self.changed is None else str(self.changed),
                          ",".join(self.links) or "-", ",".join(self.nodes) or "-",
                          num(self.sim_start), num(self.sim_end)])


def read_index(folder: Path) -> list[Entry]:
    """The entries of folder/index.tsv ([] when there is none); a damaged
    index is an error naming its line, never silently restarted."""
    path = folder / INDEX
    if not os.path.lexists(path):
        return []
    from rankwise.util.inputs import read_input

    data = read_input(path)  # a regular file (or a pipe): a FIFO or a directory is refused, never waited on
    try:
        lines = data.decode("utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise file_error(path, None, f"not a text file (byte {exc.start} is not UTF-8)") from None
    if not lines or lines[0].strip() != HEADER:
        raise file_error(path, 1, f"not a watch index (expected '{HEADER}')")
    entries: list[Entry] = []
    for no, line in enumerate(lines[1:], 2):
        if not line.strip() or line.startswith("#"):
            continue
        f = line.split("\t")
        try:
            if len(f) != len(COLUMNS):
                raise ValueError(f"{len(f)} fields, expected {len(COLUMNS)} ({' '.join(COLUMNS)})")
            entry = Entry(_count(f[0], "seq", MAX_SEQ), f[1], f[2], _count(f[3], "pairs", MAX_PAIRS),
                          None if f[4] == "-" else _count(f[4], "changed", MAX_PAIRS),
                          [] if f[5] == "-" else f[5].split(","), [] if f[6] == "-" else f[6].split(","),
                          _clock(f[7], "sim_start"), _clock(f[8], "sim_end"))
        except ValueError as exc:
            raise file_error(path, no, f"bad entry: {exc}") from None
        if entries and entry.seq != entries[-1].seq + 1:
            raise file_error(path, no, f"entry {entry.seq} follows {entries[-1].seq}")
        if "/" in entry.model or not (folder / entry.model).is_file():
            raise file_error(path, no, f"model {entry.model} is not in {folder}")
        entries.append(entry)
    return entries


def _count(text: str, field: str, maximum: int) -> int:
    """A whole number >= 0 of the index (seq >= 1)."""
    try:
        value = bounded_int(text, maximum)
    except ValueError as exc:
        raise ValueError(f"{field} {text[:24]!r} is {exc}") from None
    if value < (1 if field == "seq" else 0):
        raise ValueError(f"{field} {value} is below {1 if field == 'seq' else 0}")
    return value


def _clock(text: str, field: str) -> float:
    """A simulated clock of the index: '-' (a real cluster) or a finite number of seconds >= 0."""
    if text == "-":
        return float("nan")
    try:
        value = finite_float(text)
    except ValueError as exc:
        raise ValueError(f"{field} {text[:24]!r} is {exc}") from None
    if value < 0:
        raise ValueError(f"{field} {value:g} is negative")
    return value


def reconcile(folder: Path, entries: list[Entry]) -> list[str]:
    """Make the folder hold exactly the series its index lists: remove the models (and change
    heatmaps) of a step the index never listed (a probe stopped, killed or out of disk between
    writing its model and the index), and every temporary of a dead writer. Returns the names
    removed. Only the series' own naming is touched."""
    listed_models = {e.model for e in entries}
    listed_seqs = {e.seq for e in entries}
    removed = [p.name for p in remove_stale_temporaries_in(
        folder, lambda name: name == INDEX or bool(_MODEL_NAME.fullmatch(name) or _PLOT_NAME.fullmatch(name)))]
    try:
        names = sorted(p.name for p in folder.iterdir())
    except OSError as exc:
        raise RankwiseError(f"{folder}: cannot list: {exc.strerror}") from None
    for name in names:
        model, plot = _MODEL_NAME.fullmatch(name), _PLOT_NAME.fullmatch(name)
        if (model and name not in listed_models) or (plot and int(plot.group(1)) not in listed_seqs):
            path = folder / name
            if path.is_file() and not path.is_symlink():
                try:
                    path.unlink()
                except OSError as exc:
                    raise RankwiseError(f"{path}: not in the series' index, and cannot be removed: "
                                        f"{exc.strerror}") from None
                removed.append(name)
    return removed


def series_model(path: Path) -> Path:
    """A model of a watch series by a short name: DIR (its latest model) or
    DIR/SEQ (the SEQ-th); any other path is returned as it is."""
    if path.is_dir() and (path / INDEX).exists():
        entries = read_index(path)
        if not entries:
            raise RankwiseError(f"{path / INDEX}: the series has no model yet")
        return path / entries[-1].model
    if not path.exists() and path.name.isdigit() and (path.parent / INDEX).exists():
        entry = next((e for e in read_index(path.parent) if e.seq == int(path.name)), None)
        if entry is None:
            raise RankwiseError(f"{path}: the series in {path.parent} has no model {path.name}")
        return path.parent / entry.model
    return path


def write_index(folder: Path, entries: list[Entry]) -> None:
    text = [HEADER, "# " + "\t".join(COLUMNS)] + [e.line() for e in entries]
    write_atomic(folder / INDEX, "\n".join(text) + "\n")


def rotating_pairs(model: Model, fraction: float, turn: int) -> list[tuple[str, str]]:
    """The turn-th slice of ceil(fraction x pairs) ordered pairs, taken in
    turn round all of them (source-major order): every pair is re-measured
    once every ceil(1 / fraction) probes. (Not by measurement time: a
    simulated probe's times are its simulated clock.)"""
    n = model.n_nodes
    src, dst = np.nonzero(~np.eye(n, dtype=bool))
    total = src.size
    count = min(total, max(1, math.ceil(fraction * total - 1e-9)))
    picked = sorted({(turn * count + k) % total for k in range(count)})
    return [(model.names[src[k]], model.names[dst[k]]) for k in picked]


@dataclass
class Step:
    entry: Entry
    model: Model
    diff: ModelDiff | None


def _utc(t: float) -> tuple[str, str]:
    stamp = time.gmtime(t)
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", stamp), time.strftime("%Y%m%dT%H%M%SZ", stamp)


def _index_lists(folder: Path, model_name: str) -> bool:
    try:
        return f"\t{model_name}\t" in (folder / INDEX).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False


def _nodes_text(names) -> str:
    names = list(names)
    return f"{len(names)} nodes ({', '.join(names[:4])}{', ...' if len(names) > 4 else ''})"


class Watch:
    """A series of probes into one folder; `probe(pairs, update, output, start)`
    runs one probe and returns its model (the CLI gives it a simulated or a
    real cluster)."""

    def __init__(self, folder: Path, probe: Callable[..., Model], fraction: float = 1.0,
                 threshold: float = 0.10, simulated: bool = True, plot: bool = True,
                 nodes: list[str] | None = None):
        if not 0 < fraction <= 1:
            raise UsageError(f"--pairs-fraction must be in (0, 1], got {fraction:g}")
        if folder.exists() and not folder.is_dir():
            raise UsageError(f"{folder}: is not a folder (watch writes a series of models into a folder)")
        self.folder, self.probe, self.fraction = folder, probe, fraction
        self.threshold, self.simulated, self.plot = threshold, simulated, plot
        folder.mkdir(parents=True, exist_ok=True)
        self.entries = read_index(folder)
        self.removed = reconcile(folder, self.entries)  # the folder as its index says, before any probe
        self.previous = Model.load(folder / self.entries[-1].model) if self.entries else None
        if self.previous is not None and nodes is not None and set(nodes) != set(self.previous.names):
            raise UsageError(f"{folder}: its series was measured on {_nodes_text(self.previous.names)}; this "
                             f"probe would run on {_nodes_text(nodes)}: give the same nodes, or watch into "
                             "another folder")
        self.clock = self.entries[-1].sim_end if self.entries and simulated else 0.0
        if math.isnan(self.clock):
            raise RankwiseError(f"{folder / INDEX}: its series was probed on a real cluster; "
                                "continue it with --launcher, or watch a simulated one into another folder")

    def step(self) -> Step:
        """One probe, its comparison with the previous model, its index entry."""
        seq = self.entries[-1].seq + 1 if self.entries else 1
        # Turn 0 is the probe after the first (full) one: seq 2.
        pairs = rotating_pairs(self.previous, self.fraction, seq - 2) if self.previous is not None else None
        if pairs is not None and len(pairs) == self.previous.n_nodes * (self.previous.n_nodes - 1):
            pairs = None  # all of them: a full probe, merged all the same
        name_time = _utc(time.time())[1]
        model_name = f"model-{seq:04d}-{name_time}.rwm"
        start = self.clock
        update = self.folder / self.entries[-1].model if self.entries else None
        output, plot_path = self.folder / model_name, self.folder / f"change-{seq:04d}.png"
        try:
            model = self.probe(pairs=pairs, update=update, output=output, start=start)
            end = start + (model.duration if np.isfinite(model.duration) else 0.0) if self.simulated else float("nan")
            fresh = pairs if pairs is not None else [(x, y) for x in model.names for y in model.names if x != y]
            diff = diff_models(self.previous, model, self.threshold, fresh) if self.previous is not None else None
            if diff is not None and self.plot:
                from rankwise.report.diff_plot import plot_diff

                plot_diff(diff, plot_path, title=f"{self.entries[-1].model} -> {model_name}")
            measured = len(pairs) if pairs is not None else model.n_nodes * (model.n_nodes - 1)
            entry = Entry(seq, _utc(time.time())[0], model_name, measured,
                          None if diff is None else int(diff.changed.sum()),
                          [] if diff is None else [link.name for link in diff.links],
                          [] if diff is None else sorted({c.name for c in diff.nodes}, key=diff.names.index),
                          start if self.simulated else float("nan"), end)
            # The index is the series: written (atomically) after the model, and until it is, the
            # model is no part of it. Any stop before that removes the model (a SIGKILL leaves it
            # to the next run's reconcile()).
            write_index(self.folder, [*self.entries, entry])
        except BaseException:
            if _index_lists(self.folder, model_name):  # stopped just after the index was written
                raise
            for path in (output, plot_path):
                try:
                    path.unlink()
                except OSError:
                    pass
            raise
        self.entries.append(entry)
        self.previous, self.clock = model, end
        return Step(entry, model, diff)

    def wait(self, seconds: float, sleep: Callable[[float], None]) -> None:
        """The interval between probes: simulated time under --sim, else real."""
        if self.simulated:
            self.clock += seconds
        elif seconds > 0:
            sleep(seconds)


def sim_probe(platform: Path, options, nodes: int | None = None, hostfile: Path | None = None,
              show_progress: bool = True) -> Callable[..., Model]:
    """A probe of the simulated cluster as it stands at the watch's clock."""
    import dataclasses

    from rankwise.measure.probe import probe_sim
    from rankwise.sim.profiles import platform_at

    def probe(pairs, update, output, start):
        with tempfile.TemporaryDirectory(prefix="rankwise-watch-") as tmp:
            shifted = platform_at(platform, start, tmp)
            opts = dataclasses.replace(options, pairs=pairs, update=update, same_nodes=True)
            model = probe_sim(shifted, output, opts, nodes=nodes, hostfile=hostfile, show_progress=show_progress)
        model.source = f"smpi:{Path(platform).resolve()} at simulated {start:.6g} s"  # not the temporary copy
        model.save(output)
        return model

    return probe


def launcher_probe(launcher: str, options, hostfile: Path | None = None,
                   show_progress: bool = True) -> Callable[..., Model]:
    import dataclasses

    from rankwise.measure.probe import probe_launcher

    def probe(pairs, update, output, start):
        opts = dataclasses.replace(options, pairs=pairs, update=update, same_nodes=True)
        return probe_launcher(launcher, output, opts, hostfile=hostfile, show_progress=show_progress)

    return probe
