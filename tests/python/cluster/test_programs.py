"""The benchmark programs (rankwise-bench-*) on small simulated clusters and
under Open MPI on localhost, run and parsed by rankwise.cluster.benchmark_programs.

Simulated times depend on the platform only, so the SMPI tests assert
figures derived from the platform: a node link is 12.5 GB/s, so a rank
that has to push B bytes through it needs at least B / 12.5e9 s."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from rankwise.util import paths

from rankwise.traffic import patterns
from rankwise.cluster.benchmark_programs import parse_output, program_name, run_benchmark
from rankwise.util.errors import RankwiseError
from rankwise.traffic.matrix import CommMatrix
from rankwise.sim.platform import Degraded, PlatformSpec, generate

MiB = 1 << 20
NODE_BW = PlatformSpec().node_bw  # bytes/s of every node link
real_mpi = pytest.mark.skipif(not shutil.which("mpirun"), reason="no mpirun on this machine")
LOCAL = "mpirun -np {} --oversubscribe"


@pytest.fixture(scope="module")
def eight(tmp_path_factory):
    """2 racks x 4 nodes x 4 cores, non-blocking, nothing degraded."""
    return generate(PlatformSpec(racks=2, nodes_per_rack=4, cores=4), tmp_path_factory.mktemp("eight"))


@pytest.fixture(scope="module")
def sixteen(tmp_path_factory):
    """2 racks x 8 nodes x 4 cores."""
    return generate(PlatformSpec(racks=2, nodes_per_rack=8, cores=4), tmp_path_factory.mktemp("sixteen"))


def assert_ordered(table):
    assert len(table) > 0
    assert (table.min_us > 0).all()
    assert (table.min_us <= table.median_us).all() and (table.median_us <= table.max_us).all()


# ------------------------------------------------------------------ output
def test_parse_output_reads_meta_tables_extra_columns_and_skipped_sizes():
    text = """\
