"""Pattern generators against structures worked out by hand, the spec
grammar, and the `rankwise pattern` commands as a user runs them."""

from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import assert_one_line_error, run_cli

from rankwise.traffic import patterns as P
from rankwise.util.errors import RankwiseError
from rankwise.traffic.matrix import CommMatrix


def dests(m: CommMatrix, rank: int) -> list[int]:
    return m.dst[m.src == rank].tolist()


# ------------------------------------------------------------ grids
@pytest.mark.parametrize("n, ndims, want", [
    (262144, 3, (64, 64, 64)), (12, 3, (3, 2, 2)), (24, 3, (4, 3, 2)), (7, 3, (7, 1, 1)),
    (1, 3, (1, 1, 1)), (12, 2, (4, 3)), (36, 2, (6, 6)), (202, 3, (101, 2, 1)),
])
def test_dims_create_is_most_cubic(n, ndims, want):
    assert P.dims_create(n, ndims) == want


# --------------------------------------------------------- stencils
def test_stencil3d_periodic_2x2x2_wraps_onto_the_same_neighbours():
    # 6 faces: +x and -x wrap to the same rank, so 3 distinct neighbours, 2 messages each.
    m = P.stencil3d((2, 2, 2), periodic=True, nbytes=100)
    assert m.nnz == 8 * 3 and set(m.out_degree()) == {3}
    assert set(m.msgs) == {2} and set(m.bytes) == {200}
    assert dests(m, 0) == [1, 2, 4]
    # 26: all 7 others; a rank differing in k coordinates is reached by 2^k offsets.
    m = P.stencil3d((2, 2, 2), neighbours=26, periodic=True, nbytes=1, edge_bytes=10, corner_bytes=100)
    assert set(m.out_degree()) == {7}
    for j in range(1, 8):
        k = bin(j).count("1")
        assert m.get(0, j) == (2**k, 2**k * (1, 10, 100)[k - 1])


def test_stencil3d_4x4x4_open_edge_counts():
    m = P.stencil3d((4, 4, 4), nbytes=8)
    # 3 axes x 4*4 lines x 3 neighbouring pairs x 2 directions
    assert m.nnz == 288
    # corners 3 neighbours, edge cells 4, face cells 5, interior 6
    assert np.bincount(m.out_degree()).tolist() == [0, 0, 0, 8, 24, 24, 8]
    m26 = P.stencil3d((4, 4, 4), neighbours=26, nbytes=8, edge_bytes=4, corner_bytes=2)
    # per offset, (4 - |dx|)(4 - |dy|)(4 - |dz|) pairs: (3+4+3)^3 - 4^3
    assert m26.nnz == 936
    assert m26.total_bytes == 288 * 8 + 12 * 36 * 4 + 8 * 27 * 2
    assert m26.out_degree().max() == 26 and m26.out_degree().min() == 7


def test_stencil3d_ranks_in_cart_order():
    # MPI_Cart_create: the last coordinate varies fastest, rank(x, y, z) = (x*3 + y)*4 + z.
    m = P.stencil3d((2, 3, 4), nbytes=1)
    assert dests(m, 0) == [1, 4, 12]
    # (1, 1, 1) = rank 17: x-1 -> (0,1,1) = 5, y -> 13 and 21, z -> 16 and 18; no x+1 (open)
    assert dests(m, 17) == [5, 13, 16, 18, 21]


def test_stencil2d_structure():
    m = P.stencil2d((3, 3), periodic=True, nbytes=5)
    assert set(m.out_degree()) == {4} and m.total_bytes == 9 * 4 * 5
    # 2x2 periodic with corners: the 4 diagonal offsets all land on the one diagonal rank.
    m = P.stencil2d((2, 2), neighbours=8, periodic=True, nbytes=10, corner_bytes=1)
    assert m.get(0, 1) == (2, 20) and m.get(0, 2) == (2, 20) and m.get(0, 3) == (4, 4)
    m = P.stencil2d(n_ranks=12, nbytes=1, iterations=3)
    assert m.pattern == "stencil2d:grid=4x3,neighbours=4,periodic=0,bytes=1,iterations=3"
    assert m.nnz == 2 * (3 * 3 + 4 * 2) and set(m.msgs) == {3} and set(m.bytes) == {3}


