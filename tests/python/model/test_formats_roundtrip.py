"""Round-trip properties of the file formats (docs/reference/formats.md, "Bounds" and
"Texts"), for the model (.rwm) and the communication matrix (.rwc, .npz):

- whatever a writer accepts reads back equal (to the format's precision:
  ten significant digits, timestamps to the millisecond);
- whatever a writer refuses, the reader refuses too when it finds it in a
  file (the value is put where the writer would have written it);
- whatever a reader accepts, the writer writes back.

Values are drawn at the edges: huge integers, NaN, infinities, 1e300,
subnormals, control characters, lone surrogates, bytes that are not UTF-8.
"""

from __future__ import annotations

import math
import os
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from rankwise.traffic.collective_calls import CollectiveCall
from rankwise.util.errors import RankwiseError
from rankwise.traffic.matrix import CommMatrix
from rankwise.model.model import MEASURED, MISSING, UNPROBED, Link, Model, Spread

# RANKWISE_EXAMPLES=5000 for a deeper run than the suite's.
SETTINGS = settings(max_examples=int(os.environ.get("RANKWISE_EXAMPLES", 150)), deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])

# ------------------------------------------------------------------ values
EXTREME_FLOATS = [0.0, -0.0, 5e-324, 1e-320, 1e-9, 1.0, 999.9999, 1e3, 1000.0000001, 1e9, 1e300,
                  -1e-12, -1.0, 9.2e18, 32503680000.0, 32503680001.0, math.inf, -math.inf, math.nan]
floats = st.one_of(st.sampled_from(EXTREME_FLOATS), st.floats(allow_nan=True, allow_infinity=True),
                   st.floats(0, 2e3))
EXTREME_INTS = [0, 1, -1, 2**31 - 1, 2**31, -2**31, -2**31 - 1, 3 * 10**9, 2**40, 2**40 + 1,
                2**63 - 1, 2**63, 2**64 + 5, 10**30]
ints = st.one_of(st.sampled_from(EXTREME_INTS), st.integers(-2**65, 2**65), st.integers(0, 100))
ODD_TEXTS = ["", "-", "a", "a b", " a", "a ", "a\tb", "a\rb", "a\nb", "a\x00b", "a\x7fb", "#", "a#b",
             "café", "nœud", "\udc80", "\ud800x", "x" * 255, "é" * 128, "x" * 256, "\u00a0x", "a  b"]
texts = st.one_of(st.sampled_from(ODD_TEXTS), st.text(max_size=40),
                  st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=300))


BLANKS = " \t\r\n"  # what readers trim around a text and between fields

# ------------------------------------------------------------------- model
def base_model() -> Model:
    """Two nodes, both pairs measured, node 0's intra figures measured."""
    m = Model.empty(["a", "b"], [8, 1024], ranks_per_node=[2, 1])
    m.state[0, 1], m.state[1, 0] = MEASURED, MISSING
    m.alpha[0, 1], m.beta[0, 1], m.measured_at[0, 1] = 2e-6, 1e-10, 1.79e9
    m.measured_at[1, 0] = 1.79e9 + 1
    m.rtt_min[0, 1], m.rtt_median[0, 1], m.rtt_max[0, 1] = [4e-6, 1e-5], [4.1e-6, 1.1e-5], [5e-6, 2e-5]
    m.jitter[0, 1], m.samples[0, 1] = [0.2, 0.5], [15, 15]
    m.intra_state[0] = MEASURED
    m.intra_alpha[0], m.intra_beta[0] = 2e-7, 2e-11
    m.intra_median[0], m.intra_min[0], m.intra_max[0] = [4e-7, 5e-7], [4e-7, 5e-7], [4e-7, 5e-7]
    m.intra_jitter[0], m.intra_samples[0] = [0.0, 0.0], [15, 15]
    m.source, m.created, m.duration = "unit", 1.79e9, 12.5
    # Structure (format 2): node 0's overhead and NIC caps, a knee, the
    # measured pair's large-message fit, two groups and a link out of 0.
    m.overhead[0], m.inject[0], m.eject[0] = 1e-6, 1.25e10, 1.2e10
    m.duplex[0] = 1.3e10
    m.knee, m.alpha_large[0, 1], m.beta_large[0, 1] = 65536, 3e-6, 9e-11
    m.group_of[:] = [0, 1]
    m.links = [Link("up-0", 5e10, (0,), None)]
    # Format 5: the up link read at 4 separate times.
    m.spreads = [Spread("up-0", 4e10, 5e10, 6.5e10, 0.02, 4)]
    return m