# program: rankwise-bench-fft 0.1.0
# ranks: 4
# pgrid: 2x2
# table slab
# size  min_us  median_us  max_us  nx  ny  nz
8192  1.500  2.000  2.500  8  8  8
# skipped 576: grid 4x3x3: slab over 4 ranks needs NY and NZ >= 4
# table pencil
# size  min_us  median_us  max_us  nx  ny  nz
8192  1.000  1.250  3.000  8  8  8
576  0.500  0.600  0.700  4  3  3
"""
    result = parse_output(text)
    assert result.program == "rankwise-bench-fft"
    assert result.meta["ranks"] == "4" and result.meta["pgrid"] == "2x2"
    assert list(result.tables) == ["slab", "pencil"]
    slab, pencil = result["slab"], result["pencil"]
    assert slab.skipped == [(576, "grid 4x3x3: slab over 4 ranks needs NY and NZ >= 4")]
    assert pencil.size.dtype == np.int64 and pencil.size.tolist() == [8192, 576]
    np.testing.assert_array_equal(pencil.median_us, [1.25, 0.6])
    assert pencil.extra["ny"].tolist() == [8, 3] and pencil.extra["ny"].dtype == np.int64
    assert pencil.at(576, "max_us") == 0.7 and pencil.at(8192, "nx") == 8
    with pytest.raises(RankwiseError, match="one"):
        result.table  # two tables: no single one
    with pytest.raises(RankwiseError, match="line 3 is not a row of table a"):
        parse_output("# table a\n# size  min_us  median_us  max_us\n1024  1.0  2.0\n")
    assert program_name("stencil") == program_name("rankwise-bench-stencil") == "rankwise-bench-stencil"
    with pytest.raises(RankwiseError, match="unknown benchmark program"):
        program_name("pingpong")


# ---------------------------------------------------------------- alltoall
def test_sim_alltoall_is_deterministic_grows_with_size_and_is_bandwidth_bound(eight):
    args = ["--sizes", "1K:1M", "--iterations", "3"]
    first = run_benchmark("alltoall", args, sim=eight.platform_xml)
    again = run_benchmark("alltoall", args, sim=eight.platform_xml)
    table = first.table
    assert first.meta["ranks"] == "8" and first.meta["mpi"].startswith("SimGrid")
    assert table.size.tolist() == [1024 << k for k in range(11)]
    np.testing.assert_array_equal(table.median_us, again.table.median_us)  # simulated: exact
    np.testing.assert_array_equal(table.max_us, again.table.max_us)
    assert_ordered(table)
    assert (np.diff(table.median_us) > 0).all()
    # Each rank sends 7 x 1 MiB through its own 12.5 GB/s link; the pairwise
    # exchange (7 steps) adds at most one route latency (< 10 us) per step.
    floor = 7 * MiB / NODE_BW * 1e6
    assert floor <= table.at(MiB) <= floor + 7 * 10


def test_sim_alltoall_is_slower_with_a_degraded_node_link(eight, tmp_path):
    bad = generate(PlatformSpec(racks=2, nodes_per_rack=4, cores=4,
                                degraded=[Degraded("node", 5, bw_factor=0.25)]), tmp_path / "bad")
    args = ["--sizes", "1K,1M", "--iterations", "2"]
    healthy = run_benchmark("alltoall", args, sim=eight.platform_xml).table
    degraded = run_benchmark("alltoall", args, sim=bad.platform_xml).table
    # node-5 alone must push 7 MiB through a quarter of a link, and every
    # step of the pairwise exchange waits for its pair with node-5.
    assert degraded.at(MiB) >= 7 * MiB / (NODE_BW / 4) * 1e6
    assert degraded.at(MiB) > 3.5 * healthy.at(MiB)
    assert degraded.at(1024) >= healthy.at(1024)


def test_sim_alltoall_check_and_memory_limit(eight):
    result = run_benchmark("alltoall", ["--sizes", "8,1K,64K", "--iterations", "2", "--check",
                                        "--max-memory", "256K"], sim=eight.platform_xml)
    table = result.table
    assert result.meta["check"].startswith("on")
    assert table.size.tolist() == [8, 1024]  # 64K needs 2 x 8 x 64K = 1M
    assert table.skipped and table.skipped[0][0] == 65536 and "--max-memory" in table.skipped[0][1]


def test_sim_runs_on_a_given_host_list_and_refuses_unknown_hosts(eight, tmp_path):
    hosts = ["node-0", "node-0", "node-4", "node-4"]
    result = run_benchmark("alltoall", ["--sizes", "1M", "--iterations", "1"], sim=eight.platform_xml,
                           hosts=hosts)
    assert result.meta["ranks"] == "4"
    # Two ranks per node: each node link carries 2 ranks x 2 MiB to the other node.
    assert result.table.at(MiB) >= 4 * MiB / NODE_BW * 1e6
    hostfile = tmp_path / "hosts"
    hostfile.write_text("node-1 slots=2\nnode-2\n")
    assert run_benchmark("alltoall", ["--sizes", "1K", "--iterations", "1"], sim=eight.platform_xml,
                         hostfile=hostfile).meta["ranks"] == "3"
    with pytest.raises(RankwiseError, match="node-99"):
        run_benchmark("alltoall", [], sim=eight.platform_xml, hosts=["node-0", "node-99"])


def test_program_errors_become_one_line(eight):
    with pytest.raises(RankwiseError, match=r"rankwise-bench-alltoall: unknown option '--bogus'"):
        run_benchmark("alltoall", ["--bogus"], sim=eight.platform_xml, nodes=2)
    with pytest.raises(RankwiseError, match=r"--grid 3x3x3 holds 27 ranks, the job has 8"):
        run_benchmark("stencil", ["--grid", "3x3x3"], sim=eight.platform_xml)
    with pytest.raises(RankwiseError, match="6 groups x 1 ranks|not the job's 8 ranks"):
        run_benchmark("groups", ["--groups", "6", "--per-group", "1"], sim=eight.platform_xml)


# ----------------------------------------------------------------- stencil
def test_sim_stencil_modes_deliver_every_neighbours_block(sixteen):
    """--check: every rank verifies the block of each of its neighbours,
    forwarded or not, after every exchange (any mismatch fails the run)."""
    for grid, extra in (("2x2x4", []), ("4x2x2", ["--periodic"]), ("1x4x4", []), ("2x2x4", ["--periodic"])):
        result = run_benchmark("stencil", ["--sizes", "8,1K", "--iterations", "2", "--check",
                                           "--grid", grid, *extra], sim=sixteen.platform_xml, nodes=4,
                               ranks_per_node=4)
        assert result.meta["grid"] == grid and result.meta["check"].startswith("on")
        assert list(result.tables) == ["1d", "2d", "3d"]


def test_sim_stencil_3d_beats_1d_when_z_neighbours_share_a_node(sixteen):
    """Periodic 2x2x4 grid, 4 ranks per node: ranks (x, y, 0..3) -- a z
    column -- fill one node. Every mode moves 26 blocks per rank, but 1d
    sends the 24 with dx or dy != 0 straight across the network (96 blocks
    per node link), while 3d sends 2 (x) and 2 x 3 (y) blocks across and
    the 2 x 9 of the z phase inside the node: 32 per node link, 3x less.
    With one rank per node nothing stays inside: 3d moves the same 26
    blocks in three phases instead of one and is not faster."""
    args = ["--sizes", "8,1M", "--iterations", "2", "--grid", "2x2x4", "--periodic"]
    packed = run_benchmark("stencil", args, sim=sixteen.platform_xml, nodes=4, ranks_per_node=4)
    assert packed["1d"].at(MiB) >= 96 * MiB / NODE_BW * 1e6
    assert packed["3d"].at(MiB) < packed["1d"].at(MiB) / 2.5
    assert packed["2d"].at(MiB) < packed["1d"].at(MiB) / 2.5  # same 8 blocks across
    assert packed["1d"].at(8) < packed["3d"].at(8)  # small blocks: 1 phase of latency, not 3
    spread = run_benchmark("stencil", args, sim=sixteen.platform_xml, ranks_per_node=1)
    assert spread["3d"].at(MiB) >= spread["1d"].at(MiB)
    assert spread["1d"].at(MiB) >= 26 * MiB / NODE_BW * 1e6


# ------------------------------------------------------------------ groups
def test_sim_groups_sends_exactly_the_generator_pattern(eight, tmp_path):
    out = tmp_path / "traffic.rwc"
    result = run_benchmark("groups", ["--groups", "4", "--sizes", "1000", "--link-bytes", "1M",
                                      "--skip", "2", "--iterations", "7", "--seed", "11",
                                      "--traffic", out], sim=eight.platform_xml)
    assert result.meta["groups"] == "4" and result.meta["per-group"] == "2"
    sent = CommMatrix.load(out)
    expected = patterns.groups(4, 2, 1000, MiB, skip=2, iterations=7, seed=11)
    np.testing.assert_array_equal(sent.src, expected.src)
    np.testing.assert_array_equal(sent.dst, expected.dst)
    np.testing.assert_array_equal(sent.msgs, expected.msgs)
    np.testing.assert_array_equal(sent.bytes, expected.bytes)
    # Iterations 0, 3 and 6 also carry the 1 MiB links; the other four only
    # 1000-byte messages. Some step of the pairwise exchange moves 1 MiB.
    table = result.table
    plain, linked = table.at(1000, "min_us"), table.at(1000, "max_us")
    assert table.at(1000, "median_us") == plain
    assert linked >= plain + MiB / NODE_BW * 1e6
    assert table.at(1000, "mean_us") == pytest.approx((4 * plain + 3 * linked) / 7, abs=2e-3)


def pairwise_cost(perm, per_group, rack):
    """Node-link transfer times of one groups iteration under SMPI's pairwise
    all-to-allv (step k: rank r with r XOR k), for uplinks as fast as a node
    link: a step lasts one transfer if some pair of group mates meets in it,
    n transfers if n such pairs cross the same uplink (they share it)."""
    n = len(perm)
    group = np.empty(n, int)
    group[perm] = np.arange(n) // per_group
    steps = []
    for k in range(1, n):
        pairs = [(r, r ^ k) for r in range(n) if r < r ^ k and group[r] == group[r ^ k]]
        crossing = sum(1 for a, b in pairs if rack[a] != rack[b])
        steps.append(max(1 if pairs else 0, crossing))
    return sum(steps)


def test_sim_groups_shuffled_across_oversubscribed_racks_is_slower(tmp_path):
    """2 racks of 4 nodes, uplinks at 1/4 of non-blocking (one node link's
    worth). Groups of 4 in rank order stay inside a rack and meet in steps
    1, 2, 3 of the pairwise exchange: 3 transfers of D. Shuffled with seed 0,
    group mates meet in more steps and share the uplinks: 9 transfers."""
    spec = PlatformSpec(racks=2, nodes_per_rack=4, cores=4, oversubscription=4)
    assert spec.uplink_bw == NODE_BW
    gen = generate(spec, tmp_path / "over")
    rack = np.arange(8) // 4
    shuffled_cost = pairwise_cost(patterns.shuffle_ranks(8, 0), 4, rack)
    ordered_cost = pairwise_cost(np.arange(8), 4, rack)
    assert (ordered_cost, shuffled_cost) == (3, 9)
    args = ["--per-group", "4", "--sizes", "1K,1M", "--link-bytes", "8", "--iterations", "3"]
    shuffled = run_benchmark("groups", args, sim=gen.platform_xml).table
    ordered = run_benchmark("groups", [*args, "--no-shuffle"], sim=gen.platform_xml).table
    transfer = MiB / NODE_BW * 1e6
    # on top of the latencies of the 7 steps, which the 1K row shows
    assert ordered.at(MiB) == pytest.approx(ordered.at(1024) + ordered_cost * transfer, rel=0.03)
    assert shuffled.at(MiB) == pytest.approx(shuffled.at(1024) + shuffled_cost * transfer, rel=0.03)
    assert shuffled.at(MiB) > 2.5 * ordered.at(MiB)


# --------------------------------------------------------------------- fft
def test_sim_fft_slab_and_pencil_trade_latency_for_volume(eight):
    """8 ranks. slab: one all-to-all of 7 pairwise steps, each moving 1/8 of
    a rank's data; pencil 4x2: rows (1 step of 1/2) then columns (3 steps
    of 1/4). Small grid: latency counts, pencil's 4 steps beat slab's 7.
    Large grid: volume counts, slab moves 7/8 of the data, pencil 5/4."""
    result = run_benchmark("fft", ["--grid", "16x16x16,128x128x128", "--iterations", "2"],
                           sim=eight.platform_xml)
    slab, pencil = result["slab"], result["pencil"]
    assert result.meta["pgrid"] == "4x2"
    small, large = 16**3 * 16, 128**3 * 16
    assert slab.size.tolist() == pencil.size.tolist() == [small, large]
    assert pencil.extra["nx"].tolist() == [16, 128]
    assert pencil.at(small) < slab.at(small)
    assert slab.at(large) < pencil.at(large)
    share = large / 8  # bytes of one rank
    assert slab.at(large) >= 7 / 8 * share / NODE_BW * 1e6
    assert pencil.at(large) >= 5 / 4 * share / NODE_BW * 1e6


def test_sim_fft_check_with_uneven_blocks_and_unfit_grids(eight):
    result = run_benchmark("fft", ["--grid", "7x10x9,8x4x16", "--iterations", "1", "--check",
                                   "--pgrid", "2x4"], sim=eight.platform_xml)
    assert result["slab"].size.tolist() == [7 * 10 * 9 * 16]
    assert "slab over 8 ranks needs NY and NZ >= 8" in result["slab"].skipped[0][1]
    assert result["pencil"].size.tolist() == [7 * 10 * 9 * 16, 8 * 4 * 16 * 16]


# ------------------------------------------------------------- collectives
def test_sim_collectives_one_table_each(eight):
    args = ["--sizes", "2,4,64K,1M", "--iterations", "2"]
    result = run_benchmark("collectives", args, sim=eight.platform_xml)
    names = ["bcast", "reduce", "allreduce", "gather", "scatter", "allgather"]
    assert list(result.tables) == names
    again = run_benchmark("collectives", args, sim=eight.platform_xml)
    for name in names:
        table = result[name]
        assert_ordered(table)
        np.testing.assert_array_equal(table.median_us, again[name].median_us)
        assert table.at(MiB) > table.at(4)
    for name in ("reduce", "allreduce"):  # floats: 2 bytes is too small
        assert result[name].size.tolist() == [4, 65536, MiB]
        assert result[name].skipped[0][0] == 2
    assert result["bcast"].size.tolist() == [2, 4, 65536, MiB]
    # The root of gather takes in 7 x 1 MiB through its link; every rank of
    # allgather does.
    assert result["gather"].at(MiB) >= 7 * MiB / NODE_BW * 1e6
    assert result["allgather"].at(MiB) >= 7 * MiB / NODE_BW * 1e6
    only = run_benchmark("collectives", ["--collectives", "bcast,allreduce", "--root", "3",
                                         "--sizes", "1K"], sim=eight.platform_xml)
    assert list(only.tables) == ["bcast", "allreduce"] and only.meta["root"] == "3"


# ---------------------------------------------------------------- real MPI
@real_mpi
@pytest.mark.parametrize("ranks", [2, 4])
def test_real_alltoall_and_collectives(ranks):
    result = run_benchmark("alltoall", ["--sizes", "8,1K,64K", "--iterations", "5", "--check"],
                           launcher=LOCAL.format(ranks))
    assert result.meta["ranks"] == str(ranks) and "Open MPI" in result.meta["mpi"]
    assert result.table.size.tolist() == [8, 1024, 65536]
    assert_ordered(result.table)
    colls = run_benchmark("collectives", ["--sizes", "4,1K", "--iterations", "3"],
                          launcher=LOCAL.format(ranks))
    assert len(colls.tables) == 6
    for table in colls.tables.values():
        assert_ordered(table)


@real_mpi
@pytest.mark.parametrize("ranks,grid", [(4, "1x2x2"), (3, "3x1x1"), (4, "2x2x1")])
def test_real_stencil_check_all_modes(ranks, grid):
    for periodic in ([], ["--periodic"]):
        result = run_benchmark("stencil", ["--sizes", "8,4K", "--iterations", "3", "--check",
                                           "--grid", grid, *periodic], launcher=LOCAL.format(ranks))
        assert list(result.tables) == ["1d", "2d", "3d"]
        for table in result.tables.values():
            assert_ordered(table)


@real_mpi
def test_real_groups_traffic_matches_the_generator(tmp_path):
    out = tmp_path / "g.rwc"
    result = run_benchmark("groups", ["--groups", "2", "--sizes", "100,2K", "--link-bytes", "5000",
                                      "--skip", "1", "--iterations", "5", "--seed", "3", "--traffic", out],
                           launcher=LOCAL.format(4))
    assert result.table.size.tolist() == [100, 2048]
    sent = CommMatrix.load(out)
    expected = (patterns.groups(2, 2, 100, 5000, skip=1, iterations=5, seed=3).to_dense()
                + patterns.groups(2, 2, 2048, 5000, skip=1, iterations=5, seed=3).to_dense())
    np.testing.assert_array_equal(sent.to_dense(), expected)
    assert "rankwise-bench-groups" in sent.source


@real_mpi
@pytest.mark.parametrize("ranks,pgrid", [(3, "3x1"), (4, "2x2"), (4, "1x4")])
def test_real_fft_check(ranks, pgrid):
    result = run_benchmark("fft", ["--grid", "8x8x8,7x5x9", "--iterations", "2", "--check",
                                   "--pgrid", pgrid], launcher=LOCAL.format(ranks))
    assert result.meta["pgrid"] == pgrid
    for table in result.tables.values():
        assert_ordered(table)
    assert result["pencil"].size.tolist() == [8**3 * 16, 7 * 5 * 9 * 16]


@real_mpi
def test_real_errors():
    with pytest.raises(RankwiseError, match="--iterations must be an integer >= 1, got '0'"):
        run_benchmark("fft", ["--iterations", "0"], launcher=LOCAL.format(2))
    with pytest.raises(RankwiseError, match="--sizes does not apply"):
        run_benchmark("fft", ["--sizes", "1K"], launcher=LOCAL.format(2))
    with pytest.raises(RankwiseError, match="either sim"):
        run_benchmark("fft", [])


PROFILER = paths.PACKAGE_DIR / "_lib" / "librankwise_profile.so"


@real_mpi
@pytest.mark.skipif(not PROFILER.exists(), reason="the PMPI profiler is not built")
def test_real_profiled_traffic_is_the_generators_pattern(tmp_path):
    """Under the PMPI profiler (LD_PRELOAD) the timed iterations are all it
    records: the harness's barriers, timings and file writing run under
    MPI_Pcontrol(0), the warm-up too."""
    def profiled(program, args, ranks):
        out = tmp_path / f"{program}.rwc"
        run_benchmark(program, args, launcher=f"mpirun -np {ranks} --oversubscribe -x LD_PRELOAD={PROFILER} "
                      f"-x RANKWISE_PROFILE_OUT={out}")
        return CommMatrix.load(out)

    groups = profiled("groups", ["--groups", "3", "--sizes", "1000", "--link-bytes", "64K", "--skip", "2",
                                 "--iterations", "7", "--seed", "5", "--traffic", tmp_path / "own.rwc"], 6)
    expected = patterns.groups(3, 2, 1000, 65536, skip=2, iterations=7, seed=5)
    for what in ("bytes", "msgs"):
        np.testing.assert_array_equal(groups.to_dense(what), expected.to_dense(what))
    stencil = profiled("stencil", ["--mode", "1d", "--grid", "2x1x2", "--sizes", "1K", "--iterations", "3"], 4)
    expected = patterns.stencil3d((2, 1, 2), neighbours=26, nbytes=1024, iterations=3)
    for what in ("bytes", "msgs"):
        np.testing.assert_array_equal(stencil.to_dense(what), expected.to_dense(what))
    for mode in ("2d", "3d"):  # forwarding modes: fewer, larger messages (patterns' mode=)
        stencil = profiled("stencil", ["--mode", mode, "--grid", "2x2x2", "--sizes", "1K", "--iterations", "2"], 8)
        expected = patterns.stencil3d((2, 2, 2), nbytes=1024, mode=mode, iterations=2)
        for what in ("bytes", "msgs"):
            np.testing.assert_array_equal(stencil.to_dense(what), expected.to_dense(what), err_msg=f"{mode} {what}")
    # The collectives program: logical volumes (the profiler's rule), not the
    # messages of whatever algorithm Open MPI picked; 1002 bytes make
    # allreduce's blocks uneven (250 floats over 4 ranks) and reduce round down.
    for op in ("bcast", "reduce", "allreduce", "gather", "scatter", "allgather"):
        coll = profiled("collectives", ["--collectives", op, "--sizes", "1002", "--iterations", "3",
                                        "--root", "1"], 4)
        expected = patterns.collective(4, 1002, op=op, root=1, iterations=3)
        for what in ("bytes", "msgs"):
            np.testing.assert_array_equal(coll.to_dense(what), expected.to_dense(what), err_msg=f"{op} {what}")
    alltoall = profiled("alltoall", ["--sizes", "2K", "--iterations", "4"], 4)
    expected = patterns.alltoall(4, 2048, iterations=4)
    for what in ("bytes", "msgs"):
        np.testing.assert_array_equal(alltoall.to_dense(what), expected.to_dense(what))
    for decomp, ranks in (("slab", 4), ("pencil", 4)):
        fft = profiled("fft", ["--grid", "8x8x8", "--decomp", decomp, "--iterations", "2"], ranks)
        expected = patterns.fft((8, 8, 8), n_ranks=ranks, decomp=decomp, iterations=2)
        for what in ("bytes", "msgs"):
            np.testing.assert_array_equal(fft.to_dense(what), expected.to_dense(what), err_msg=f"fft {decomp} {what}")


# ------------------------------------------------------- profiled under SMPI
def test_sim_profiled_traffic_is_the_generators_pattern(eight, tmp_path):
    """The -profiled SMPI builds link the profiler in; the harness pauses it
    with rw_profile_pause/resume (SMPI aborts in MPI_Pcontrol), so the
    matrix holds the timed iterations only, as under real MPI."""
    def profiled(program, args, ranks):
        out = tmp_path / f"{program}-{len(list(tmp_path.iterdir()))}.rwc"
        run_benchmark(program, args, sim=eight.platform_xml, nodes=ranks, profile=out)
        return CommMatrix.load(out)

    cases = [
        (("stencil", ["--mode", "3d", "--grid", "2x2x2", "--sizes", "1K", "--iterations", "2"], 8),
         patterns.stencil3d((2, 2, 2), nbytes=1024, mode="3d", iterations=2)),
        (("alltoall", ["--sizes", "2K", "--iterations", "3"], 4), patterns.alltoall(4, 2048, iterations=3)),
        (("groups", ["--groups", "2", "--sizes", "1000", "--link-bytes", "4K", "--iterations", "3",
                     "--seed", "2", "--traffic", tmp_path / "own.rwc"], 6),
         patterns.groups(2, 3, 1000, 4096, iterations=3, seed=2)),
        (("fft", ["--grid", "8x8x8", "--decomp", "pencil", "--iterations", "2"], 4),
         patterns.fft((8, 8, 8), n_ranks=4, decomp="pencil", iterations=2)),
        (("collectives", ["--collectives", "allreduce", "--sizes", "1002", "--iterations", "2"], 4),
         patterns.collective(4, 1002, op="allreduce", iterations=2)),
    ]
    for (program, args, ranks), expected in cases:
        got = profiled(program, args, ranks)
        for what in ("bytes", "msgs"):
            np.testing.assert_array_equal(got.to_dense(what), expected.to_dense(what), err_msg=f"{program} {what}")
