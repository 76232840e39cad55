"""The communication matrix through the Python binding: canonical form,
C <-> Python and .npz round trips, the documented text format, bad input."""

from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import assert_one_line_error, run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

from rankwise.util.errors import RankwiseError
from rankwise.traffic.matrix import CommMatrix


def small() -> CommMatrix:
    # Unsorted, (2, 1) twice, a zero-byte message 1 -> 0, a self-message 3 -> 3,
    # and 3 -> 0 with nothing at all.
    return CommMatrix(4, src=[2, 0, 1, 0, 2, 3, 0, 1, 3], dst=[1, 3, 0, 1, 1, 3, 1, 2, 0],
                      msgs=[1, 4, 2, 1, 2, 1, 1, 3, 0], bytes=[100, 40, 0, 10, 200, 8, 5, 30, 0],
                      source="unit test", pattern="ring:ranks=4,bytes=8")


def test_triplets_become_sorted_unique_entries():
    m = small()
    assert m.n_ranks == 4 and m.nnz == 6
    assert m.src.tolist() == [0, 0, 1, 1, 2, 3]
    assert m.dst.tolist() == [1, 3, 0, 2, 1, 3]
    assert m.msgs.tolist() == [2, 4, 2, 3, 3, 1]
    assert m.bytes.tolist() == [15, 40, 0, 30, 300, 8]
    assert (m.src.dtype, m.dst.dtype, m.msgs.dtype, m.bytes.dtype) == (np.int32, np.int32, np.int64, np.int64)
    assert m.total_msgs == 15 and m.total_bytes == 393
    assert m.row_start.tolist() == [0, 2, 4, 5, 6]
    assert m.get(2, 1) == (3, 300) and m.get(1, 0) == (2, 0) and m.get(3, 0) == (0, 0)
    assert m.out_degree().tolist() == [2, 2, 1, 1] and m.in_degree().tolist() == [1, 2, 1, 2]
    assert m.sent_bytes().tolist() == [55, 30, 300, 8]
    assert m.received_bytes().tolist() == [0, 315, 30, 48]
    with pytest.raises(RankwiseError, match="rank pair 0 -> 4 is not in a matrix of 4 ranks"):
        m.get(0, 4)


def test_dense_round_trip_and_symmetrised_graph():
    m = small()
    dense = m.to_dense()
    assert dense.tolist() == [[0, 15, 0, 40], [0, 0, 30, 0], [0, 300, 0, 0], [0, 0, 0, 8]]
    # from_dense keeps the zero-byte message only when msgs says so.
    back = CommMatrix.from_dense(dense, m.to_dense("msgs"), source=m.source, pattern=m.pattern)
    assert back == m
    assert CommMatrix.from_dense(dense).get(1, 0) == (0, 0)
    assert CommMatrix.from_dense(dense).get(0, 3) == (1, 40)

    s = m.symmetrized()
    want = dense + dense.T
    np.fill_diagonal(want, 0)
    assert np.array_equal(s.to_dense(), want)
    assert s.get(0, 1) == (4, 15) and s.get(1, 0) == (4, 15)
    assert s.pattern == m.pattern
    with pytest.raises(RankwiseError, match="to_dense: 9000 ranks is more than 8192"):
        CommMatrix(9000, [], [], [], []).to_dense()


def test_text_file_is_the_documented_format_and_round_trips(tmp_path):
    m = small()
    path = tmp_path / "m.rwc"
    m.save(path)
    assert path.read_text().splitlines() == [
        "rankwise-matrix 2", "ranks 4", "source unit test", "pattern ring:ranks=4,bytes=8",
        "nonzeros 6", "# src dst msgs bytes",
        "0 1 2 15", "0 3 4 40", "1 0 2 0", "1 2 3 30", "2 1 3 300", "3 3 1 8",
    ]
    assert CommMatrix.load(path) == m
    # A file written by hand (or by another tool) is read by the same engine.
    hand = tmp_path / "hand.rwc"
    hand.write_text("rankwise-matrix 1\nranks 3\n# a comment\n2 0 1 64\n0 2 1 8  # trailing\n2 0 1 64\n")
    h = CommMatrix.load(hand)
    assert h.to_dense().tolist() == [[0, 0, 8], [0, 0, 0], [128, 0, 0]]
    assert h.get(2, 0) == (2, 128) and h.source == "" and h.pattern == ""


def test_npz_round_trip(tmp_path):
    m = small()
    path = tmp_path / "m.NPZ"  # the suffix chooses the format, whatever its case
    m.save(path)
    with np.load(path) as z:
        assert str(z["format"]) == "rankwise-matrix 2" and int(z["n_ranks"]) == 4
        assert z["bytes"].tolist() == m.bytes.tolist()
    assert CommMatrix.load(path) == m
    empty = CommMatrix(7, [], [], [], [])
    empty.save(tmp_path / "e.npz")
    assert CommMatrix.load(tmp_path / "e.npz") == empty and empty.nnz == 0