def assert_same_model(a: Model, b: Model) -> None:
    """Equal to the format's precision; figures the format does not hold
    (unprobed pairs, statistics without samples) are left out."""
    assert a.names == b.names and a.source == b.source
    assert np.asarray(a.sizes).tolist() == b.sizes.tolist()
    assert np.asarray(a.ranks_per_node).tolist() == b.ranks_per_node.tolist()
    assert a.settings.mode == b.settings.mode
    for key in ("repetitions", "rounds", "warmup"):
        assert getattr(a.settings, key) == getattr(b.settings, key)
    for key in ("timeout", "time_budget"):
        assert close(getattr(a.settings, key), getattr(b.settings, key))
    assert close(a.created, b.created, atol=HALF_MS) and close(a.duration, b.duration)
    np.testing.assert_array_equal(a.state, b.state)
    np.testing.assert_array_equal(a.intra_state, b.intra_state)
    kept = a.state != UNPROBED
    for key in ("alpha", "beta"):
        assert all(map(close, getattr(a, key)[kept], getattr(b, key)[kept])), key
    assert all(close(x, y, atol=HALF_MS) for x, y in zip(a.measured_at[kept], b.measured_at[kept]))
    stats = kept[..., None] & (a.samples > 0)
    for key in ("rtt_min", "rtt_median", "rtt_max", "jitter", "samples"):
        assert all(map(close, getattr(a, key)[stats], getattr(b, key)[stats])), key
    intra = a.intra_state != UNPROBED
    for key in ("intra_alpha", "intra_beta"):
        assert all(map(close, getattr(a, key)[intra], getattr(b, key)[intra])), key
    for key in ("overhead", "inject", "eject", "alpha_large", "beta_large"):
        assert all(map(close, np.ravel(getattr(a, key)), np.ravel(getattr(b, key)))), key
    assert a.knee == b.knee and np.asarray(a.group_of).tolist() == b.group_of.tolist()
    assert [(k.name, k.from_groups, k.to_groups) for k in a.links] == \
        [(k.name, k.from_groups, k.to_groups) for k in b.links]
    assert all(close(x.capacity, y.capacity) for x, y in zip(a.links, b.links))
    assert [(k.name, k.times) for k in a.spreads] == [(k.name, k.times) for k in b.spreads]
    assert all(close(getattr(x, f), getattr(y, f)) for x, y in zip(a.spreads, b.spreads)
               for f in ("low", "median", "high", "noise"))


# Timestamps are written to the millisecond: off by half of one at most (a tie, 0.1875 -> 0.188),
# plus the binary rounding of that half.
HALF_MS = 5e-4 * (1 + 1e-9)


def close(x, y, atol=0.0) -> bool:
    x, y = float(x), float(y)
    if math.isnan(x) or math.isnan(y):
        return math.isnan(x) and math.isnan(y)
    return abs(x - y) <= max(atol, 5e-10 * max(abs(x), abs(y)))


def c_repr(v) -> str:
    """A value in a file, exactly (shortest round-trip digits; the writer's
    ten digits could round 1000.0000001 into range)."""
    return str(v) if isinstance(v, int) else repr(float(v))


def set_field(lines: list[str], prefix: str, k: int, text: str) -> list[str]:
    """Field k of the first line starting with prefix replaced by text."""
    for i, line in enumerate(lines):
        if line.startswith(prefix):
            fields = line.split(" ")
            fields[k] = text
            lines[i] = " ".join(fields)
            return lines
    raise AssertionError(f"no line starts with {prefix!r}")


def set_setting(lines: list[str], key: str, text: str) -> list[str]:
    for i, line in enumerate(lines):
        if line.startswith("settings "):
            lines[i] = re.sub(rf"\b{key}=\S+", f"{key}={text}", line)
            return lines
    raise AssertionError("no settings line")


# Each scalar of the model: how to set it, and where the writer puts it.
def _set(attr, index):
    def setter(m, v):
        values = getattr(m, attr).astype(object)  # room for any Python number
        values[index] = v
        setattr(m, attr, values)
    return setter


