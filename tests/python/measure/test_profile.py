"""The PMPI profiler: exact matrices against hand-computed traffic, under
Open MPI (LD_PRELOAD, 4 ranks) and SMPI (linked in); world ranks of split,
duplicated and inter-communicators; rw_profile_write/reset/pause and
MPI_Pcontrol; nothing written by a run that crashes; the CLI.

The MPI program is tests/engine/mpi/profile_exerciser.c, compiled here the
way a user builds an application (mpicc alone for LD_PRELOAD; smpicc with
`rankwise profile --smpi-flags` for the simulator). The expected matrices
below restate its traffic and the per-collective rules of docs/reference/formats.md
("Profile") independently of the C code."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
from conftest import assert_one_line_error, run_cli

from rankwise.measure import profile as prof
from rankwise.traffic.collective_calls import CollectiveCall as CC
from rankwise.util.errors import RankwiseError
from rankwise.cluster.launch import mpi_environment
from rankwise.traffic import patterns as P
from rankwise.traffic.matrix import CommMatrix
from rankwise.sim.platform_file import read_platform

SOURCE = Path(__file__).resolve().parents[2] / "engine" / "mpi" / "profile_exerciser.c"
INCLUDE = Path(__file__).resolve().parents[3] / "engine" / "include"
LAUNCHER = "mpirun -np 4 --oversubscribe"

needs_mpi = pytest.mark.skipif(not (shutil.which("mpicc") and shutil.which("mpirun")), reason="no Open MPI")
needs_smpi = pytest.mark.skipif(not (shutil.which("smpicc") and shutil.which("smpirun")), reason="no SimGrid")


def _compile(cmd: list[str]) -> None:
    env = dict(os.environ)
    env.pop("SMPI_PRETEND_CC", None)
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.fixture(scope="session")
def exerciser_mpi(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("exerciser-mpi") / "profile_exerciser"
    _compile(["mpicc", "-O2", "-pthread", f"-I{INCLUDE}", str(SOURCE), "-o", str(out)])
    return out


@pytest.fixture(scope="session")
def exerciser_smpi(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("exerciser-smpi") / "profile_exerciser"
    _compile(["smpicc", "-O2", str(SOURCE), *prof.smpi_flags(), "-o", str(out)])
    return out


def entries(matrix: CommMatrix) -> dict[tuple[int, int], tuple[int, int]]:
    return {(int(s), int(d)): (int(m), int(b))
            for s, d, m, b in zip(matrix.src, matrix.dst, matrix.msgs, matrix.bytes)}


class Traffic:
    """Expected matrix: (src, dst) -> [messages, bytes]."""

    def __init__(self, n: int):
        self.n = n
        self.m: dict[tuple[int, int], list[int]] = defaultdict(lambda: [0, 0])

    def send(self, i: int, j: int, nbytes: int, msgs: int = 1) -> None:
        self.m[(i, j)][0] += msgs
        self.m[(i, j)][1] += nbytes

    def coll(self, i: int, j: int, nbytes: int) -> None:
        """A logical collective message: none when empty or to oneself."""
        if i != j and nbytes > 0:
            self.send(i, j, nbytes)

    def pairs(self, rule) -> None:
        for i in range(self.n):
            for j in range(self.n):
                self.coll(i, j, rule(i, j))

    def allreduce(self, count: int, size: int) -> None:
        """Reduce-scatter + allgather of blocks blk(k) = count/N + (k < count mod N)."""
        blk = [count // self.n + (k < count % self.n) for k in range(self.n)]
        for i in range(self.n):
            for j in range(self.n):
                if i != j:
                    for b in (blk[j], blk[i]):
                        if b:
                            self.send(i, j, b * size)

    def result(self) -> dict[tuple[int, int], tuple[int, int]]:
        return {k: (v[0], v[1]) for k, v in self.m.items() if v != [0, 0]}


def expected_all(n: int, real_mpi: bool) -> dict:
    """The exerciser's `all` mode on n ranks."""
    t = Traffic(n)
    right, left = (lambda r: (r + 1) % n), (lambda r: (r - 1) % n)
    # point-to-point: counted on the send side, probed receive included once
    t.send(0, 1, 40)         # Send 10 ints
    t.send(1, 0, 24)         # Ssend 3 doubles
    t.send(n - 1, 0, 20)     # Rsend 5 ints
    t.send(1, n - 1, 7)      # Bsend 7 chars
    t.send(1, 0, 11)         # probed, then received
    for r in range(n):
        t.send(r, right(r), 100)        # Isend
        t.send(r, left(r), 16)          # Issend 2 doubles
        t.send(r, right(r), 120, 5)     # persistent: 3 MPI_Start + 2 MPI_Startall of 6 ints
        t.send(r, right(r), 9)          # Sendrecv
        t.send(r, left(r), 16)          # Sendrecv_replace 4 ints
        t.send(r, r, 5)                 # to itself (MPI_PROC_NULL adds nothing)
    # collectives: the logical rules
    t.pairs(lambda i, j: 100 if i == 0 else 0)               # Bcast root 0, 25 ints
    t.pairs(lambda i, j: 24 if j == 1 % n else 0)            # Reduce root 1, 3 doubles
    t.allreduce(10, 8)
    t.allreduce(2, 4)
    t.allreduce(4, 4)                                        # in place
    t.pairs(lambda i, j: 16 if j == 2 % n else 0)            # Gather root 2, 4 ints
    t.pairs(lambda i, j: 4 * (i + 1) if j == 0 else 0)       # Gatherv root 0, i+1 ints
    t.pairs(lambda i, j: 16 if i == n - 1 else 0)            # Scatter root n-1, 2 doubles
    t.pairs(lambda i, j: 4 * j if i == 0 else 0)             # Scatterv root 0, j ints
    t.pairs(lambda i, j: 3)                                  # Allgather 3 bytes
    t.pairs(lambda i, j: 8)                                  # Allgather in place, 2 ints
    t.pairs(lambda i, j: i + 2)                              # Allgatherv, i+2 bytes
    t.pairs(lambda i, j: 20)                                 # Alltoall 5 ints
    t.pairs(lambda i, j: 4 * ((i + j) % 3))                  # Alltoallv
    t.pairs(lambda i, j: (1 + j) * (8 if j % 2 else 4))      # Alltoallw
    t.pairs(lambda i, j: 16)                                 # Reduce_scatter_block 2 doubles
    t.pairs(lambda i, j: 4 * (j + 1))                        # Reduce_scatter, j+1 ints
    t.pairs(lambda i, j: 12 if j == i + 1 else 0)            # Scan 3 ints
    t.pairs(lambda i, j: 16 if j == i + 1 else 0)            # Exscan 2 doubles
    t.pairs(lambda i, j: 6 if i == 1 % n else 0)             # Ibcast root 1
    t.allreduce(1, 4)                                        # Iallreduce 1 int
    t.pairs(lambda i, j: 2)                                  # Ialltoall
    t.pairs(lambda i, j: 8 if j == 0 else 0)                 # Igather root 0
    t.pairs(lambda i, j: 20 if j == 0 else 0)                # Ireduce root 0
    t.pairs(lambda i, j: 4)                                  # Iallgather
    t.pairs(lambda i, j: 3 if i == 0 else 0)                 # Iscatter root 0
    t.pairs(lambda i, j: 4 if j == i + 1 else 0)             # Iexscan
    if real_mpi:  # neighbourhood collectives (SMPI 3.32 has none)
        for r in range(n):
            for nb in (left(r), right(r)):  # periodic ring: -1 then +1
                t.coll(r, nb, 12)           # Neighbor_alltoall 3 ints
                t.coll(r, nb, 8)            # Neighbor_allgather 1 double
            t.coll(r, (r + 2) % n, 7)       # Neighbor_alltoallv on a distributed graph
    return t.result()