# ------------------------------------------------------ collectives
def test_alltoall_and_ring():
    m = P.alltoall(5, 1 << 20, iterations=2)
    assert np.array_equal(m.to_dense(), (2 << 20) * (1 - np.eye(5, dtype=np.int64)))
    assert set(m.msgs) == {2}
    assert P.alltoall(1, 8).nnz == 0
    r = P.ring(5, 8)
    assert r.src.tolist() == [0, 1, 2, 3, 4] and r.dst.tolist() == [1, 2, 3, 4, 0]
    r2 = P.ring(2, 8, bidirectional=True)  # i+1 and i-1 are the same rank
    assert r2.nnz == 2 and r2.get(0, 1) == (2, 16)
    assert P.ring(1, 8, bidirectional=True).nnz == 0


def test_alltoallv_from_array_and_files(tmp_path):
    sizes = np.array([[7, 1, 0], [2, 0, 3], [0, 0, 9]])
    m = P.alltoallv(sizes)
    assert m.to_dense().tolist() == [[0, 1, 0], [2, 0, 3], [0, 0, 0]]  # zeros and the diagonal send nothing
    assert m.pattern == "alltoallv:ranks=3,iterations=1"
    np.save(tmp_path / "s.npy", sizes)
    (tmp_path / "s.txt").write_text("7 1 0\n2 0 3\n0 0 9\n")
    for name in ("s.npy", "s.txt"):
        f = P.alltoallv(str(tmp_path / name), iterations=4)
        assert f.to_dense().tolist() == [[0, 4, 0], [8, 0, 12], [0, 0, 0]]
        assert P.generate(f.pattern) == f  # the spec names the file
    with pytest.raises(RankwiseError, match="sizes must be >= 0"):
        P.alltoallv([[0, -1], [1, 0]])
    with pytest.raises(RankwiseError, match="square matrix"):
        P.alltoallv([[0, 1, 2], [1, 0, 2]])
    with pytest.raises(RankwiseError, match="nothere.txt: cannot read"):
        P.alltoallv(str(tmp_path / "nothere.txt"))


def test_binomial_trees():
    b = P.tree(8, 64)
    assert sorted(zip(b.src.tolist(), b.dst.tolist())) == [(0, 1), (0, 2), (0, 4), (2, 3), (4, 5), (4, 6), (6, 7)]
    r = P.tree(5, 64, op="reduce", root=3)
    # relative ranks 1..4 are 4, 0, 1, 2; parents 0, 0, 2, 0 (relative) = 3, 3, 0, 3
    assert sorted(zip(r.src.tolist(), r.dst.tolist())) == [(0, 3), (1, 0), (2, 3), (4, 3)]
    assert set(r.bytes) == {64} and r.nnz == 4


# ------------------------------------------------------------ groups
def test_groups_volumes_by_hand():
    # 3 groups of 2 (ranks 01 | 23 | 45), 5 iterations, links every 2 (it 0, 2, 4).
    m = P.groups(3, 2, 10, 1000, skip=1, iterations=5, shuffle=False)
    want_b = np.zeros((6, 6), np.int64)
    want_m = np.zeros((6, 6), np.int64)
    for a, b in [(0, 1), (2, 3), (4, 5)]:
        want_m[a, b] = want_m[b, a] = 5
        want_b[a, b] = want_b[b, a] = 50
    for a, b in [(1, 2), (3, 4)]:  # last of a group <-> first of the next
        want_m[a, b] = want_m[b, a] = 3
        want_b[a, b] = want_b[b, a] = 3000
    assert np.array_equal(m.to_dense(), want_b) and np.array_equal(m.to_dense("msgs"), want_m)