MODEL_NUMBERS = {
    "alpha": (_set("alpha", (0, 1)), lambda ls, t: set_field(ls, "pair 0 1 ", 4, t)),
    "beta": (_set("beta", (0, 1)), lambda ls, t: set_field(ls, "pair 0 1 ", 5, t)),
    "missing alpha": (_set("alpha", (1, 0)), lambda ls, t: set_field(ls, "pair 1 0 ", 4, t)),
    "measured_at": (_set("measured_at", (0, 1)), lambda ls, t: set_field(ls, "pair 0 1 ", 6, t)),
    "intra beta": (_set("intra_beta", 0), lambda ls, t: set_field(ls, "intra 0 ", 4, t)),
    "rtt median": (_set("rtt_median", (0, 1, 1)), lambda ls, t: set_field(ls, "rtt 0 1 1024 ", 5, t)),
    "jitter": (_set("jitter", (0, 1, 0)), lambda ls, t: set_field(ls, "rtt 0 1 8 ", 7, t)),
    "overhead": (_set("overhead", 0), lambda ls, t: set_field(ls, "overhead 0 ", 2, t)),
    "inject": (_set("inject", 0), lambda ls, t: set_field(ls, "nic 0 ", 2, t)),
    "alpha large": (_set("alpha_large", (0, 1)), lambda ls, t: set_field(ls, "pair-large 0 1 ", 3, t)),
    "capacity": (lambda m, v: setattr(m, "links", [Link("up-0", v, (0,), None)]),
                 lambda ls, t: set_field(ls, "link ", 2, t)),
    "created": (lambda m, v: setattr(m, "created", v), lambda ls, t: set_field(ls, "created ", 1, t)),
    "duration": (lambda m, v: setattr(m, "duration", v), lambda ls, t: set_field(ls, "duration ", 1, t)),
    "timeout": (lambda m, v: setattr(m.settings, "timeout", v), lambda ls, t: set_setting(ls, "timeout", t)),
    "time_budget": (lambda m, v: setattr(m.settings, "time_budget", v),
                    lambda ls, t: set_setting(ls, "time_budget", t)),
}
MODEL_INTS = {
    "repetitions": (lambda m, v: setattr(m.settings, "repetitions", v),
                    lambda ls, t: set_setting(ls, "repetitions", t)),
    "rounds": (lambda m, v: setattr(m.settings, "rounds", v), lambda ls, t: set_setting(ls, "rounds", t)),
    "warmup": (lambda m, v: setattr(m.settings, "warmup", v), lambda ls, t: set_setting(ls, "warmup", t)),
    "ranks": (_set("ranks_per_node", 1), lambda ls, t: set_field(ls, "node 1 ", 3, t)),
    "samples": (_set("samples", (0, 1, 0)), lambda ls, t: set_field(ls, "rtt 0 1 8 ", 8, t)),
    "knee": (lambda m, v: setattr(m, "knee", v), lambda ls, t: set_field(ls, "knee ", 1, t)),
    "group": (_set("group_of", 1), lambda ls, t: set_field(ls, "group 1 ", 2, t)),
    "size": (lambda m, v: setattr(m, "sizes", [8, v]),
             lambda ls, t: set_field(ls, "sizes ", 2, t)),
}
MODEL_TEXTS = {
    "name": (lambda m, v: m.names.__setitem__(1, v), lambda ls, t: set_field(ls, "node 1 ", 2, t)),
    "source": (lambda m, v: setattr(m, "source", v), lambda ls, t: set_field(ls, "source ", 1, t)),
}


def check_model_value(tmp_path: Path, setter, place, value, text: str, trimmed: bool = False) -> None:
    """The writer takes value and it reads back equal; or the writer
    refuses it (naming the file, writing nothing) and the reader refuses
    `text` where the writer would have put it. A text with blanks or a line
    end at its ends (`trimmed`) may instead read back trimmed, which the
    writer takes: readers trim what surrounds a text (docs/reference/formats.md)."""
    m = base_model()
    path = tmp_path / "m.rwm"
    path.unlink(missing_ok=True)
    try:
        setter(m, value)
        m.save(path)
    except RankwiseError as exc:
        assert str(exc).startswith(f"{path}: cannot write: "), exc
        assert not path.exists()
        base_model().save(path)
        lines = path.read_text().split("\n")
        raw = "\n".join(place(lines, text)).encode("utf-8", "surrogatepass")
        path.write_bytes(raw)
        if trimmed and isinstance(value, str) and value != value.strip(BLANKS):
            try:
                loaded = Model.load(path)
            except RankwiseError:
                return
            loaded.save(tmp_path / "again.rwm")  # trimmed: the writer takes it
            assert value.strip(BLANKS) in (loaded.source, loaded.names[1])
            return
        with pytest.raises(RankwiseError, match=rf"^{re.escape(str(path))}:\d+: "):
            Model.load(path)
        return
    assert_same_model(m, Model.load(path))


