"""A simulated network that changes at a given simulated time, and the
platform as it stands at a later time.

`schedule` turns degradations (`rankwise sim platform --degrade-at T
--degrade ...`) into SimGrid step profiles: a `bandwidth_file` and a
`latency_file` per link, holding the link's value from time 0 and the
degraded one from T. `platform_at` copies a platform with every profile
shifted by a start time: smpirun always starts at simulated time 0, so a
probe that should start at time S (the next probe of `rankwise watch
--sim`) runs on the copy shifted by S, which the network it sees at its
time t is the original's at S + t."""

from __future__ import annotations

import dataclasses
import json
import math
import re
import shutil
from collections.abc import Sequence
from os import PathLike
from pathlib import Path

from rankwise.util.errors import RankwiseError, UsageError, file_error
from rankwise.util.files import write_atomic
from rankwise.sim.platform import Degraded, GeneratedPlatform, PlatformSpec, _num

_PROFILE_ATTR = re.compile(r'\b(bandwidth_file|latency_file)="([^"]*)"')


def check(spec: PlatformSpec, changes: Sequence[Degraded], at: float) -> None:
    """Refuse, before anything is written, what schedule() cannot do."""
    if not (math.isfinite(at) and at > 0):
        raise UsageError(f"--degrade-at must be a simulated time > 0 seconds, got {at:g}")
    dataclasses.replace(spec, degraded=(*spec.degraded, *changes))  # the spec's own checks of each item
    varying = {(v.kind, v.index) for v in spec.varying}
    for d in changes:
        if d.bw_factor != 1.0 and (d.kind, d.index) in varying:
            raise UsageError(f"--degrade-at: {d.kind} {d.index} already varies (--vary); "
                             "only its latency can change at a given time")


def schedule(gen: GeneratedPlatform, changes: Sequence[Degraded], at: float) -> list[dict]:
    """Degrade `changes` links of a generated platform from simulated time
    `at` on (bandwidth x bw_factor, latency x lat_factor of what the link has
    before), by profiles written beside its XML; the ground truth gets a
    "changes" list. Returns that list."""
    by_slot: dict[tuple[str, int], list] = {}  # a node's NICs (several on a torus) share its slot
    for link in gen.links:
        by_slot.setdefault((link.kind, link.index), []).append(link)
    check(gen.spec, changes, at)
    gt = gen.ground_truth
    text = gt.read_text()
    gt.unlink()  # the folder is incomplete until the ground truth is written again, last
    xml = gen.platform_xml.read_text()
    changes_out = []
    for d, link in ((d, link) for d in changes for link in _links_of(by_slot, d)):
        entry = {"at": at, "link": link.name, "kind": link.kind, "index": link.index}
        for attr, factor, before in (("bandwidth_file", d.bw_factor, link.bandwidth),
                                     ("latency_file", d.lat_factor, link.latency)):
            if factor == 1.0:
                continue
            name = f"profiles/{link.name}.{attr.split('_')[0]}-at.profile"
            after = before * factor
            write_atomic(gen.out_dir / name,
                         f"# {attr.split('_')[0]} of link {link.name}: {_num(before)} until {_num(at)} s, then {_num(after)}\n"
                         f"0 {_num(before)}\n{_num(at)} {_num(after)}\n")
            xml = _add_attribute(xml, link.name, attr, name)
            entry[attr.split("_")[0]] = {"before": before, "after": after}
        changes_out.append(entry)
    write_atomic(gen.platform_xml, xml)
    # One more top-level key, in the file's own one-key-per-line layout.
    body = text.rstrip()
    assert body.endswith("}")
    items = ",\n".join(json.dumps(c) for c in changes_out)
    write_atomic(gt, f'{body[:-1].rstrip()},\n"changes": [\n{items}\n]\n}}\n')
    return changes_out


def _links_of(by_slot: dict, d: Degraded) -> list:
    links = by_slot.get((d.kind, d.index))
    if not links:
        raise UsageError(f"--degrade {d.kind}:{d.index}: the platform has no such link")
    return links