def test_groups_shuffle_is_a_relabelling_fixed_by_the_seed():
    plain = P.groups(4, 3, 8, 64, shuffle=False)
    shuffled = P.groups(4, 3, 8, 64, seed=7)
    perm = P.shuffle_ranks(12, 7)
    assert sorted(perm.tolist()) == list(range(12)) and perm.tolist() != list(range(12))
    relabelled = np.zeros((12, 12), np.int64)
    relabelled[np.ix_(perm, perm)] = plain.to_dense()
    assert np.array_equal(shuffled.to_dense(), relabelled)
    assert P.groups(4, 3, 8, 64, seed=7) == shuffled
    assert P.groups(4, 3, 8, 64, seed=8) != shuffled


def test_shuffle_is_splitmix64():
    # splitmix64 seeded with 0 first returns 0xE220A8397B1DCDAF (the reference
    # implementation's known value), seeded with 1234567: 0x599ED017FB08FC85.
    # The permutation orders logical ranks by these keys, so a C mapper can
    # rebuild it without numpy.
    def key(seed, i):
        z = (seed + i * 0x9E3779B97F4A7C15) % 2**64
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) % 2**64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) % 2**64
        return z ^ (z >> 31)

    assert key(0, 1) == 0xE220A8397B1DCDAF and key(1234567, 1) == 0x599ED017FB08FC85
    for seed in (0, 42):
        keys = [key(seed, i + 1) for i in range(50)]
        assert P.shuffle_ranks(50, seed).tolist() == sorted(range(50), key=keys.__getitem__)


# --------------------------------------------------------------- FFT
def test_fft_slab_volumes():
    m = P.fft((4, 3, 5), n_ranks=2, decomp="slab")
    # Y blocks (2, 1), Z blocks (3, 2): i -> j carries NX * |Y_j| * |Z_i| complex doubles
    assert m.get(0, 1) == (1, 4 * 1 * 3 * 16) and m.get(1, 0) == (1, 4 * 2 * 2 * 16)
    whole = P.fft((8, 8, 8), n_ranks=4, decomp="slab")
    assert whole.nnz == 12 and whole.total_bytes == 8**3 * 16 * 3 // 4  # all but the local quarter


def test_fft_pencil_partners_and_volumes():
    m = P.fft((6, 6, 6), pgrid=(2, 3), iterations=2)
    # rank = r * 3 + c; rank 4 is (1, 1): row mates 3 and 5, column mate 1
    assert dests(m, 4) == [1, 3, 5]
    for rank in range(6):
        r, c = divmod(rank, 3)
        assert dests(m, rank) == sorted(({r * 3 + k for k in range(3)} | {k * 3 + c for k in range(2)}) - {rank})
    # row transpose: |X_c'| |Y_c| |Z_r| = 2*2*3; column: |X_c| |Y'_r'| |Z_r| = 2*3*3
    assert m.get(4, 3) == (2, 2 * 2 * 2 * 3 * 16) and m.get(4, 1) == (2, 2 * 2 * 3 * 3 * 16)
    # each transpose moves the whole grid but what stays local
    assert m.total_bytes == 2 * (6**3 * 16 - 6 * 192 + 6**3 * 16 - 6 * 288)
    assert P.fft((16, 16, 16), n_ranks=8).pattern == "fft:grid=16x16x16,decomp=pencil,pgrid=4x2,iterations=1"
    with pytest.raises(RankwiseError, match="pencil grid 8x8 needs NX >= 8"):
        P.fft((4, 4, 4), n_ranks=64)


def test_large_stencil_is_vectorised_and_round_trips(tmp_path):
    m = P.generate("stencil3d:grid=64x64x64,neighbours=6,periodic=1,bytes=1M")
    assert m.n_ranks == 262144 and m.nnz == 6 * 262144 and set(m.out_degree()) == {6}
    m.save(tmp_path / "big.rwc")
    assert CommMatrix.load(tmp_path / "big.rwc") == m