@pytest.mark.parametrize("field", sorted(MODEL_NUMBERS))
@SETTINGS
@given(value=floats)
@example(value=1e300)
@example(value=math.nan)
@example(value=-1.0)
def test_model_numbers(tmp_path, field, value):
    setter, place = MODEL_NUMBERS[field]
    check_model_value(tmp_path, setter, place, value, c_repr(value))


@pytest.mark.parametrize("field", sorted(MODEL_INTS))
@SETTINGS
@given(value=ints)
@example(value=3 * 10**9)
def test_model_integers(tmp_path, field, value):
    setter, place = MODEL_INTS[field]
    check_model_value(tmp_path, setter, place, value, c_repr(value))


@pytest.mark.parametrize("field", sorted(MODEL_TEXTS))
@SETTINGS
@given(value=texts)
@example(value="a\xff")
def test_model_texts(tmp_path, field, value):
    setter, place = MODEL_TEXTS[field]
    check_model_value(tmp_path, setter, place, value, value, trimmed=True)


def test_model_timestamps_beyond_datetime_are_refused(tmp_path):
    """created = 1e300 or 9.2e18 used to reach `show` (OverflowError)."""
    for value in (1e300, 9.2e18):
        m = base_model()
        m.save(tmp_path / "m.rwm")
        text = (tmp_path / "m.rwm").read_text().replace("created 1790000000.000", f"created {value:g}")
        (tmp_path / "m.rwm").write_text(text)
        with pytest.raises(RankwiseError, match=r"m\.rwm:2: 'created': field 1: timestamp .* is outside"):
            Model.load(tmp_path / "m.rwm")


def test_model_node_name_not_utf8_is_refused(tmp_path):
    """`node 0 a\\xff 1` used to crash show/map with UnicodeDecodeError."""
    path = tmp_path / "m.rwm"
    path.write_bytes(b"rankwise-model 1\nsizes 8\nnodes 1\nnode 0 a\xff 1\n")
    with pytest.raises(RankwiseError, match=r"m\.rwm:4: node 0: the name is not valid UTF-8"):
        Model.load(path)


# Any file the reader accepts, the writer writes back and it reads the same.
MODEL_LINE_EDITS = st.sampled_from(["created", "source", "duration", "settings", "sizes", "nodes", "node 0",
                                    "node 1", "intra 0", "intra-rtt 0", "pair 0 1", "rtt 0 1", "pair 1 0",
                                    "knee", "overhead 0", "nic 0", "group 0", "group 1", "pair-large 0 1",
                                    "link", "capacity-spread", "duplex 0"])


@SETTINGS
@given(prefix=MODEL_LINE_EDITS, k=st.integers(0, 9),
       token=st.one_of(st.sampled_from(["nan", "-", "1e300", "-0", "0x1p3", "1e-400", "3e9", "+5", "é", "#",
                                        "\xff", "measured", "missing", "2147483648", ""]),
                       st.text(max_size=8)))
def test_model_reader_output_is_writable(tmp_path, prefix, k, token):
    path = tmp_path / "m.rwm"
    base_model().save(path)
    lines = path.read_text().split("\n")
    target = next((i for i, line in enumerate(lines) if line.startswith(prefix + " ")), None)
    assume(target is not None)
    fields = lines[target].split(" ")
    fields[min(k, len(fields) - 1)] = token
    lines[target] = " ".join(fields)
    path.write_bytes("\n".join(lines).encode("utf-8", "surrogatepass"))
    try:
        m = Model.load(path)
    except RankwiseError as exc:
        assert str(exc).startswith(str(path)) and "\n" not in str(exc)
        return
    again = tmp_path / "again.rwm"
    m.save(again)
    assert_same_model(m, Model.load(again))


# ------------------------------------------------------------------ matrix
def base_matrix(**kw) -> CommMatrix:
    return CommMatrix(4, [0, 1, 3], [1, 2, 3], [1, 5, 0], [8, 0, 7], **kw)


def assert_same_matrix(a: CommMatrix, b: CommMatrix) -> None:
    assert a == b
    assert (a.source, a.pattern) == (b.source, b.pattern)


