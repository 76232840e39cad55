"""Decisions verified in the job (engine/mpi/coll/verify.c): a choice from rules or a network runs its first
calls in turn with the MPI's own, timed, and the ranks keep the faster (RANKWISE_COLL_VERIFY; on by default
with a real MPI, off under SMPI).

- SMPI, deterministic: 16 ranks, rules choosing the flat tree for broadcasts of 8 B (faster than SMPI's
  ompi selector on this platform: 6.0 vs 10.0 us) and of 64 KiB (slower: 82 vs 43 us). After the trials
  every 8 B call takes the flat tree's time and every 64 KiB call the MPI's own.
- Open MPI: the verdict is one line per decision, the calls after it follow it, and RANKWISE_COLL_VERIFY=0
  runs the choice every time."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from test_coll_lib import LIB, MPI_SOURCES, _compile, needs_mpi, needs_smpi, run_mpi

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "studies"))
from smpi_link import build_linked  # noqa: E402

TRIAL_CALLS = 14  # verify.c: TRIALS x 2, the first call of a size class among them
VERDICT = re.compile(r"^rankwise-coll: verified (\w+) root (-?\d+) (\d+)\+ bytes on (\d+) ranks: (\w+) ([\d.]+) us, "
                     r"the MPI's own ([\d.]+) us: (.+)$", re.M)


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
    sizes = [8] * 20 + [65536] * 20  # coll_times makes one more, untimed, call first (of 8 B)
    own, _ = smpi_times(coll_times, small_platform, hostfile, sizes, {})
    flat, _ = smpi_times(coll_times, small_platform, hostfile, sizes, {"RANKWISE_COLL_BCAST": "flat"})
    assert flat[0] < 0.9 * own[0] and flat[-1] > 1.5 * own[-1], (flat, own)  # the platform as the docstring says
    verified, err = smpi_times(coll_times, small_platform, hostfile, sizes,
                               {"RANKWISE_COLL_RULES": str(rules), "RANKWISE_COLL_VERIFY": "1",
                                "RANKWISE_COLL_TRACE": "1"})
    small, big = verified[:20], verified[20:]
    # after the trials (the untimed call and 13 timed ones of 8 B; 14 of 64 KiB)
    assert small[TRIAL_CALLS - 1:] == pytest.approx([flat[1]] * (21 - TRIAL_CALLS), rel=1e-3), small
    assert big[TRIAL_CALLS:] == pytest.approx([own[-1]] * (20 - TRIAL_CALLS), rel=1e-3), big
    verdicts = VERDICT.findall(err)
    assert [(v[0], v[2], v[4], v[7]) for v in verdicts] == [("bcast", "8", "flat", "flat"),
                                                            ("bcast", "65536", "flat", "the MPI's own")], err
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
    passes through: no rule for it); the rules choose the binomial tree for them all."""
    rules = tmp_path / "rules.rwr"
    rules.write_text(rules_text(4, "op=bcast root=0 bytes=0:8388608 alg=binomial segment=0"))
    env = {"LD_PRELOAD": str(LIB / "librankwise_coll.so"), "RANKWISE_COLL_RULES": str(rules),
           "RANKWISE_COLL_TRACE": "1"}
    r = run_mpi([str(bcast_loop), "20"], 4, env, timeout=300)
    assert r.returncode == 0 and " 0 failures" in r.stdout, r.stdout + r.stderr[-2000:]
    verdicts = {int(v[2]): v[7] for v in VERDICT.findall(r.stderr)}  # by size class
    assert sorted(verdicts) == [1024, 65536, 262144, 1 << 20, 4 << 20], r.stderr[-2000:]
    for size_class, kept in verdicts.items():
        size = 300000 if size_class == 262144 else size_class  # pipeline_stress's sizes
        runs = len(re.findall(rf"^rankwise-coll: bcast binomial {size} bytes \(rules\)$", r.stderr, re.M))
        # the choice's turns in the trials, then every call if it was kept
        assert runs == (TRIAL_CALLS // 2 + (20 - TRIAL_CALLS) * (kept == "binomial")), (size, kept, runs)
    off = run_mpi([str(bcast_loop), "20"], 4, {**env, "RANKWISE_COLL_VERIFY": "0"}, timeout=300)
    assert off.returncode == 0 and "verified" not in off.stderr
    assert len(re.findall(r"^rankwise-coll: bcast binomial \d+ bytes \(rules\)$", off.stderr, re.M)) == 5 * 20