# -------------------------------------------------------------- specs
SPECS = [
    "alltoall:ranks=6,bytes=64K,iterations=3",
    "stencil3d:grid=3x4x5,neighbours=18,periodic=1,bytes=1M,edge_bytes=1K,iterations=2",
    "stencil3d:grid=2x2x3,neighbours=26,periodic=0,bytes=8,edge_bytes=4,corner_bytes=2,iterations=1",
    "stencil2d:grid=5x3,neighbours=8,periodic=1,bytes=512,corner_bytes=8,iterations=1",
    "ring:ranks=9,bytes=1G,bidirectional=1,iterations=1",
    "groups:groups=5,per_group=3,bytes=1K,link_bytes=1M,skip=2,iterations=7,seed=3,shuffle=1",
    "fft:grid=8x8x8,ranks=4,decomp=slab,iterations=1",
    "fft:grid=8x8x8,decomp=pencil,pgrid=2x4,iterations=1",
    "tree:ranks=11,bytes=4K,op=reduce,root=5,iterations=2",
]


@pytest.mark.parametrize("spec", SPECS)
def test_canonical_specs_rebuild_their_matrix(spec):
    m = P.generate(spec)
    assert m.pattern == spec and m.nnz > 0
    assert P.generate(m.pattern) == m


def test_spec_grammar():
    s = P.parse_pattern_spec(" stencil3d : grid = 4x4X4 , neighbors=18, periodic=yes, bytes=2KiB ")
    assert s.name == "stencil3d"
    assert s.params == {"grid": (4, 4, 4), "neighbours": 18, "periodic": True, "bytes": 2048}
    # defaults fill what is not given; the matrix records every parameter
    assert P.generate(s).pattern == "stencil3d:grid=4x4x4,neighbours=18,periodic=1,bytes=2K,edge_bytes=2K,iterations=1"
    assert P.generate("stencil3d:ranks=64,bytes=1") == P.stencil3d((4, 4, 4), nbytes=1)
    assert [P.parse_size(t) for t in ("512", "8B", "64k", "1M", "1MiB", "2G", "1T")] == \
        [512, 8, 65536, 1 << 20, 1 << 20, 2 << 30, 1 << 40]
    assert [P.format_size(v) for v in (0, 1000, 1024, 3 << 20, (1 << 30) + 1)] == \
        ["0", "1000", "1K", "3M", str((1 << 30) + 1)]


@pytest.mark.parametrize("spec, error", [
    ("", "empty pattern spec"),
    ("cube:ranks=4", "unknown pattern 'cube' (known: alltoall,"),
    ("ring:ranks=4,bytes", "'bytes' is not KEY=VALUE"),
    ("ring:ranks=4,bytes=1K,ranks=5", "'ranks' given twice"),
    ("ring:ranks=4,bytes=1K,colour=red", "unknown parameter 'colour' (known: ranks, bytes,"),
    ("ring:ranks=4", "'bytes' is required"),
    ("ring:ranks=0,bytes=1", "'ranks' must be an integer >= 1, got '0'"),
    ("ring:ranks=4,bytes=1.5K", "'bytes' must be a size in bytes"),
    ("ring:ranks=4,bytes=1,bidirectional=maybe", "'bidirectional' must be 0 or 1"),
    ("stencil3d:grid=4x4,bytes=1", "'grid' must be 3 integers >= 1 joined by 'x'"),
    ("stencil3d:grid=4x4x4,ranks=60,bytes=1", "grid 4x4x4 holds 64 ranks, not 60"),
    ("stencil3d:neighbours=7,ranks=8,bytes=1", "'neighbours' must be 6 or 18 or 26"),
    ("stencil3d:bytes=1", "give a process grid or a number of ranks"),
    ("fft:grid=8x8x8,decomp=cube", "'decomp' must be slab or pencil"),
    ("fft:grid=8x8x8,ranks=16,decomp=slab", "slab over 16 ranks needs NY and NZ >= 16"),
    ("tree:ranks=4,bytes=1,root=4", "root must be a rank in [0, 4)"),
    ("alltoall:ranks=10000,bytes=1", "99,990,000 rank pairs is more than"),
    ("alltoall:ranks=4,bytes=8T,iterations=2000000", "exceed 64 bits"),
])
def test_bad_specs(spec, error):
    with pytest.raises(RankwiseError) as exc:
        P.generate(spec)
    assert error in str(exc.value)
    assert "\n" not in str(exc.value)


