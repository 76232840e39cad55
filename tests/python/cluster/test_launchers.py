"""Launcher files: every format written and read back; bad files refused
with their line; allocations from hostfiles and Slurm node lists."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankwise.cluster.allocation import allocation_from_env, parse_tasks_per_node, read_allocation
from rankwise.cluster.hostlist import expand as expand_nodelist
from rankwise.util.errors import RankwiseError
from rankwise.cluster.launcher_files import FORMATS, read_placement, usage_hint, write_placement
from rankwise.cluster.placement import Placement


# Host names as clusters have them: short names, FQDNs, dashes, IPv4 addresses.
# (Open MPI's rankfile keywords are no host names: the rankfile writer refuses them.)
HOST = st.one_of(st.from_regex(r"[a-z][a-z0-9_-]{0,8}(\.[a-z]{1,5}){0,2}", fullmatch=True),
                 st.from_regex(r"(1?[0-9]{1,2}\.){3}[0-9]{1,2}", fullmatch=True),
                 ).filter(lambda h: h not in ("rank", "slot", "slots", "username", "user_name", "user-name"))


@st.composite
def placements(draw):
    names = draw(st.lists(HOST, min_size=1, max_size=6, unique=True))
    slots = draw(st.lists(st.integers(1, 4), min_size=len(names), max_size=len(names)))
    cells = [(v, s) for v in range(len(names)) for s in range(slots[v])]
    order = draw(st.permutations(cells))
    n = draw(st.integers(1, len(cells)))
    node_of = [v for v, _ in order[:n]]
    slot_of = [s for _, s in order[:n]]
    return Placement(tuple(names), node_of, slot_of)


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
        assert [int(re.fullmatch(r"rank (\d+)=\S+ slot=\d+", line).group(1)) for line in body] == list(range(p.n_ranks))
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
    ("openmpi", "rank 0=a slot=0\nrank 1=a slot=0:0\n", ":2: rank 1 shares slot 0 of a with rank 0"),
    ("openmpi", "rank 0=+n0 slot=0\n", ":1: bad host name '+n0'"),
    ("openmpi", "rank 0=a slot=0,x\n", ":1: slot '0,x'"),
    ("openmpi", "# nothing\n", "no rank in the file"),
    ("permutation", "0 a 0\n0 b 1\n", ":2: rank 0 is given twice (first on line 1)"),
    ("permutation", "0 a\n", ":1: expected 'RANK NODE SLOT'"),
    ("permutation", "0 a -1\n", ":1: slot '-1' is not"),
    ("mpich", "a:2 extra\n", ":1: expected 'HOST' or 'HOST:N'"),
    ("mpich", "a:0\n", ":1: rank count must be positive"),
    ("intel", "-n x -host a ./app\n", ":1: rank count 'x'"),
    ("intel", "-n 1 -host a -env X 1 ./app\n", ":1: unexpected option '-env'"),
    ("intel", "-n 1 -host a=b ./app\n", ":1: bad host name 'a=b'"),
    ("slurm", "a\nb c\n", ":2: bad host name 'b c'"),
    ("slurm", "", "no host"),
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


def test_rankfile_reads_open_mpi_documented_forms(tmp_path):
    path = tmp_path / "rankfile"
    path.write_text("# from the mpirun man page\n"
                    "rank 0=aa slot=1:0-2\n"
                    "rank 1=bb slot=0:0,1   # socket:core list\n"
                    "rank 2=cc slot=1-2\n"
                    "rank  3 = aa  slots = 3\n")
    back = read_placement("openmpi", path)
    assert back.hosts_in_rank_order() == ["aa", "bb", "cc", "aa"]
    assert back.slot_of.tolist() == [0, 0, 1, 3]  # the first core each line names


def test_machinefile_and_configfile_text(tmp_path):
    p = Placement.from_hosts(["a", "a", "b", "a", "b", "b"])
    write_placement(p, "mpich", tmp_path / "m")
    assert (tmp_path / "m").read_text().splitlines()[1:] == ["a:2", "b:1", "a:1", "b:2"]
    write_placement(p, "intel", tmp_path / "c", app="  ./app   -x  1 ")
    assert (tmp_path / "c").read_text().splitlines()[1:] == [
        "-n 2 -host a ./app -x 1", "-n 1 -host b ./app -x 1", "-n 1 -host a ./app -x 1", "-n 2 -host b ./app -x 1"]
    # Hydra's per-host keys and bare lines are read too.
    (tmp_path / "m").write_text("a:2 user=me binding=core\nb\nb\n")
    assert read_placement("mpich", tmp_path / "m").hosts_in_rank_order() == ["a", "a", "b", "b"]


@pytest.mark.parametrize("fmt, host, app, message", [
    ("openmpi", "10node.x", None, "Open MPI rankfile"),  # the rankfile lexer splits it
    ("openmpi", "slot", None, "Open MPI rankfile"),      # a rankfile keyword
    ("intel", "a", "./app # x", "contains '#'"),
    ("intel", "a", "./app 'a b'", "contains \"'\""),
])
def test_refusals_leave_the_old_file(tmp_path, fmt, host, app, message):
    path = tmp_path / "out"
    path.write_text("old\n")
    with pytest.raises(RankwiseError, match=re.escape(message)):
        write_placement(Placement((host,), [0], [0]), fmt, path, app=app)
    assert path.read_text() == "old\n"


def test_a_failing_write_leaves_no_partial_file(tmp_path, monkeypatch):
    import rankwise.util.files as pf

    def broken(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pf.os, "replace", broken)
    p = Placement(("a", "b"), [0, 1], [0, 0])
    for fmt in FORMATS:
        with pytest.raises(RankwiseError, match="cannot write: No space left on device"):  # one line, no traceback
            write_placement(p, fmt, tmp_path / fmt, app="./app")
    assert list(tmp_path.iterdir()) == []  # neither the file nor a temporary


def test_placement_helpers_and_checks():
    p = Placement(("x", "y", "z"), [2, 0, 2, 0], [0, 1, 1, 0])
    assert p.n_ranks == 4 and p.used_nodes() == ["z", "x"]
    assert p.ranks_per_node() == {"x": 2, "z": 2}
    p.validate(None)
    p.validate([2, 1, 2])
    with pytest.raises(RankwiseError, match="2 slot counts for a placement on 3 nodes"):
        p.validate([2, 2])
    assert p == Placement(("z", "x", "y"), [0, 1, 0, 1], [0, 1, 1, 0])  # same hosts and cores per rank
    assert p != Placement(("x", "y", "z"), [2, 0, 2, 0], [0, 1, 2, 0])
    for bad, msg in ((("a", "a"), "listed twice"), (("-a",), "starts with '-'"), (("a'b",), "contains")):
        with pytest.raises(RankwiseError, match=msg):
            Placement(bad, [0], [0])
    with pytest.raises(RankwiseError, match="rank 0 is placed on node 3"):
        Placement(("a",), [3], [0])
    with pytest.raises(RankwiseError, match="3 slots for 4 ranks"):
        Placement.block(["a", "b"], [1, 2], 4)
    with pytest.raises(RankwiseError, match="1 slot counts for 2 nodes"):
        Placement.block(["a", "b"], [4], 2)


def test_more_node_lists_and_allocations(tmp_path):
    from rankwise.cluster.allocation import allocation_from_nodelist

    assert expand_nodelist("r[1-2]n[08-10]") == ["r1n08", "r1n09", "r1n10", "r2n08", "r2n09", "r2n10"]
    assert allocation_from_nodelist("gpu[1-2]", slots=8) == [("gpu1", 8), ("gpu2", 8)]
    for bad, msg in (("a,", "empty host name"), ("a[1]]", "without '['"), ("a[[1]]", "nested")):
        with pytest.raises(RankwiseError, match=re.escape(msg)):
            expand_nodelist(bad)
    with pytest.raises(RankwiseError, match=r"SLURM_JOB_NODELIST: .*'x' is not N"):
        allocation_from_env({"SLURM_JOB_NODELIST": "n[x]"})
    with pytest.raises(RankwiseError, match="'2\\(y3\\)' is not N or N\\(xM\\)"):
        parse_tasks_per_node("2(y3)", 3)
    path = tmp_path / "machines"
    path.write_text("a\nb\na\n")  # one line per rank: a host gains a slot per line
    assert read_allocation(path) == [("a", 2), ("b", 1)]
    path.write_text("a:2\nb\na:1\n")
    with pytest.raises(RankwiseError, match=re.escape(f"{path}:3: duplicate host 'a'")):
        read_allocation(path)