def expected_split(n: int, real_mpi: bool) -> dict:
    """The exerciser's `split` mode: ranks of one parity, numbered backwards."""
    t = Traffic(n)
    groups = [sorted((r for r in range(n) if r % 2 == c), reverse=True) for c in (0, 1)]
    for g in groups:  # g[k] is the world rank of sub-rank k
        if len(g) > 1:
            t.send(g[0], g[1], 13)  # Send sub 0 -> sub 1
            t.send(g[1], g[0], 19)  # Send sub 1 -> sub 0 on a duplicate
        for i in g:
            for j in g:
                t.coll(i, j, 17 if i == g[0] else 0)  # Bcast root sub 0
                t.coll(i, j, 4)  # Alltoall 1 int
                t.coll(i, j, 2)  # Allgather on the duplicate
    if real_mpi:  # intercommunicator: local k <-> remote k
        for a, b in zip(*groups):
            t.send(a, b, 21)
            t.send(b, a, 21)
    return t.result()


def canonical(n: int, calls: list[CC]) -> list[CC]:
    """Calls in the order (and merged as) a matrix keeps them."""
    return CommMatrix(n, [], [], [], [], collectives=calls).collectives


def expected_all_calls(n: int) -> list[CC]:
    """The exerciser's `all` mode: the calls of the seven grouped operations
    (bytes as rankwise-bench-collectives counts them); the v/w forms, scans,
    reduce_scatter and barriers are volumes only."""
    return canonical(n, [
        CC("bcast", 100, 1, 0), CC("reduce", 24, 1, 1 % n), CC("allreduce", 80), CC("allreduce", 8),
        CC("allreduce", 16), CC("gather", 16, 1, 2 % n), CC("scatter", 16, 1, n - 1), CC("allgather", 3),
        CC("allgather", 8), CC("alltoall", 20),
        CC("bcast", 6, 1, 1 % n), CC("allreduce", 4), CC("alltoall", 2), CC("gather", 8, 1, 0),
        CC("reduce", 20, 1, 0), CC("allgather", 4), CC("scatter", 3, 1, 0)])