# ---------------------------------------------------------------- CLI
def summary(stdout: str) -> dict[str, str]:
    """`pattern show` lines: a key, two or more blanks, a value."""
    return dict(re.split(r"\s{2,}", line.strip(), maxsplit=1) for line in stdout.splitlines())


def test_cli_generates_every_pattern(tmp_path):
    (tmp_path / "sizes.txt").write_text("0 5\n7 0\n")
    runs = {
        "a.rwc": (["alltoall", "--ranks", "4", "--bytes", "1M"], P.alltoall(4, 1 << 20)),
        "v.rwc": (["alltoall", "--sizes", tmp_path / "sizes.txt"], P.alltoallv([[0, 5], [7, 0]])),
        "s3.npz": (["stencil3d", "--grid", "2x3x4", "--neighbours", "26", "--periodic", "--bytes", "64K",
                    "--edge-bytes", "1K", "--corner-bytes", "8"],
                   P.stencil3d((2, 3, 4), neighbours=26, periodic=True, nbytes=65536, edge_bytes=1024, corner_bytes=8)),
        "s2.rwc": (["stencil2d", "--ranks", "12", "--neighbors", "8", "--bytes", "16"],
                   P.stencil2d(n_ranks=12, neighbours=8, nbytes=16)),
        "r.rwc": (["ring", "--ranks", "5", "--bytes", "8", "--bidirectional"], P.ring(5, 8, bidirectional=True)),
        "g.rwc": (["groups", "--groups", "3", "--per-group", "4", "--bytes", "1K", "--link-bytes", "1M",
                   "--skip", "1", "--iterations", "10", "--seed", "5"],
                  P.groups(3, 4, 1024, 1 << 20, skip=1, iterations=10, seed=5)),
        "f.rwc": (["fft", "--grid", "8x8x8", "--ranks", "8", "--decomp", "pencil"], P.fft((8, 8, 8), n_ranks=8)),
        "t.rwc": (["tree", "--ranks", "6", "--bytes", "4K", "--op", "reduce", "--root", "2"],
                  P.tree(6, 4096, op="reduce", root=2)),
        "spec.rwc": (["spec", "ring:ranks=3,bytes=2"], P.ring(3, 2)),
    }
    for name, (args, want) in runs.items():
        out = tmp_path / name
        r = run_cli("pattern", *args, "-o", out)
        assert r.returncode == 0, r.stderr
        got = CommMatrix.load(out)
        assert summary(r.stdout)["pattern"] == got.pattern
        if name == "v.rwc":  # from a file, the spec names it
            assert got.pattern == f"alltoallv:sizes={tmp_path / 'sizes.txt'},iterations=1"
            got.pattern = want.pattern
        assert got == want, name


def test_cli_show_summary(tmp_path):
    out = tmp_path / "s.rwc"
    assert run_cli("pattern", "stencil3d", "--ranks", "64", "--bytes", "1M", "-o", out).returncode == 0
    r = run_cli("pattern", "show", out)
    assert r.returncode == 0, r.stderr
    rows = summary(r.stdout)
    assert rows["file"] == str(out) and rows["ranks"] == "64"
    assert rows["pattern"] == "stencil3d:grid=4x4x4,neighbours=6,periodic=0,bytes=1M,iterations=1"
    assert rows["nonzeros"] == "288 (7.14% of ordered pairs)"
    assert rows["bytes"] == f"{288 << 20} (288 MiB)"
    # a 4x4x4 open grid: corners 3 neighbours, interior 6, 288 / 64 on average
    assert rows["out-degree"] == rows["in-degree"] == "min 3, mean 4.5, max 6"
    assert rows["sent per rank"] == "min 3 MiB, mean 4.5 MiB, max 6 MiB"