@pytest.mark.parametrize("suffix", [".rwc", ".npz"])
@pytest.mark.parametrize("field", ["source", "pattern"])
@SETTINGS
@given(value=texts)
@example(value="a\rb")
def test_matrix_texts(tmp_path, suffix, field, value):
    path = tmp_path / f"m{suffix}"
    path.unlink(missing_ok=True)
    try:
        m = base_matrix(**{field: value})
        m.save(path)
    except RankwiseError:
        assert not path.exists()
        # Put the text where the writer would have: the reader refuses it too.
        if suffix == ".rwc":
            base_matrix(**{field: "placeholder"}).save(path)
            raw = path.read_bytes().replace(b"placeholder", value.encode("utf-8", "surrogatepass"))
            path.write_bytes(raw)
            if value != value.strip(BLANKS) or value == "":
                # Blanks at the ends are trimmed (documented): what is read
                # is then something else, which the writer takes.
                try:
                    loaded = CommMatrix.load(path)
                except RankwiseError:
                    return
                assert getattr(loaded, field) != value
                loaded.save(tmp_path / "again.rwc")
                return
            with pytest.raises(RankwiseError, match=rf"^{re.escape(str(path))}:\d+: "):
                CommMatrix.load(path)
        else:
            arrays = dict(format=np.array("rankwise-matrix 1"), n_ranks=np.int64(4),
                          src=np.array([0], np.int32), dst=np.array([1], np.int32),
                          msgs=np.array([1], np.int64), bytes=np.array([8], np.int64))
            arrays[field] = np.array(value)
            with open(path, "wb") as f:
                np.savez(f, **arrays)
            if str(arrays[field]) != value:
                # numpy's fixed-width strings drop trailing NULs: the file
                # holds another text, which the writer must take.
                try:
                    loaded = CommMatrix.load(path)
                except RankwiseError:
                    return
                loaded.save(tmp_path / "again.npz")
                return
            with pytest.raises(RankwiseError, match=rf"^{re.escape(str(path))}: "):
                CommMatrix.load(path)
        return
    assert_same_matrix(m, CommMatrix.load(path))


@pytest.mark.parametrize("suffix", [".rwc", ".npz"])
@SETTINGS
@given(n_ranks=ints, count=ints, rank=ints)
@example(n_ranks=4, count=2**63 - 1, rank=0)
def test_matrix_numbers(tmp_path, suffix, n_ranks, count, rank):
    path = tmp_path / f"m{suffix}"
    path.unlink(missing_ok=True)
    try:
        m = CommMatrix(n_ranks, [0, rank], [rank, 0], [count, 1], [1, count])
        m.save(path)
    except RankwiseError:
        assert not path.exists()
        if suffix == ".rwc":
            # The same numbers in a file: refused by the reader too.
            path.write_text(f"rankwise-matrix 1\nranks {n_ranks}\n0 {rank} {count} 1\n{rank} 0 1 {count}\n")
            with pytest.raises(RankwiseError, match=rf"^{re.escape(str(path))}:\d+: "):
                CommMatrix.load(path)
        return
    assert_same_matrix(m, CommMatrix.load(path))


@SETTINGS
@given(line=st.integers(0, 5), token=st.one_of(
    st.sampled_from(["-1", "+1", "1e3", "99999999999999999999", "9223372036854775807", "67108865", "\r",
                     "a\rb", "é", "\xff", "#", "0", ""]), st.text(max_size=6)))
def test_matrix_reader_output_is_writable(tmp_path, line, token):
    path = tmp_path / "m.rwc"
    base_matrix(source="src", pattern="pat").save(path)
    lines = path.read_text().split("\n")
    fields = lines[line].split(" ")
    fields[-1] = token
    lines[line] = " ".join(fields)
    path.write_bytes("\n".join(lines).encode("utf-8", "surrogatepass"))
    try:
        m = CommMatrix.load(path)
    except RankwiseError as exc:
        assert str(exc).startswith(str(path)) and "\n" not in str(exc)
        return
    for suffix in (".rwc", ".npz"):
        again = tmp_path / f"again{suffix}"
        m.save(again)
        assert_same_matrix(m, CommMatrix.load(again))


# ------------------------------------------------------- collective calls
OPS = ["bcast", "reduce", "allreduce", "allgather", "gather", "scatter", "alltoall", "barrier", ""]
counts = st.one_of(st.sampled_from([0, 1, -1, 2**31, 2**62, 2**63 - 1, 2**63]), st.integers(0, 5))
members = st.one_of(st.none(), st.lists(st.one_of(st.integers(0, 7), st.sampled_from([-1, 8, 2**31])),
                                        max_size=9).map(tuple))
calls = st.tuples(st.sampled_from(OPS), counts, counts, st.one_of(st.integers(0, 3), counts), members)