def expected_split_calls(n: int) -> list[CC]:
    """The exerciser's `split` mode: each parity's communicator, its world
    ranks in communicator order (backwards), the duplicate's calls on it."""
    calls = []
    for parity in (0, 1):
        members = tuple(sorted((r for r in range(n) if r % 2 == parity), reverse=True))
        if len(members) > 1:
            calls += [CC("bcast", 17, 1, 0, members), CC("alltoall", 4, 1, 0, members),
                      CC("allgather", 2, 1, 0, members)]
    return canonical(n, calls)


def check_summary(result: prof.ProfileResult) -> None:
    """The summary agrees with the matrix, rank by rank."""
    s, m = result.summary, result.matrix
    assert s.n_ranks == m.n_ranks
    assert (s["rank"] == np.arange(m.n_ranks)).all()
    assert (s["sent_bytes"] == m.sent_bytes()).all()
    assert (s["recv_bytes"] == m.received_bytes()).all()
    assert (s["sent_bytes"] == s["p2p_bytes"] + s["coll_bytes"]).all()
    assert (s["sent_msgs"] == s["p2p_msgs"] + s["coll_msgs"]).all()
    assert s.total["sent_bytes"] == m.total_bytes and s.total["recv_msgs"] == m.total_msgs
    assert (s["n_p2p"] > 0).all() and (s["n_coll"] > 0).all() and (s["n_wait"] > 0).all()
    classes = s["t_p2p"] + s["t_coll"] + s["t_wait"] + s["t_other"]
    assert abs(classes - s["mpi_time"]).max() < 1e-6
    assert (s["mpi_time"] >= 0).all() and s.elapsed >= 0


# --- real MPI ---------------------------------------------------------------------------


@needs_mpi
def test_real_mpi_matrix_is_exactly_the_hand_computed_one(exerciser_mpi, tmp_path):
    out = tmp_path / "all.rwc"
    result = prof.profile_launcher(LAUNCHER, str(exerciser_mpi), ["all"], out, echo=False)
    assert entries(CommMatrix.load(out)) == expected_all(4, real_mpi=True)
    assert CommMatrix.load(out).collectives == expected_all_calls(4)
    assert result.matrix.source.startswith("mpi:mpirun -np 4")
    assert prof.summary_path(out).exists()
    check_summary(result)
    assert not list(tmp_path.glob(".rankwise-profile-*"))  # the work folder is gone


