"""`rankwise watch`: periodic, partial probes into a time series of models.

Each probe re-measures a share of the node pairs (`--pairs-fraction`), the
next slice of them in turn, merged into the previous model as `rankwise probe
--update --pairs` does, so every pair is refreshed every 1/F probes; the
first probe of a folder measures every pair. Each new model is compared
with the previous one (rankwise.model_diff) and listed in the folder's
index (docs/formats.md "Watch index"), which a later `watch` into the same
folder continues.

Under `--sim` the interval is simulated time: the simulated clock runs on
through the probes (their duration) and the waits, nothing sleeps, and
each probe runs on the platform as it stands at that clock
(rankwise.sim.profiles.platform_at), so a platform that degrades at a given
time (`rankwise sim platform --degrade-at`) is seen degrading."""

from __future__ import annotations

import math
import re
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rankwise.errors import RankwiseError, UsageError, file_error
from rankwise.files import write_atomic
from rankwise.model import MEASURED, Model
from rankwise.model_diff import ModelDiff, diff_models

INDEX = "index.tsv"
HEADER = "rankwise-watch 1"
COLUMNS = ("seq", "time", "model", "pairs", "changed", "links", "nodes", "sim_start", "sim_end")
_DURATION = re.compile(r"\s*([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?)\s*(s|m|h|d)?\s*", re.IGNORECASE)
_UNIT = {None: 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


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
    if not path.exists():
        return []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise file_error(path, None, f"cannot read: {getattr(exc, 'strerror', None) or exc}") from None
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
            entry = Entry(int(f[0]), f[1], f[2], int(f[3]), None if f[4] == "-" else int(f[4]),
                          [] if f[5] == "-" else f[5].split(","), [] if f[6] == "-" else f[6].split(","),
                          float("nan") if f[7] == "-" else float(f[7]), float("nan") if f[8] == "-" else float(f[8]))
        except ValueError as exc:
            raise file_error(path, no, f"bad entry: {exc}") from None
        if entries and entry.seq != entries[-1].seq + 1:
            raise file_error(path, no, f"entry {entry.seq} follows {entries[-1].seq}")
        if "/" in entry.model or not (folder / entry.model).is_file():
            raise file_error(path, no, f"model {entry.model} is not in {folder}")
        entries.append(entry)
    return entries


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


class Watch:
    """A series of probes into one folder; `probe(pairs, update, output, start)`
    runs one probe and returns its model (the CLI gives it a simulated or a
    real cluster)."""

    def __init__(self, folder: Path, probe: Callable[..., Model], fraction: float = 1.0,
                 threshold: float = 0.10, simulated: bool = True, plot: bool = True):
        if not 0 < fraction <= 1:
            raise UsageError(f"--pairs-fraction must be in (0, 1], got {fraction:g}")
        if folder.exists() and not folder.is_dir():
            raise UsageError(f"{folder}: is not a folder (watch writes a series of models into a folder)")
        self.folder, self.probe, self.fraction = folder, probe, fraction
        self.threshold, self.simulated, self.plot = threshold, simulated, plot
        folder.mkdir(parents=True, exist_ok=True)
        self.entries = read_index(folder)
        self.previous = Model.load(folder / self.entries[-1].model) if self.entries else None
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
        model = self.probe(pairs=pairs, update=update, output=self.folder / model_name, start=start)
        end = start + (model.duration if np.isfinite(model.duration) else 0.0) if self.simulated else float("nan")
        fresh = pairs if pairs is not None else [(x, y) for x in model.names for y in model.names if x != y]
        diff = diff_models(self.previous, model, self.threshold, fresh) if self.previous is not None else None
        if diff is not None and self.plot:
            from rankwise.diff_plot import plot_diff

            plot_diff(diff, self.folder / f"change-{seq:04d}.png",
                      title=f"{self.entries[-1].model} -> {model_name}")
        measured = len(pairs) if pairs is not None else model.n_nodes * (model.n_nodes - 1)
        entry = Entry(seq, _utc(time.time())[0], model_name, measured,
                      None if diff is None else int(diff.changed.sum()),
                      [] if diff is None else [link.name for link in diff.links],
                      [] if diff is None else sorted({c.name for c in diff.nodes}, key=diff.names.index),
                      start if self.simulated else float("nan"), end)
        self.entries.append(entry)
        write_index(self.folder, self.entries)
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

    from rankwise.probe import probe_sim
    from rankwise.sim.profiles import platform_at

    def probe(pairs, update, output, start):
        with tempfile.TemporaryDirectory(prefix="rankwise-watch-") as tmp:
            shifted = platform_at(platform, start, tmp)
            opts = dataclasses.replace(options, pairs=pairs, update=update)
            model = probe_sim(shifted, output, opts, nodes=nodes, hostfile=hostfile, show_progress=show_progress)
        model.source = f"smpi:{Path(platform).resolve()} at simulated {start:.6g} s"  # not the temporary copy
        model.save(output)
        return model

    return probe


def launcher_probe(launcher: str, options, hostfile: Path | None = None,
                   show_progress: bool = True) -> Callable[..., Model]:
    import dataclasses

    from rankwise.probe import probe_launcher

    def probe(pairs, update, output, start):
        opts = dataclasses.replace(options, pairs=pairs, update=update)
        return probe_launcher(launcher, output, opts, hostfile=hostfile, show_progress=show_progress)

    return probe
