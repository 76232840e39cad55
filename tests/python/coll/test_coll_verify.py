"""Decisions verified in the job (engine/mpi/coll/decision/verify.c): a choice from rules or a network runs its first
calls in turn with the MPI's own, timed, and the ranks keep the faster (RANKWISE_COLL_VERIFY; on by default
with a real MPI, off under SMPI).

- A clock the test sets (tests/engine/mpi/verify_clock.c, Open MPI): a choice as fast as the MPI's own whose
  trials see two of the MPI's own calls lose a 4 ms time slice gets the MPI's own (the blocks' sums before
  kept the choice); a choice twice as fast that lost them itself is kept; and once a gather, scatter or
  broadcast has its final outcome, it makes no MPI call but the MPI's own collective (before: two).

- SMPI, deterministic: 16 ranks, rules choosing the flat tree for broadcasts of 8 B (faster than SMPI's
  ompi selector on this platform: 6.0 vs 10.0 us) and of 64 KiB (slower: 82 vs 43 us). After the trials
  every 8 B call takes the flat tree's time and every 64 KiB call the MPI's own.
- Open MPI: the verdict is one line per decision, the calls after it follow it, and RANKWISE_COLL_VERIFY=0
  runs the choice every time.
- The outcome kept per communicator once final (coll.h, rwc_outcome) answers only calls with the same root,
  exact bytes, reduction type and operation (test_live.py: and the same live model generation): calls that
  alternate them run what the rules and verdicts say, with the MPI's results."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from test_coll_lib import LIB, MPI_SOURCES, _compile, needs_mpi, needs_smpi, run_mpi

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "studies" / "coll"))
from smpi_link import build_linked  # noqa: E402

CAL, MAX_CALLS = 4, 256  # verify.c: the first two blocks' calls, the bound on the last two's
VERDICT = re.compile(r"^rankwise-coll: verified (\w+) root (-?\d+) (\d+)\+ bytes on (\d+) ranks in (\d+) calls "
                     r"\((\d+) \w+\): (\w+) ([\d.]+) us, the MPI's own ([\d.]+) us: (.+)$", re.M)


def trials(calls: int, choice: int) -> list[bool]:
    """Whether each trial call runs the choice (verify.c): one untimed call of each, a block of CAL calls of
    each, then the choice's block and the MPI's own, of the lengths the first two blocks' pace gave."""
    last_choice, last_own = choice - 1 - CAL, calls - choice - 1 - CAL
    assert CAL <= last_choice <= MAX_CALLS and CAL <= last_own <= MAX_CALLS, (calls, choice)
    return [True, False] + [True] * CAL + [False] * CAL + [True] * last_choice + [False] * last_own


def rules_text(n: int, *rules: str) -> str:
    return f"rankwise-coll-rules 1\ncomm-size {n}\n" + "".join(f"rule {r}\n" for r in rules)


@pytest.fixture(scope="module")
def coll_times(tmp_path_factory) -> Path:
    return build_linked(MPI_SOURCES / "coll_times.c", tmp_path_factory.mktemp("verify") / "coll_times")