@needs_mpi
def test_real_mpi_split_dup_and_intercommunicators_are_world_ranks(exerciser_mpi, tmp_path):
    result = prof.profile_launcher(LAUNCHER, str(exerciser_mpi), ["split"], tmp_path / "s.rwc", echo=False)
    assert entries(result.matrix) == expected_split(4, real_mpi=True)
    assert result.matrix.collectives == expected_split_calls(4)


@needs_mpi
def test_real_mpi_write_reset_pause_and_pcontrol(exerciser_mpi, tmp_path):
    mid = tmp_path / "phase-a.rwc"
    result = prof.profile_launcher(LAUNCHER, str(exerciser_mpi), ["phases", str(mid)], tmp_path / "end.rwc",
                                   echo=False)
    assert entries(CommMatrix.load(mid)) == {(r, (r + 1) % 4): (1, 1000) for r in range(4)}
    assert prof.read_summary(prof.summary_path(mid)).total["sent_bytes"] == 4000
    # after the reset: the paused phase and the MPI_Pcontrol(0) alltoall are absent
    assert entries(result.matrix) == {(r, (r - 1) % 4): (1, 3000) for r in range(4)}
    assert result.summary.total["n_coll"] == 0  # the only collectives ran paused
    assert result.matrix.collectives == [] and CommMatrix.load(mid).collectives == []


@needs_mpi
def test_real_mpi_threads_record_at_once(exerciser_mpi, tmp_path):
    """MPI_THREAD_MULTIPLE: 4 threads per rank send and run alltoalls on
    duplicates of one communicator (one shared profiler entry)."""
    result = prof.profile_launcher(LAUNCHER, str(exerciser_mpi), ["threads"], tmp_path / "t.rwc", echo=False)
    if result.matrix.nnz == 0:
        pytest.skip("this MPI does not provide MPI_THREAD_MULTIPLE")
    t = Traffic(4)
    for r in range(4):
        t.send(r, (r + 1) % 4, 50 * (1 + 2 + 3 + 4), 200)  # 50 sends of t + 1 bytes per thread
        for j in range(4):
            if j != r:
                t.send(r, j, 4 * 200, 200)  # 4 threads x 50 alltoalls of 1 int
    assert entries(result.matrix) == t.result()
    # counted under the lock: every call of every thread, on duplicates of the world
    assert result.matrix.collectives == [CC("alltoall", 4, 200)]