def _add_attribute(xml: str, link: str, attr: str, value: str) -> str:
    tag = re.compile(r'<link\b[^>]*\bid="' + re.escape(link) + r'"[^>]*?(/?>)')
    m = tag.search(xml)
    if m is None:
        raise RankwiseError(f"platform.xml: no <link id=\"{link}\">")
    if f"{attr}=" in m.group(0):
        raise UsageError(f"link {link} already has a {attr}")
    end = m.start(1)
    return xml[:end].rstrip() + f' {attr}="{value}"' + (" " if m.group(1) == "/>" else "") + xml[end:]


def read_profile(path: Path) -> tuple[list[tuple[float, float]], float | None]:
    """(time, value) events and the LOOPAFTER delay (None: not periodic)."""
    events, loop = [], None
    try:
        lines = path.read_text().splitlines()
    except OSError as exc:
        raise file_error(path, None, f"cannot read profile: {exc.strerror}") from None
    for no, line in enumerate(lines, 1):
        words = line.split("#")[0].split()
        try:
            if not words:
                continue
            if words[0] == "LOOPAFTER" and len(words) == 2:
                loop = float(words[1])
            elif len(words) == 2:
                events.append((float(words[0]), float(words[1])))
            else:
                raise ValueError
        except ValueError:
            raise file_error(path, no, "expected 'TIME VALUE' or 'LOOPAFTER DELAY'") from None
    if not events or any(b[0] < a[0] for a, b in zip(events, events[1:])) or events[0][0] < 0:
        raise file_error(path, None, "a profile needs events at increasing times >= 0")
    return events, loop


def shift(events: list[tuple[float, float]], loop: float | None, start: float):
    """The profile seen from time `start` on, as a profile starting at 0."""
    if loop is not None:
        period = events[-1][0] + loop
        phase = math.fmod(start, period)
        before = [e for e in events if e[0] <= phase]
        now = before[-1][1] if before else events[-1][1]
        out = [(0.0, now)] + [(t - phase, v) for t, v in events if t > phase]
        out += [(t + period - phase, v) for t, v in events if t <= phase and t + period - phase > out[-1][0]]
        return out, period - out[-1][0]
    before = [e for e in events if e[0] <= start]
    out = ([(0.0, before[-1][1])] if before else []) + [(t - start, v) for t, v in events if t > start]
    return out, None


def cycle(platform_xml: str | PathLike) -> float | None:
    """The longest period of the platform's periodic profiles (a varying link's cycle); None when
    none repeats: the moments a job can start at differ only within it."""
    src = Path(platform_xml)
    periods = []
    for _, ref in set(_PROFILE_ATTR.findall(src.read_text())):
        events, loop = read_profile(Path(ref) if Path(ref).is_absolute() else src.parent / ref)
        if loop is not None:
            periods.append(events[-1][0] + loop)
    return max(periods, default=None)


def platform_at(platform_xml: str | PathLike, start: float, out_dir: str | PathLike) -> Path:
    """A copy of the platform (its XML and profiles) into out_dir as it stands
    from simulated time `start` on; returns the copy's XML."""
    src = Path(platform_xml)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    xml = src.read_text()
    for _, ref in set(_PROFILE_ATTR.findall(xml)):
        path = Path(ref) if Path(ref).is_absolute() else src.parent / ref
        events, loop = read_profile(path)
        events, loop = shift(events, loop, start) if start > 0 else (events, loop)
        lines = [f"# {ref} from simulated time {_num(start)} s on"]
        lines += [f"{_num(float(f'{t:.12g}'))} {_num(v)}" for t, v in events]
        if loop is not None:
            lines.append(f"LOOPAFTER {float(f'{loop:.12g}')!r}")
        target = out / ref if not Path(ref).is_absolute() else out / "profiles" / Path(ref).name
        write_atomic(target, "\n".join(lines) + "\n")
        if Path(ref).is_absolute():
            xml = xml.replace(f'"{ref}"', f'"profiles/{Path(ref).name}"')
    write_atomic(out / src.name, xml)
    hostfile = src.parent / "hostfile"
    if hostfile.is_file():
        shutil.copyfile(hostfile, out / "hostfile")
    return out / src.name
