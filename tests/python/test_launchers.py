"""Launcher files: every format written and read back; bad files refused
with their line; allocations from hostfiles and Slurm node lists."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankwise.allocation import allocation_from_env, expand_nodelist, parse_tasks_per_node, read_allocation
from rankwise.errors import RankwiseError
from rankwise.launchers import FORMATS, read_placement, usage_hint, write_placement
from rankwise.placement import Placement


@st.composite
def placements(draw):
    n_nodes = draw(st.integers(1, 6))
    slots = draw(st.lists(st.integers(1, 4), min_size=n_nodes, max_size=n_nodes))
    cells = [(v, s) for v in range(n_nodes) for s in range(slots[v])]
    order = draw(st.permutations(cells))
    n = draw(st.integers(1, len(cells)))
    node_of = [v for v, _ in order[:n]]
    slot_of = [s for _, s in order[:n]]
    return Placement(tuple(f"host-{i:02d}" for i in range(n_nodes)), node_of, slot_of)


@settings(max_examples=40, deadline=None)
@given(p=placements(), fmt=st.sampled_from(sorted(FORMATS)))
def test_every_format_round_trips(tmp_path_factory, p, fmt):
    path = tmp_path_factory.mktemp("fmt") / "out"
    write_placement(p, fmt, path, app="./app --flag 1")
    back = read_placement(fmt, path)
    assert back.hosts_in_rank_order() == p.hosts_in_rank_order()
    if fmt in ("openmpi", "permutation"):  # the formats that carry cores
        assert np.array_equal(back.slot_of, p.slot_of)
    if fmt == "openmpi":
        body = [line for line in path.read_text().splitlines() if not line.startswith("#")]
        assert all(re.fullmatch(r"rank \d+=\S+ slot=\d+", line) for line in body)
    if fmt == "intel":
        assert all(re.fullmatch(r"-n \d+ -host \S+ \./app --flag 1", line)
                   for line in path.read_text().splitlines() if not line.startswith("#"))


def test_runs_group_consecutive_ranks():
    p = Placement.from_hosts(["a", "a", "b", "a", "b", "b"])
    assert p.runs() == [("a", 2), ("b", 1), ("a", 1), ("b", 2)]
    assert p.slot_of.tolist() == [0, 1, 0, 2, 1, 2]
    assert p.ranks_per_node() == {"a": 3, "b": 3}
    assert Placement.block(["x", "y"], [2, 3], 4).hosts_in_rank_order() == ["x", "x", "y", "y"]


@pytest.mark.parametrize("fmt, text, message", [
    ("openmpi", "rank 0=a slot=0\nrank 0=b slot=1\n", ":2: rank 0 is given twice"),
    ("openmpi", "rank 0=a slot=0\nrank zero=b\n", ":2: expected 'rank N=HOST slot=S'"),
    ("openmpi", "rank 1=a slot=0\n", "rank 0 is missing"),
    ("openmpi", "rank 0=a slot=x\n", ":1: slot 'x'"),
    ("permutation", "0 a 0\n1 b one\n", ":2: slot 'one' is not"),
    ("mpich", "a:2\nb:x\n", ":2: rank count 'x'"),
    ("intel", "-n 2 -host a ./app\n-n 1 ./app\n", ":2: expected '-n K -host NODE APP'"),
    ("slurm", "a\nb c\n", ":2: expected one host name"),
])
def test_bad_files_name_their_line(tmp_path, fmt, text, message):
    path = tmp_path / "bad"
    path.write_text(text)
    with pytest.raises(RankwiseError, match=re.escape(message)) as err:
        read_placement(fmt, path)
    assert str(path) in str(err.value) and "\n" not in str(err.value)


def test_refused_before_anything_is_written(tmp_path):
    with pytest.raises(RankwiseError, match="cannot be written"):
        Placement(("bad host",), [0], [0])
    with pytest.raises(RankwiseError, match="shares slot 0"):
        Placement(("a",), [0, 0], [0, 0])
    p = Placement(("a",), [0], [0])
    with pytest.raises(RankwiseError, match="unknown format 'lsf'"):
        write_placement(p, "lsf", tmp_path / "x")
    with pytest.raises(RankwiseError, match="app command"):
        write_placement(p, "intel", tmp_path / "x")
    assert not (tmp_path / "x").exists()
    with pytest.raises(RankwiseError, match="slots"):
        Placement(("a",), [0], [3]).validate([2])
    assert "srun --distribution=arbitrary -n 4" in usage_hint("slurm", "h", 4)


def test_slurm_node_lists():
    assert expand_nodelist("n[01-03]") == ["n01", "n02", "n03"]
    assert expand_nodelist("a,b[1-2],c[7,9-10]x") == ["a", "b1", "b2", "c7x", "c9x", "c10x"]
    for bad, msg in (("n[3-1]", "empty"), ("n[1-2", "without"), ("n[a]", "not N"), ("a,a", "twice")):
        with pytest.raises(RankwiseError, match=msg):
            expand_nodelist(bad)
    assert parse_tasks_per_node("2(x3),1", 4) == [2, 2, 2, 1]
    with pytest.raises(RankwiseError, match="gives 4 nodes"):
        parse_tasks_per_node("2(x3),1", 5)
    env = {"SLURM_JOB_NODELIST": "c[1-2]", "SLURM_TASKS_PER_NODE": "4(x2)"}
    assert allocation_from_env(env) == [("c1", 4), ("c2", 4)]
    assert allocation_from_env({}) is None


def test_allocation_from_a_hostfile(tmp_path):
    path = tmp_path / "hosts"
    path.write_text("a slots=4\nb:2\n# comment\nc\n")
    assert read_allocation(path) == [("a", 4), ("b", 2), ("c", 1)]
    path.write_text("a slots=4\nb\na slots=2\n")
    with pytest.raises(RankwiseError, match=re.escape(f"{path}:3")):
        read_allocation(path)
