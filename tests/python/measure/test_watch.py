"""rankwise.measure.watch: the rotation of partial probes and the series' index."""

from __future__ import annotations

import copy
import math

import pytest

from rankwise.util.errors import RankwiseError, UsageError
from rankwise.model.model import Model
from rankwise.model.diff import diff_models
from rankwise.measure.watch import INDEX, Entry, parse_every, read_index, rotating_pairs, write_index


def test_parse_every():
    assert parse_every("10m") == 600 and parse_every("30s") == 30 and parse_every("2h") == 7200
    assert parse_every("0") == 0 and parse_every("1.5") == 1.5
    for bad in ("", "10 minutes", "-1s", "m"):
        with pytest.raises(UsageError, match="--every"):
            parse_every(bad)


@pytest.mark.parametrize("n, fraction", [(2, 1.0), (5, 0.25), (6, 0.3), (7, 0.5), (4, 0.01)])
def test_rotation_refreshes_every_pair_every_ceil_one_over_f_probes(n, fraction):
    model = Model.empty([f"n{i}" for i in range(n)], [8])
    total = n * (n - 1)
    per = math.ceil(fraction * total - 1e-9)
    turns = math.ceil(total / per)
    seen = [set(rotating_pairs(model, fraction, t)) for t in range(turns)]
    assert all(len(s) == per for s in seen)
    assert set().union(*seen) == {(a, b) for a in model.names for b in model.names if a != b}
    if total % per == 0:  # slices tile the pairs exactly: the cycle restarts where it began
        assert set(rotating_pairs(model, fraction, turns)) == seen[0]


def test_index_round_trip_and_damaged_lines(tmp_path):
    (tmp_path / "m1.rwm").write_text("x")
    (tmp_path / "m2.rwm").write_text("x")
    entries = [Entry(1, "2026-01-01T00:00:00Z", "m1.rwm", 30, None, [], [], 0.0, 0.5),
               Entry(2, "2026-01-01T00:10:00Z", "m2.rwm", 15, 8, ["uplink of g1"], ["node-4"], 1.5, 2.0)]
    write_index(tmp_path, entries)
    assert read_index(tmp_path) == entries
    text = (tmp_path / INDEX).read_text()
    for damaged, where in ((text.replace("\t15\t", "\tx\t"), ":4:"),
                           (text.replace("m2.rwm", "gone.rwm"), ":4: model gone.rwm"),
                           (text.replace("\n2\t", "\n3\t"), ":4: entry 3 follows 1"),
                           ("rankwise-model 2\n", ":1: not a watch index")):
        (tmp_path / INDEX).write_text(damaged)
        with pytest.raises(RankwiseError, match=where):
            read_index(tmp_path)


def test_pairs_merged_from_the_first_model_are_not_compared(small_model):
    """A partial re-probe copies the other pairs: same time, same figures."""
    after = copy.deepcopy(small_model)
    after.measured_at[0, 1] += 60
    after.rtt_median[0, 1] *= 2
    after.rtt_min[0, 1] *= 2
    after.rtt_max[0, 1] *= 2
    d = diff_models(small_model, after)
    assert d.compared.sum() == 1 and d.changed[0, 1]


@pytest.fixture
def small_model():
    m = Model.empty(["a", "b", "c"], [8, 1024])
    m.state[:] = 1
    m.state[[0, 1, 2], [0, 1, 2]] = 0
    m.alpha[:], m.beta[:], m.measured_at[:] = 1e-6, 1e-10, 1.7e9
    m.rtt_median[:] = m.rtt_min[:] = m.rtt_max[:] = 3e-6
    m.samples[:] = 4
    return m