@pytest.mark.parametrize("text, error", [
    ("rankwise-matrix 1\nranks 4\n0 4 1 1\n", ":3: dst ('4') must be an integer in [0, 3]"),
    ("rankwise-matrix 1\nranks 4\n0 1 1\n", ":3: a data line has 4 fields (src dst msgs bytes), found 3"),
    ("rankwise-matrix 1\n0 1 1 1\n", ":2: data line before 'ranks'"),
    ("rankwise-model 1\n", ":1: not a rankwise communication matrix"),
    ("rankwise-matrix 1\nranks 2\nnonzeros 2\n0 1 1 1\n", ":4: 'nonzeros 2' (line 3) but 1 data lines"),
])
def test_bad_text_files_name_path_and_line(tmp_path, text, error):
    path = tmp_path / "bad.rwc"
    path.write_text(text)
    with pytest.raises(RankwiseError) as exc:
        CommMatrix.load(path)
    assert str(exc.value).startswith(f"{path}{error}")


def test_bad_npz_files(tmp_path):
    not_zip = tmp_path / "a.npz"
    not_zip.write_text("rankwise-matrix 1\n")
    with pytest.raises(RankwiseError, match="a.npz: not a numpy .npz file"):
        CommMatrix.load(not_zip)
    other = tmp_path / "b.npz"
    np.savez(other, x=np.arange(3))
    with pytest.raises(RankwiseError, match="b.npz: not a rankwise communication matrix"):
        CommMatrix.load(other)
    newer = tmp_path / "c.npz"
    np.savez(newer, format=np.array("rankwise-matrix 3"))
    with pytest.raises(RankwiseError, match=r"c.npz: matrix format version 3 is newer than this rankwise \(2\)"):
        CommMatrix.load(newer)
    partial = tmp_path / "d.npz"
    np.savez(partial, format=np.array("rankwise-matrix 1"), n_ranks=3, src=[0])
    with pytest.raises(RankwiseError, match="d.npz: no 'dst' array"):
        CommMatrix.load(partial)
    invalid = tmp_path / "e.npz"
    np.savez(invalid, format=np.array("rankwise-matrix 1"), n_ranks=3, src=[0, 1], dst=[1, 3],
             msgs=[1, 1], bytes=[8, 8])
    with pytest.raises(RankwiseError, match=r"e.npz: entry 1: destination rank 3 is not in \[0, 3\)"):
        CommMatrix.load(invalid)
    with pytest.raises(RankwiseError, match="missing.npz: cannot open"):
        CommMatrix.load(tmp_path / "missing.npz")


def test_failed_writes_leave_the_previous_file(tmp_path):
    m = small()
    for name in ("m.rwc", "m.npz"):
        path = tmp_path / name
        m.save(path)
        before = path.read_bytes()
        m.pattern = "two\nlines"
        with pytest.raises(RankwiseError, match="matrix pattern holds a line break"):
            m.save(path)
        m.pattern = "ring:ranks=4,bytes=8"
        assert path.read_bytes() == before
        with pytest.raises(RankwiseError, match="is a directory"):
            m.save(tmp_path)  # a name that is not a regular file is never written over
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.npz", "m.rwc"]  # no temporary left


@pytest.mark.parametrize("kwargs, error", [
    (dict(n_ranks=0), r"needs 1 to 67108864 ranks \(got 0\)"),
    (dict(src=[0, 5]), r"entry 1: source rank 5 is not in \[0, 4\)"),
    (dict(src=[0, 2**32 + 1]), "src: 4294967297 is not an integer that fits in int32"),
    (dict(msgs=[1, -1]), r"entry 1 \(1 -> 2\): negative message count -1"),
    (dict(bytes=[1.5, 2]), "bytes: 1.5 is not an integer"),
    (dict(bytes=[2**63 - 1, 1]), "entry 1: total bytes exceed 64 bits"),
    (dict(dst=[1]), "must have the same length"),
    (dict(src=[[0, 1]]), "src must be a 1-D array"),
    (dict(source="a\nb"), "matrix source holds a line break"),
    (dict(pattern=" x"), "starts or ends with blanks"),
    (dict(pattern="x" * 256), "longer than 255 bytes"),
])
def test_invalid_input_is_refused(kwargs, error):
    args = dict(n_ranks=4, src=[0, 1], dst=[1, 2], msgs=[1, 1], bytes=[8, 8]) | kwargs
    with pytest.raises(RankwiseError, match=error):
        CommMatrix(args.pop("n_ranks"), **args)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 12).flatmap(lambda n: st.tuples(
    st.just(n),
    st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1), st.integers(0, 3),
                       st.integers(0, 10**12)), max_size=60))))