def call_lines(n_ranks: int, raw, dropped: int) -> str:
    """The text a writer would make of raw calls (no canonical order)."""
    comms, lines = [], []
    for op, nbytes, ncalls, root, ranks in raw:
        comm = "world"
        if ranks is not None:
            comm = str(len(comms))
            comms.append(f"comm {comm} " + " ".join(map(str, ranks)))
        lines.append(f"coll {op} {nbytes} {ncalls} {root} {comm}")
    lines.append(f"coll-dropped {dropped}")
    return f"rankwise-matrix 2\nranks {n_ranks}\n" + "\n".join(comms + lines) + "\n0 1 1 8\n"


@pytest.mark.parametrize("suffix", [".rwc", ".npz"])
@SETTINGS
@given(n_ranks=st.integers(2, 8), raw=st.lists(calls, max_size=6), dropped=counts)
@example(n_ranks=4, raw=[("bcast", 8, 2**63 - 1, 0, None), ("bcast", 8, 1, 0, (0, 1, 2, 3))], dropped=0)
@example(n_ranks=8, raw=[("gather", 0, 3, 2, (7, 5, 3, 1)), ("allreduce", 16, 1, 0, (7, 5, 3, 1))], dropped=2)
def test_matrix_collectives(tmp_path, suffix, n_ranks, raw, dropped):
    """Calls the constructor takes read back equal, in canonical order; the
    calls it refuses, the reader refuses too (path:line, one line)."""
    path = tmp_path / f"m{suffix}"
    path.unlink(missing_ok=True)
    try:
        records = [CollectiveCall(op, b, c, r, ranks) for op, b, c, r, ranks in raw]
        m = CommMatrix(n_ranks, [0], [1], [1], [8], collectives=records, collectives_dropped=dropped)
        m.save(path)
    except RankwiseError as exc:
        assert "\n" not in str(exc) and not path.exists()
        if suffix == ".rwc":
            path.write_text(call_lines(n_ranks, raw, dropped))
            with pytest.raises(RankwiseError, match=rf"^{re.escape(str(path))}:(\d+:)? ") as err:
                CommMatrix.load(path)
            assert "\n" not in str(err.value)
        return
    loaded = CommMatrix.load(path)
    assert_same_matrix(m, loaded)
    assert loaded.collectives == m.collectives and loaded.collectives_dropped == dropped
    # canonical: the same calls in another order make the same matrix
    again = CommMatrix(n_ranks, [0], [1], [1], [8], collectives=list(reversed(records)),
                       collectives_dropped=dropped)
    assert again == m
    assert sum(c.calls for c in m.collectives) == sum(c.calls for c in records)
    world = tuple(range(n_ranks))
    assert all(c.ranks != world for c in m.collectives)  # every rank in order is written None
    if suffix == ".rwc":
        # the same calls written by hand read back the same
        path.write_text(call_lines(n_ranks, raw, dropped))
        assert CommMatrix.load(path) == m


def matrix_with_calls() -> CommMatrix:
    return CommMatrix(8, [0, 1], [1, 2], [1, 5], [8, 0], source="src", collectives=[
        CollectiveCall("bcast", 1024, 3, 1, (7, 5, 3, 1)), CollectiveCall("allreduce", 16, 2),
        CollectiveCall("alltoall", 4, 1, 0, (0, 1, 2, 3, 6))], collectives_dropped=4)


@SETTINGS
@given(line=st.integers(0, 12), field=st.integers(1, 6), token=st.one_of(
    st.sampled_from(["-1", "1e3", "99999999999999999999", "9223372036854775807", "world", "0-7", "3-1", "7",
                     "bcast", "scan", "#", "0", "", "0-"]), st.text(max_size=6)))
def test_matrix_collective_lines_reader_output_is_writable(tmp_path, line, field, token):
    """Any edit of a comm/coll line is refused with path:line, or read as a
    matrix the writer takes and reads back equal."""
    path = tmp_path / "m.rwc"
    matrix_with_calls().save(path)
    lines = path.read_text().split("\n")
    fields = lines[line].split(" ")
    fields[min(field, len(fields) - 1)] = token
    lines[line] = " ".join(fields)
    path.write_bytes("\n".join(lines).encode("utf-8", "surrogatepass"))
    try:
        m = CommMatrix.load(path)
    except RankwiseError as exc:
        assert str(exc).startswith(str(path)) and "\n" not in str(exc)
        return
    for suffix in (".rwc", ".npz"):
        again = tmp_path / f"again{suffix}"
        m.save(again)
        assert_same_matrix(m, CommMatrix.load(again))