def smpi_times(exe: Path, platform, hostfile: Path, sizes: list[int], env: dict[str, str]) -> tuple[list, str]:
    cmd = ["smpirun", "-np", "16", "-platform", str(platform.platform_xml), "-hostfile", str(hostfile),
           "--log=root.thres:critical", "--cfg=smpi/simulate-computation:no", "--cfg=smpi/coll-selector:ompi",
           str(exe), "bcast", *map(str, sizes)]
    clean = {k: v for k, v in os.environ.items() if not k.startswith("RANKWISE_")}
    clean.pop("SMPI_PRETEND_CC", None)
    r = subprocess.run(cmd, capture_output=True, text=True, env={**clean, **env}, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    return [float(line.split()[1]) for line in r.stdout.splitlines() if line.strip()], r.stderr


@needs_smpi
def test_the_verdict_keeps_the_faster_of_the_choice_and_the_mpi_own_under_smpi(coll_times, small_platform,
                                                                               tmp_path):
    hosts = small_platform.hostfile.read_text().split()
    hostfile = tmp_path / "hosts"
    hostfile.write_text("".join(f"{hosts[r // 2]}\n" for r in range(16)))
    rules = tmp_path / "rules.rwr"
    rules.write_text(rules_text(16, "op=bcast root=0 bytes=0:1023 alg=flat segment=0",
                                "op=bcast root=0 bytes=65536:65536 alg=flat segment=0"))
    sizes = [8] * 80 + [65536] * 40  # coll_times makes one more, untimed, call first (of 8 B)
    own, _ = smpi_times(coll_times, small_platform, hostfile, sizes, {})
    flat, _ = smpi_times(coll_times, small_platform, hostfile, sizes, {"RANKWISE_COLL_BCAST": "flat"})
    assert flat[0] < 0.9 * own[0] and flat[-1] > 1.5 * own[-1], (flat, own)  # the platform as the docstring says
    verified, err = smpi_times(coll_times, small_platform, hostfile, sizes,
                               {"RANKWISE_COLL_RULES": str(rules), "RANKWISE_COLL_VERIFY": "1",
                                "RANKWISE_COLL_TRACE": "1"})
    small, big = verified[:80], verified[80:]
    verdicts = VERDICT.findall(err)
    assert [(v[0], v[2], v[6], v[9]) for v in verdicts] == [("bcast", "8", "flat", "flat"),
                                                            ("bcast", "65536", "flat", "the MPI's own")], err
    n_small, n_big = int(verdicts[0][4]), int(verdicts[1][4])
    trials(n_small, int(verdicts[0][5]))  # a schedule within the bounds
    trials(n_big, int(verdicts[1][5]))
    # the 8 B calls' pace (6 and 10 us) made the last two blocks longer than the 64 KiB calls' (82, 43 us)
    assert n_small > n_big >= 2 + 4 * CAL and n_small <= 80, (n_small, n_big)
    # after the trials (the untimed call and n_small - 1 timed ones of 8 B; n_big of 64 KiB)
    assert small[n_small - 1:] == pytest.approx([flat[1]] * (81 - n_small), rel=1e-3), small
    assert big[n_big:] == pytest.approx([own[-1]] * (40 - n_big), rel=1e-3), big
    # without verification (the default under SMPI) the rules run as written
    unverified, err = smpi_times(coll_times, small_platform, hostfile, sizes, {"RANKWISE_COLL_RULES": str(rules)})
    assert unverified == pytest.approx(flat, rel=1e-3) and "verified" not in err


@pytest.fixture(scope="module")
def bcast_loop(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("verify-mpi") / "pipeline_stress"
    _compile(["mpicc", "-O1", str(MPI_SOURCES / "pipeline_stress.c"), "-o", str(out)])
    return out


@needs_mpi
def test_the_calls_after_the_verdict_follow_it_under_open_mpi(bcast_loop, tmp_path):
    """pipeline_stress makes 20 broadcasts of each size from rank 0 (10 repetitions x its two roots, root 3
    passes through: no rule for it); the rules choose the binomial tree for them all. The trials of the long
    ones end within the 20 calls (CAL calls a block), those of 1 KiB may not (longer blocks)."""
    rules = tmp_path / "rules.rwr"
    rules.write_text(rules_text(4, "op=bcast root=0 bytes=0:8388608 alg=binomial segment=0"))
    env = {"LD_PRELOAD": str(LIB / "librankwise_coll.so"), "RANKWISE_COLL_RULES": str(rules),
           "RANKWISE_COLL_TRACE": "1"}
    r = run_mpi([str(bcast_loop), "20"], 4, env, timeout=300)
    assert r.returncode == 0 and " 0 failures" in r.stdout, r.stdout + r.stderr[-2000:]
    verdicts = {int(v[2]): (int(v[4]), int(v[5]), v[9]) for v in VERDICT.findall(r.stderr)}  # by size class
    assert {1 << 20, 4 << 20} <= set(verdicts) <= {1024, 65536, 262144, 1 << 20, 4 << 20}, r.stderr[-2000:]
    for size_class in (1024, 65536, 262144, 1 << 20, 4 << 20):
        size = 300000 if size_class == 262144 else size_class  # pipeline_stress's sizes
        runs = len(re.findall(rf"^rankwise-coll: bcast binomial {size} bytes \(rules\)$", r.stderr, re.M))
        if size_class in verdicts:  # the choice's turns in the trials, then every call if it was kept
            calls, choice, kept = verdicts[size_class]
            trials(calls, choice)
            assert runs == choice + (20 - calls) * (kept == "binomial"), (size, kept, runs)
        else:  # still in its trials: the choice's turns so far (its last block at least CAL calls)
            assert 1 + 2 * CAL <= runs <= 20 - 1 - CAL, (size, runs)
    off = run_mpi([str(bcast_loop), "20"], 4, {**env, "RANKWISE_COLL_VERIFY": "0"}, timeout=300)
    assert off.returncode == 0 and "verified" not in off.stderr
    assert len(re.findall(r"^rankwise-coll: bcast binomial \d+ bytes \(rules\)$", off.stderr, re.M)) == 5 * 20


@pytest.fixture(scope="module")
def outcomes_mpi(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("outcomes") / "coll_outcomes"
    _compile(["mpicc", "-O1", str(MPI_SOURCES / "coll_outcomes.c"), "-o", str(out)])
    return out


def traced_per_call(stderr: str, calls: int) -> list[list[str]]:
    """The library's trace lines after each "call I" marker of coll_outcomes (rank 0's stderr)."""
    per: list[list[str]] = []
    for line in stderr.splitlines():
        if re.fullmatch(r"call \d+", line):
            assert int(line.split()[1]) == len(per), stderr[-3000:]
            per.append([])
        elif line.startswith("rankwise-coll: ") and per:
            per[-1].append(line[len("rankwise-coll: "):])
    assert len(per) == calls, stderr[-3000:]
    return per


@needs_mpi
def test_a_kept_outcome_is_only_reused_for_the_same_root_and_bytes(outcomes_mpi, tmp_path):
    """The outcome kept per communicator (rwc_outcome) answers a call only with the same root and exact
    bytes: rules choosing the binomial tree for 0-700 B broadcasts from rank 0, calls alternating roots and
    sizes (800 B: the same power-of-two class as 600 B, outside the rule) run the tree exactly where the
    rule says, and every result is the MPI's."""
    rules = tmp_path / "rules.rwr"
    rules.write_text(rules_text(4, "op=bcast root=0 bytes=0:700 alg=binomial segment=0"))
    calls = ["bcast:0:8", "bcast:0:8", "bcast:1:8", "bcast:0:8", "bcast:0:600", "bcast:0:800", "bcast:0:600",
             "bcast:0:8", "bcast:2:600", "bcast:0:4096", "bcast:0:600", "bcast:3:8", "bcast:0:8"]
    env = {"LD_PRELOAD": str(LIB / "librankwise_coll.so"), "RANKWISE_COLL_RULES": str(rules),
           "RANKWISE_COLL_TRACE": "1", "RANKWISE_COLL_VERIFY": "0"}  # every decision final at its first call
    r = run_mpi([str(outcomes_mpi), *calls], 4, env)
    assert r.returncode == 0 and f"outcomes: {len(calls)} calls, 0 failures" in r.stdout, r.stdout + r.stderr
    per = traced_per_call(r.stderr, len(calls))
    for call, lines in zip(calls, per):
        _, root, size = call.split(":")
        expected = [f"bcast binomial {size} bytes (rules)"] if root == "0" and int(size) <= 700 else []
        assert lines == expected, (call, lines, r.stderr[-3000:])


@needs_mpi
def test_a_kept_outcome_is_only_reused_for_the_same_type_and_operation(outcomes_mpi, tmp_path):
    """A 64 B reduction of doubles (a floating-point sum: never verified) keeps the rules' choice at its
    first call; 64 B of ints (verified) must not reuse it: its first calls are trials and it gets a verdict,
    which its later calls follow; doubles after it still run the choice every time. Results are the MPI's."""
    rules = tmp_path / "rules.rwr"
    rules.write_text(rules_text(4, "op=reduce root=0 bytes=0:1024 alg=binomial segment=0"))
    calls = ["reduce:0:64:double"] * 4 + ["reduce:0:64:int"] * 600 + ["reduce:0:64:double"] * 4
    env = {"LD_PRELOAD": str(LIB / "librankwise_coll.so"), "RANKWISE_COLL_RULES": str(rules),
           "RANKWISE_COLL_TRACE": "1", "RANKWISE_COLL_VERIFY": "1"}
    r = run_mpi([str(outcomes_mpi), *calls], 4, env, timeout=300)
    assert r.returncode == 0 and f"outcomes: {len(calls)} calls, 0 failures" in r.stdout, r.stdout + r.stderr
    per = traced_per_call(r.stderr, len(calls))
    ran = ["reduce binomial 64 bytes (rules)"]
    assert per[:4] == [ran] * 4 and per[-4:] == [ran] * 4, per
    ints = per[4:-4]
    verdicts = [(i, line) for i, lines in enumerate(ints) for line in lines if line.startswith("verified")]
    assert len(verdicts) == 1 and verdicts[0][1].startswith("verified reduce root 0 64+ bytes on 4 ranks"), ints
    at, line = verdicts[0]
    v = VERDICT.search("rankwise-coll: " + line)
    n, kept = int(v[5]), v[10] == "binomial"
    assert at == n - 1, (at, line)  # given at the last trial call
    assert [ran[0] in lines for lines in ints[:n]] == trials(n, int(v[6])), ints[:n]
    assert [ran[0] in lines for lines in ints[n:]] == [kept] * (600 - n), ints[n:]


@pytest.fixture(scope="module")
def clock_mpi(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("verify-clock") / "verify_clock"
    _compile(["mpicc", "-O1", "-rdynamic", str(MPI_SOURCES / "verify_clock.c"), "-o", str(out), "-ldl"])
    return out


def clock_run(exe: Path, op: str, scenario: str, tmp_path: Path, preload: bool = True) -> tuple[list, list]:
    """verify_clock on 2 ranks, rules choosing the binomial tree for OP: its verdicts and per-rank counts."""
    rules = tmp_path / f"{op}.rwr"
    rules.write_text(rules_text(2, f"op={op} root=0 bytes=0:1024 alg=binomial segment=0"))
    env = {"LD_PRELOAD": str(LIB / "librankwise_coll.so"), "RANKWISE_COLL_RULES": str(rules),
           "RANKWISE_COLL_TRACE": "1"} if preload else {}
    r = run_mpi([str(exe), op, scenario, "600", "100"], 2, env, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr[-2000:]
    counts = re.findall(r"^rank (\d): after 100 calls: (\d+) MPI calls, (\d+) point-to-point, (\d+) wrong$",
                        r.stdout, re.M)
    assert len(counts) == 2 and all(c[3] == "0" for c in counts), r.stdout
    return VERDICT.findall(r.stderr), [(int(c[1]), int(c[2])) for c in counts]


@needs_mpi
@pytest.mark.parametrize("op", ["gather", "scatter", "bcast"])
def test_a_choice_that_cannot_be_told_apart_keeps_the_mpi_own(clock_mpi, op, tmp_path):
    """Under verify_clock's clock every call takes 0.5 us, the tree's and the MPI's own, and two of the MPI's
    own timed calls lose 4 ms, one in each of its blocks as the trials were laid out before (three calls a
    block, summed: the tree was kept, 0.50 us against 1333 us). The verdict is the MPI's own on every rank,
    and the calls after it make no MPI call of the library's: as many as the MPI's own alone (none here)."""
    verdicts, counts = clock_run(clock_mpi, op, "same", tmp_path)
    assert [(v[0], v[2], v[4], v[9]) for v in verdicts] == [(op, "8", "522", "the MPI's own")], verdicts
    assert float(verdicts[0][7]) == float(verdicts[0][8]) == 0.5, verdicts  # the two alike
    _, native = clock_run(clock_mpi, op, "same", tmp_path, preload=False)
    assert counts == native == [(0, 0), (0, 0)], (counts, native)  # before: 2 a call for gather and scatter


@needs_mpi
@pytest.mark.parametrize("op", ["gather", "scatter"])
def test_a_faster_choice_is_kept_through_a_lost_time_slice(clock_mpi, op, tmp_path):
    """The tree at 0.25 us a call against the MPI's own 0.5 us, two of the tree's timed calls losing 4 ms
    (before: the MPI's own was kept); the tree runs every call after the verdict, on both ranks."""
    verdicts, counts = clock_run(clock_mpi, op, "faster", tmp_path)
    assert [(v[0], v[4], v[6], v[9]) for v in verdicts] == [(op, "522", "binomial", "binomial")], verdicts
    assert all(p2p == 100 for _, p2p in counts), counts  # one send or receive a call on 2 ranks