def test_any_triplets_match_dense_accumulation(case):
    n, triplets = case
    src, dst, msgs, nbytes = (np.array(c, dtype=np.int64).reshape(-1) for c in zip(*triplets)) \
        if triplets else [np.zeros(0, np.int64)] * 4
    m = CommMatrix(n, src, dst, msgs, nbytes)
    want_b, want_m = np.zeros((n, n), np.int64), np.zeros((n, n), np.int64)
    np.add.at(want_b, (src, dst), nbytes)
    np.add.at(want_m, (src, dst), msgs)
    assert np.array_equal(m.to_dense(), want_b) and np.array_equal(m.to_dense("msgs"), want_m)
    assert m.nnz == np.count_nonzero((want_b != 0) | (want_m != 0))
    key = m.src.astype(np.int64) * n + m.dst
    assert np.all(np.diff(key) > 0)  # sorted, unique


def test_a_lone_carriage_return_is_refused_by_reader_and_writer(tmp_path):
    """One rule both ways: `show` (reader) and `import` (writer) agree, and
    both name the file."""
    path = tmp_path / "cr.rwc"
    path.write_bytes(b"rankwise-matrix 1\nranks 2\nsource a\rb\n0 1 1 8\n")
    with pytest.raises(RankwiseError, match=r"cr\.rwc:3: 'source' text holds a line break \(0x0d\)"):
        CommMatrix.load(path)
    m = CommMatrix(2, [0], [1], [1], [8], source="ok")
    m.source = "a\rb"
    for name in ("out.rwc", "out.npz"):
        with pytest.raises(RankwiseError, match=rf"{name}: cannot write: matrix source holds a line break"):
            m.save(tmp_path / name)
        assert not (tmp_path / name).exists()
    (tmp_path / "crlf.rwc").write_bytes(b"rankwise-matrix 1\r\nranks 2\r\nsource a b\r\n0 1 1 8\r\n")
    assert CommMatrix.load(tmp_path / "crlf.rwc").source == "a b"


def test_a_directory_is_named_as_such(tmp_path):
    with pytest.raises(RankwiseError, match=rf"{tmp_path}: cannot open: it is a directory, not a file"):
        CommMatrix.load(tmp_path)


# ------------------------------------------------------- collective calls
def test_collective_calls_are_canonical_and_kept_by_symmetrized(tmp_path):
    from rankwise.traffic.collective_calls import CollectiveCall as CC

    calls = [CC("bcast", 64, 2, 1, (7, 5, 3, 1)), CC("allreduce", 16, 5, 0, tuple(range(8))),
             CC("bcast", 64, 3, 1, (7, 5, 3, 1)), CC("alltoall", 4)]
    m = CommMatrix(8, [0], [1], [1], [8], collectives=calls, collectives_dropped=2)
    # the world's members in order become None; equal groups are summed; sorted by comm, op
    assert m.collectives == [CC("allreduce", 16, 5), CC("alltoall", 4), CC("bcast", 64, 5, 1, (7, 5, 3, 1))]
    assert m.symmetrized().collectives == m.collectives and m.symmetrized().collectives_dropped == 2
    assert CommMatrix(8, [0], [1], [1], [8]).collectives == []
    assert m != CommMatrix(8, [0], [1], [1], [8])
    for name in ("m.rwc", "m.npz"):
        m.save(tmp_path / name)
        assert CommMatrix.load(tmp_path / name) == m
    text = (tmp_path / "m.rwc").read_text()
    assert "comm 0 7 5 3 1\n" in text and "coll bcast 64 5 1 0\n" in text and "coll-dropped 2\n" in text


@pytest.mark.parametrize("calls, error", [
    ([None], "collectives must hold CollectiveCall records, got NoneType"),
    ("bcast", "collectives must be a list of CollectiveCall, got str"),
])
def test_collectives_must_be_records(calls, error):
    with pytest.raises(RankwiseError, match=re.escape(error)):
        CommMatrix(4, [], [], [], [], collectives=calls)


def test_collectives_refused_by_the_engine_name_the_offence():
    from rankwise.traffic.collective_calls import CollectiveCall as CC

    for call, error in [(CC("bcast", 8, 1, 0, (0, 4)), "communicator 0: member 4 is not in [0, 4)"),
                        (CC("bcast", 8, 1, 0, (1, 1)), "communicator 0: rank 1 is a member twice"),
                        (CC("bcast", 8, 1, 5), "root 5 is not a rank of its communicator of 4"),
                        (CC("allgather", 8, 1, 1), "allgather has no root (got 1)")]:
        with pytest.raises(RankwiseError, match=re.escape(error)):
            CommMatrix(4, [], [], [], [], collectives=[call])