def test_cli_errors_are_one_line(tmp_path):
    out = tmp_path / "x.rwc"
    assert_one_line_error(run_cli("pattern", "ring", "--ranks", "x", "--bytes", "1", "-o", out),
                          "ring: --ranks must be an integer >= 1, got 'x'")
    assert_one_line_error(run_cli("pattern", "stencil3d", "--grid", "4x4", "--bytes", "1", "-o", out),
                          "stencil3d: --grid must be 3 integers")
    assert_one_line_error(run_cli("pattern", "groups", "--groups", "2", "--bytes", "1", "--link-bytes", "1", "-o", out),
                          "groups: --per-group is required")
    assert_one_line_error(run_cli("pattern", "alltoall", "--sizes", out, "--bytes", "1", "-o", out),
                          "give --bytes (alltoall) or --sizes (alltoallv), not both")
    assert_one_line_error(run_cli("pattern", "spec", "ring:ranks=2", "-o", out), "'bytes' is required")
    assert not out.exists()
    bad = tmp_path / "bad.rwc"
    bad.write_text("rankwise-matrix 1\nranks 2\n0 1 1 x\n")
    assert_one_line_error(run_cli("pattern", "show", bad), f"{bad}:3: bytes ('x') must be an integer")


def test_collective_volumes_follow_the_profiler_rules():
    from rankwise.traffic.patterns import collective

    b = collective(4, 1000, op="bcast", root=2)
    assert sorted(zip(b.src.tolist(), b.dst.tolist())) == [(2, 0), (2, 1), (2, 3)]
    assert set(b.bytes.tolist()) == {1000}
    r = collective(4, 1003, op="reduce", iterations=2)  # floats: 1000 bytes
    assert set(r.dst.tolist()) == {0} and set(r.bytes.tolist()) == {2000} and set(r.msgs.tolist()) == {2}
    a = collective(3, 4 * 4, op="allreduce")  # 4 floats over 3 ranks: blocks 2, 1, 1
    dense = a.to_dense("bytes")
    assert dense[0, 1] == 4 * (1 + 2) and dense[1, 0] == 4 * (2 + 1) and dense[1, 2] == 4 * (1 + 1)
    assert a.total_bytes == 2 * (3 - 1) * 16  # 2 (N-1)/N count s per rank
    assert collective(4, 2, op="allreduce").nnz == 0  # nothing to reduce
    g = collective(5, 10, op="allgather")
    assert g.nnz == 20 and g.total_bytes == 200
    with pytest.raises(RankwiseError, match="op must be"):
        collective(4, 1, op="barrier")


def test_collective_pattern_holds_its_call_times_iterations(tmp_path):
    from rankwise.traffic.collective_calls import CollectiveCall
    from rankwise.traffic.patterns import collective, generate

    assert collective(4, 1000, op="bcast", root=2, iterations=3).collectives == [
        CollectiveCall("bcast", 1000, 3, 2)]
    # reductions count whole floats, as the benchmark does; the root of an unrooted op is 0
    assert collective(4, 1003, op="allreduce", root=3).collectives == [CollectiveCall("allreduce", 1000, 1, 0)]
    assert collective(4, 2, op="reduce", root=1).collectives == [CollectiveCall("reduce", 0, 1, 1)]
    m = generate("collective:ranks=6,bytes=4K,op=scatter,root=5,iterations=7")
    assert m.collectives == [CollectiveCall("scatter", 4096, 7, 5)]
    m.save(tmp_path / "c.rwc")
    assert CommMatrix.load(tmp_path / "c.rwc") == m
    # other patterns hold no call
    assert generate("ring:ranks=4,bytes=1K").collectives == []