@needs_mpi
def test_real_mpi_crash_writes_nothing(exerciser_mpi, tmp_path):
    out = tmp_path / "crash.rwc"
    with pytest.raises(RankwiseError, match="no matrix written") as err:
        prof.profile_launcher(LAUNCHER, str(exerciser_mpi), ["crash"], out, echo=False)
    assert "\n" not in str(err.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    # an older matrix stays as it was
    out.write_text("old\n")
    with pytest.raises(RankwiseError):
        prof.profile_launcher(LAUNCHER, str(exerciser_mpi), ["crash"], out, echo=False)
    assert out.read_text() == "old\n"


@needs_mpi
def test_plain_ld_preload_writes_the_default_file_in_the_working_directory(exerciser_mpi, tmp_path):
    lib = prof.library("mpi")
    env = mpi_environment()
    env.pop("RANKWISE_PROFILE_OUT", None)
    r = subprocess.run([*LAUNCHER.split(), "-x", f"LD_PRELOAD={lib}", str(exerciser_mpi), "split"],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    matrix = CommMatrix.load(tmp_path / "rankwise-profile.rwc")
    assert entries(matrix) == expected_split(4, real_mpi=True)
    assert matrix.source == f"pmpi:{exerciser_mpi} split"
    assert (tmp_path / "rankwise-profile.summary.txt").exists()
    # RANKWISE_PROFILE_OUT=none: nothing at MPI_Finalize
    (tmp_path / "rankwise-profile.rwc").unlink()
    env["RANKWISE_PROFILE_OUT"] = "none"
    r = subprocess.run([*LAUNCHER.split(), "-x", f"LD_PRELOAD={lib}", "-x", "RANKWISE_PROFILE_OUT",
                        str(exerciser_mpi), "split"], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert not (tmp_path / "rankwise-profile.rwc").exists()


@needs_mpi
def test_real_mpi_profiler_linked_in_with_the_mpi_flags(tmp_path):
    exe = tmp_path / "linked"
    _compile(["mpicc", "-O2", "-pthread", str(SOURCE), *prof.mpi_flags(), "-o", str(exe)])
    env = mpi_environment()
    r = subprocess.run([*LAUNCHER.split(), "-x", f"RANKWISE_PROFILE_OUT={tmp_path / 'end.rwc'}", str(exe),
                        "phases", str(tmp_path / "a.rwc")], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert entries(CommMatrix.load(tmp_path / "a.rwc")) == {(i, (i + 1) % 4): (1, 1000) for i in range(4)}
    assert entries(CommMatrix.load(tmp_path / "end.rwc")) == {(i, (i - 1) % 4): (1, 3000) for i in range(4)}


@needs_mpi
def test_a_profiler_that_cannot_write_says_why(exerciser_mpi, tmp_path):
    lib = prof.library("mpi")
    env = mpi_environment()
    target = tmp_path / "missing-folder" / "p.rwc"
    r = subprocess.run([*LAUNCHER.split(), "-x", f"LD_PRELOAD={lib}", "-x", f"RANKWISE_PROFILE_OUT={target}",
                        str(exerciser_mpi), "split"], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0  # the application itself is not failed
    lines = [line for line in r.stderr.splitlines() if line.startswith("rankwise-profile: error:")]
    assert len(lines) == 1 and "cannot write" in lines[0] and str(target) in lines[0]


# --- SMPI -------------------------------------------------------------------------------


@needs_smpi
@pytest.mark.parametrize("ranks", [4, 3])
def test_smpi_matrix_is_exactly_the_hand_computed_one(exerciser_smpi, small_platform, tmp_path, ranks):
    out = tmp_path / "all.rwc"
    result = prof.profile_sim(small_platform.platform_xml, str(exerciser_smpi), ["all"], out, ranks=ranks,
                              echo=False)
    assert entries(result.matrix) == expected_all(ranks, real_mpi=False)
    assert entries(CommMatrix.load(out)) == expected_all(ranks, real_mpi=False)
    assert result.matrix.collectives == expected_all_calls(ranks)
    assert CommMatrix.load(out).collectives == expected_all_calls(ranks)
    assert result.matrix.source.startswith("smpi:")
    check_summary(result)


@needs_smpi
def test_smpi_split_communicators_are_world_ranks(exerciser_smpi, small_platform, tmp_path):
    result = prof.profile_sim(small_platform.platform_xml, str(exerciser_smpi), ["split"], tmp_path / "s.rwc",
                              ranks=4, echo=False)
    assert entries(result.matrix) == expected_split(4, real_mpi=False)
    assert result.matrix.collectives == expected_split_calls(4)
    assert [c.ranks for c in result.matrix.collectives] == [(2, 0)] * 3 + [(3, 1)] * 3


@needs_smpi
def test_smpi_write_reset_pause_and_pcontrol(exerciser_smpi, small_platform, tmp_path):
    mid = tmp_path / "phase-a.rwc"
    result = prof.profile_sim(small_platform.platform_xml, str(exerciser_smpi), ["phases", str(mid)],
                              tmp_path / "end.npz", ranks=4, echo=False)
    assert entries(CommMatrix.load(mid)) == {(r, (r + 1) % 4): (1, 1000) for r in range(4)}
    assert entries(CommMatrix.load(tmp_path / "end.npz")) == {(r, (r - 1) % 4): (1, 3000) for r in range(4)}
    # the paused allreduce and the alltoall inside MPI_Pcontrol(0) are no calls either
    assert CommMatrix.load(tmp_path / "end.npz").collectives == [] and CommMatrix.load(mid).collectives == []
    assert result.summary_file == tmp_path / "end.summary.txt"


@needs_smpi
def test_smpi_crash_writes_nothing(exerciser_smpi, small_platform, tmp_path):
    with pytest.raises(RankwiseError, match="no matrix written"):
        prof.profile_sim(small_platform.platform_xml, str(exerciser_smpi), ["crash"], tmp_path / "c.rwc",
                         ranks=4, echo=False)
    assert list(tmp_path.iterdir()) == []


@needs_smpi
@needs_mpi
def test_smpi_refuses_an_application_without_the_profiler(exerciser_mpi, small_platform, tmp_path):
    with pytest.raises(RankwiseError, match="not linked with the profiler.*--whole-archive"):
        prof.profile_sim(small_platform.platform_xml, str(exerciser_mpi), ["all"], tmp_path / "x.rwc", echo=False)


BENCH_SIZES = [2, 6, 1024]


def bench_calls(iterations: int, root: int) -> list[CC]:
    """What rankwise-bench-collectives calls in its timed iterations (the
    harness pauses the profiler around warm-up and its own reductions):
    each size `iterations` times, reductions on whole floats (2 bytes: no
    call)."""
    calls = []
    for size in BENCH_SIZES:
        calls += [CC("bcast", size, iterations, root), CC("gather", size, iterations, root),
                  CC("scatter", size, iterations, root), CC("allgather", size, iterations)]
        if size >= 4:
            calls += [CC("reduce", size - size % 4, iterations, root), CC("allreduce", size - size % 4, iterations)]
    return calls


@needs_smpi
def test_smpi_bench_collectives_profile_holds_exactly_its_calls(small_platform, tmp_path):
    from rankwise.cluster.benchmark_programs import run_benchmark

    out = tmp_path / "c.rwc"
    args = ["--sizes", ",".join(map(str, BENCH_SIZES)), "--iterations", "3", "--warmup", "2", "--root", "1"]
    run_benchmark("collectives", args, sim=small_platform.platform_xml, nodes=4, profile=out)
    m = CommMatrix.load(out)
    assert m.collectives == canonical(4, bench_calls(3, root=1)) and m.collectives_dropped == 0
    # the volumes are the ones of the collective pattern, call by call
    volume = sum((P.collective(4, c.bytes, op=c.op, root=c.root, iterations=c.calls).to_dense()
                  for c in m.collectives), np.zeros((4, 4), np.int64))
    assert (m.to_dense() == volume).all()


@needs_smpi
def test_smpi_groups_beyond_the_cap_are_counted_as_dropped(small_platform, tmp_path, monkeypatch):
    from rankwise.cluster.benchmark_programs import run_benchmark

    monkeypatch.setenv("RANKWISE_PROFILE_COLL_GROUPS", "4")
    out = tmp_path / "c.rwc"
    args = ["--sizes", ",".join(map(str, BENCH_SIZES)), "--iterations", "2", "--warmup", "0", "--root", "0"]
    run_benchmark("collectives", args, sim=small_platform.platform_xml, nodes=4, profile=out)
    m = CommMatrix.load(out)
    every = bench_calls(2, root=0)
    # the first four groups met (bcast of each size, then reduce of 4 bytes) are kept
    assert m.collectives == canonical(4, [c for c in every if c.op == "bcast"] + [CC("reduce", 4, 2, 0)])
    assert m.collectives_dropped == sum(c.calls for c in every) - 4 * 2
    assert f"coll-dropped {m.collectives_dropped}\n" in out.read_text()


def test_sim_rank_placement(small_platform):
    plat = Path(small_platform.platform_xml)  # 8 hosts of 2 cores
    names = [name for name, _ in read_platform(plat)]
    assert prof._sim_hosts(plat, None, None, None) == names
    assert prof._sim_hosts(plat, 3, None, None) == names[:3]
    assert prof._sim_hosts(plat, 10, None, None) == [n for n in names for _ in range(2)][:10]
    assert prof._sim_hosts(plat, None, 2, None) == [n for n in names for _ in range(2)]
    with pytest.raises(RankwiseError, match="16 cores"):
        prof._sim_hosts(plat, 17, None, None)


# --- launchers --------------------------------------------------------------------------


def _fake_launcher(tmp_path: Path, banner: str) -> str:
    path = tmp_path / "fakerun"
    path.write_text(f"#!/bin/sh\necho '{banner}'\n")
    path.chmod(0o755)
    return str(path)


def test_variables_reach_the_ranks_the_way_each_launcher_wants(tmp_path):
    variables = {"LD_PRELOAD": "/lib/p.so", "RANKWISE_PROFILE_OUT": "/tmp/o.rwc"}
    ompi = _fake_launcher(tmp_path, "mpirun (Open MPI) 4.1.4")
    cmd, env = prof.launcher_command(f"{ompi} -np 2", "app", ["a"], variables)
    assert cmd == [ompi, "-np", "2", "-x", "LD_PRELOAD=/lib/p.so", "-x", "RANKWISE_PROFILE_OUT=/tmp/o.rwc",
                   "app", "a"]
    assert env.get("LD_PRELOAD") != "/lib/p.so"  # not preloaded into mpirun itself
    hydra = _fake_launcher(tmp_path, "HYDRA build details:")
    cmd, _ = prof.launcher_command(hydra, "app", [], variables)
    assert cmd == [hydra, "-genv", "LD_PRELOAD", "/lib/p.so", "-genv", "RANKWISE_PROFILE_OUT", "/tmp/o.rwc", "app"]
    other = _fake_launcher(tmp_path, "slurm 23.02")
    cmd, env = prof.launcher_command(other, "app", [], variables)
    assert cmd == [other, "app"] and env["LD_PRELOAD"] == "/lib/p.so"


def test_summary_reader_refuses_other_files(tmp_path):
    bad = tmp_path / "x.summary.txt"
    bad.write_text("hello\n")
    with pytest.raises(RankwiseError, match="not a profile summary"):
        prof.read_summary(bad)
    assert prof.summary_path("a/b.rwc") == Path("a/b.summary.txt")
    assert prof.summary_path("b.npz") == Path("b.summary.txt")
    assert prof.summary_path("b.out") == Path("b.out.summary.txt")


# --- the command line -------------------------------------------------------------------


def test_cli_prints_the_smpi_flags():
    r = run_cli("profile", "--smpi-flags")
    assert r.returncode == 0, r.stderr
    words = r.stdout.split()
    assert "-Wl,--whole-archive" in words and "-lrankwise_profile" in words
    assert any(w.startswith("-L") and w.endswith("/_lib/smpi") for w in words)
    assert_one_line_error(run_cli("profile", "--smpi-flags", "--sim", "p.xml"), "take nothing else")


@needs_smpi
def test_cli_profiles_a_simulated_run_and_hands_options_to_the_application(exerciser_smpi, small_platform,
                                                                           tmp_path):
    out = tmp_path / "p.rwc"
    # `-o` after APP belongs to the application (its unknown mode makes it fail)
    r = run_cli("profile", "--sim", small_platform.platform_xml, "--ranks", "4", "-o", out, exerciser_smpi,
                "-o", "x")
    assert_one_line_error(r, "unknown mode '-o'")
    assert not out.exists()
    r = run_cli("profile", "--sim", small_platform.platform_xml, "--ranks", "4", "-q", "-o", out, exerciser_smpi,
                "split")
    assert r.returncode == 0, r.stderr
    assert "ranks" in r.stdout and "MPI time per rank" in r.stdout
    assert entries(CommMatrix.load(out)) == expected_split(4, real_mpi=False)


@needs_mpi
def test_cli_real_launcher_crash_is_one_line(exerciser_mpi, tmp_path):
    out = tmp_path / "p.rwc"
    r = run_cli("profile", "--launcher", LAUNCHER, "-q", "-o", out, exerciser_mpi, "crash")
    assert_one_line_error(r, "the profiled application")
    assert "no matrix written" in r.stderr and r.returncode == 1
    assert not out.exists()


def test_cli_refuses_what_it_cannot_run(small_platform, tmp_path):
    assert_one_line_error(run_cli("profile", "-o", tmp_path / "p.rwc", "true"), "exactly one of --sim")
    assert_one_line_error(run_cli("profile", "--sim", small_platform.platform_xml, "--launcher", "mpirun",
                                  "true"), "exactly one of --sim")
    assert_one_line_error(run_cli("profile", "--sim", small_platform.platform_xml, "./no-such-app"),
                          "application './no-such-app' not found")
    assert_one_line_error(run_cli("profile", "--launcher", "mpirun", "--ranks", "3", "true"), "are for --sim")
    assert_one_line_error(run_cli("profile", "--sim", small_platform.platform_xml, "-o",
                                  tmp_path / "p.txt", "true"), "must end in .rwc or .npz")
    r = run_cli("profile")  # the help, and a usage error's exit code like every verb without arguments
    assert r.returncode == 2 and "--smpi-flags" in r.stdout


# An application that ends like NAS DT (`return 1` after its work and MPI_Finalize, saying nothing),
# that exits with 1 before MPI_Finalize after printing only ordinary output, or that prints an error.
EXIT_ONE = r"""
#include <mpi.h>
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv)
{
    int rank, size, token = 7;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Sendrecv_replace(&token, 1, MPI_INT, (rank + 1) % size, 0, (rank + size - 1) % size, 0,
                         MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (rank == 0)
        printf(" Time in seconds = 0.01\n");
    if (argc > 1 && !strcmp(argv[1], "before"))
        return 1; /* no MPI_Finalize: no profile */
    if (argc > 1 && !strcmp(argv[1], "error") && rank == 0)
        fprintf(stderr, "exit_one: error: bad input\n"); /* a failure, whatever the profile holds */
    MPI_Finalize();
    return 1;
}
"""


@pytest.fixture(scope="session")
def exit_one_smpi(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("exit-one")
    (folder / "exit_one.c").write_text(EXIT_ONE)
    _compile(["smpicc", "-O1", str(folder / "exit_one.c"), *prof.smpi_flags(), "-o", str(folder / "exit_one")])
    return folder / "exit_one"


@needs_smpi
def test_an_application_exiting_non_zero_after_its_profile_keeps_it_with_a_warning(exit_one_smpi, small_platform,
                                                                                 tmp_path):
    out = tmp_path / "p.rwc"
    r = run_cli("profile", "--sim", small_platform.platform_xml, "--ranks", "4", "-q", "-o", out, exit_one_smpi)
    assert r.returncode == 0, r.stderr
    assert "warning:" in r.stderr and "exited with code 1 after MPI_Finalize wrote its profile" in r.stderr
    m = CommMatrix.load(out)
    assert m.n_ranks == 4 and {(i, (i + 1) % 4) for i in range(4)} <= set(entries(m))


@needs_smpi
def test_a_failure_never_quotes_an_unrelated_output_line(exit_one_smpi, small_platform, tmp_path):
    out = tmp_path / "p.rwc"
    r = run_cli("profile", "--sim", small_platform.platform_xml, "--ranks", "4", "-q", "-o", out, exit_one_smpi,
                "before")
    assert_one_line_error(r, "no matrix written")
    assert r.returncode == 1 and "Time in seconds" not in r.stderr
    assert not out.exists()


@needs_smpi
def test_an_application_that_printed_an_error_fails_even_after_its_profile(exit_one_smpi, small_platform,
                                                                           tmp_path):
    out = tmp_path / "p.rwc"
    r = run_cli("profile", "--sim", small_platform.platform_xml, "--ranks", "4", "-q", "-o", out, exit_one_smpi,
                "error")
    assert_one_line_error(r, "failed (exit code 1): exit_one: error: bad input; no matrix written")
    assert not out.exists()