def test_version_1_files_read_without_calls_and_bad_v2_npz(tmp_path):
    v1 = tmp_path / "v1.npz"
    np.savez(v1, format=np.array("rankwise-matrix 1"), n_ranks=3, src=[0], dst=[1], msgs=[1], bytes=[8])
    assert CommMatrix.load(v1).collectives == [] and CommMatrix.load(v1).get(0, 1) == (1, 8)
    (tmp_path / "v1.rwc").write_text("rankwise-matrix 1\nranks 3\n0 1 1 8\n")
    assert CommMatrix.load(tmp_path / "v1.rwc").collectives == []
    base = dict(format=np.array("rankwise-matrix 2"), n_ranks=4, src=[0], dst=[1], msgs=[1], bytes=[8],
                coll_op=np.array(["bcast"]), coll_comm=[0], coll_root=[0], coll_bytes=[8], coll_calls=[1],
                comm_start=[0, 2], comm_ranks=[3, 1], coll_dropped=0)
    good = tmp_path / "good.npz"
    np.savez(good, **base)
    from rankwise.traffic.collective_calls import CollectiveCall as CC
    assert CommMatrix.load(good).collectives == [CC("bcast", 8, 1, 0, (3, 1))]
    for change, error in [({"coll_comm": [1]}, "collective call 0 (bcast): communicator 1 is not in [-1, 1)"),
                          ({"comm_start": [0, 3]}, "'comm_start' must rise from 0 to the length of 'comm_ranks'"),
                          ({"coll_op": np.array(["scan"])}, "unknown collective 'scan'"),
                          ({"coll_calls": [1, 2]}, "coll_op, coll_comm, coll_root, coll_bytes and coll_calls must have the same length"),
                          ({"format": np.array("rankwise-matrix 1")}, "'coll_op' needs matrix format version 2")]:
        bad = tmp_path / "bad.npz"
        np.savez(bad, **{**base, **change})
        with pytest.raises(RankwiseError, match=re.escape(f"{bad}: {error}")):
            CommMatrix.load(bad)
    partial = {k: v for k, v in base.items() if k != "comm_ranks"}
    np.savez(tmp_path / "p.npz", **partial)
    with pytest.raises(RankwiseError, match="no 'comm_ranks' array"):
        CommMatrix.load(tmp_path / "p.npz")


def test_a_malformed_coll_line_is_one_line_error_from_the_cli(tmp_path):
    bad = tmp_path / "bad.rwc"
    bad.write_text("rankwise-matrix 2\nranks 4\ncomm 0 1 2 2\n0 1 1 8\n")
    assert_one_line_error(run_cli("pattern", "show", bad), f"{bad}:3: communicator 0: rank 2 is a member twice")


def test_importing_a_matrix_file_keeps_its_calls_and_other_importers_make_none(tmp_path):
    from rankwise.traffic.collective_calls import CollectiveCall as CC

    m = CommMatrix(4, [0], [1], [1], [8], collectives=[CC("bcast", 8, 2, 1, (3, 1))])
    m.save(tmp_path / "in.rwc")
    assert run_cli("import", tmp_path / "in.rwc", "-o", tmp_path / "out.npz").returncode == 0
    assert CommMatrix.load(tmp_path / "out.npz").collectives == m.collectives
    (tmp_path / "pairs.txt").write_text("0 1 64\n1 0 64\n")
    r = run_cli("import", tmp_path / "pairs.txt", "--format", "list", "--ranks", "2", "-o", tmp_path / "p.rwc")
    assert r.returncode == 0, r.stderr
    assert CommMatrix.load(tmp_path / "p.rwc").collectives == []


def test_python_names_the_collectives_the_engine_knows():
    """One list of operations, the engine's: each name parses back to its index in C."""
    from rankwise._engine import core as engine
    from rankwise.predict.predictor import OPERATIONS
    from rankwise.traffic.collective_calls import COLLECTIVE_OPS

    so = engine.matrix_lib()
    assert COLLECTIVE_OPS == OPERATIONS == engine.collective_ops()
    assert len(COLLECTIVE_OPS) == 7 and {"bcast", "alltoall", "scatter"} <= set(COLLECTIVE_OPS)
    assert [so.rw_coll_op_from_name(op.encode()) for op in COLLECTIVE_OPS] == list(range(len(COLLECTIVE_OPS)))
    assert so.rw_coll_op_from_name(b"scan") < 0
