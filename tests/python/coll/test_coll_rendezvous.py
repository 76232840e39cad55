"""The pipelined algorithms never wait on each other's sends: under a rendezvous protocol (a send completes
only once its receive is posted) a rank blocked on a send posts no more receives, and the trinary trees hung
(issue 25: 3 of 6 runs of 300,000-byte broadcasts on 8 ranks under Open MPI).

- SMPI with `smpi/send-is-detached-thresh:1024` makes every message above 1 KiB rendezvous: deterministic,
  "Deadlock detected" on the old schedules, for every pipelined algorithm (chain, segmented binomial and
  k-nomial, trinary bcast/reduce/allreduce, multi-ring allgather) at segment sizes above the threshold.
- Open MPI on localhost: repeated long collectives (1 KiB-4 MiB, two roots) at 4-12 ranks, trinary forced
  or from a rules file laying the trees out of rank order, each run bounded in time."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from test_coll_lib import (LIB, MPI_SOURCES, _compile, check_smpi, checks_passed, forced, needs_mpi,  # noqa: F401
                           needs_smpi, ran, run_mpi, timed_out)

RENDEZVOUS = "--cfg=smpi/send-is-detached-thresh:1024"

# (rooted, unrooted, segment bytes): segments above the rendezvous threshold, many more of them than the
# receive windows and the lanes of outstanding sends
SMPI_CASES = [("chain", "ring", "4096"), ("binomial", "rd", "2048"), ("knomial", "ring", "1500"),
              ("trinary", "trinary", "1200")]


@needs_smpi
@pytest.mark.parametrize("rooted,unrooted,segment", SMPI_CASES)
def test_pipelines_complete_under_rendezvous_sends_in_smpi(check_smpi, small_platform, tmp_path, rooted,  # noqa: F811
                                                           unrooted, segment):
    hosts = small_platform.hostfile.read_text().split()
    hostfile = tmp_path / "hosts"
    hostfile.write_text("".join(f"{hosts[r // 2]}\n" for r in range(12)))
    env = {**os.environ, **forced(rooted, unrooted), "RANKWISE_COLL_SEGMENT": segment}
    if rooted == "trinary":  # gather and scatter have no trinary; the multi-ring allgather is the pipelined one
        env.update(RANKWISE_COLL_GATHER="binomial", RANKWISE_COLL_SCATTER="binomial",
                   RANKWISE_COLL_ALLGATHER="multiring")
    env.pop("SMPI_PRETEND_CC", None)
    r = subprocess.run(["smpirun", "-np", "12", "-platform", str(small_platform.platform_xml), "-hostfile",
                        str(hostfile), "--log=root.thres:critical", "--cfg=smpi/simulate-computation:no",
                        RENDEZVOUS, str(check_smpi), "30001"],
                       capture_output=True, text=True, env=env, timeout=300)
    assert "Deadlock" not in r.stderr, r.stderr[-2000:]
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    assert checks_passed(r.stdout) > 10000
    algs = ran(r.stderr)
    want = {"rd": "recursive_doubling"}.get(unrooted, unrooted)
    assert rooted in algs["bcast"] and rooted in algs["reduce"] and want in algs["allreduce"], algs
    # coll_check always runs the trinary reduce and the multi-ring allgather through the C API
    assert "trinary" in algs["reduce"] and "multiring" in algs["allgather"], algs


@pytest.fixture(scope="module")
def stress(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("stress") / "pipeline_stress"
    _compile(["mpicc", "-O1", str(MPI_SOURCES / "pipeline_stress.c"), "-o", str(out)])
    return out


def stress_run(exe: Path, n: int, variables: dict[str, str]) -> None:
    try:
        r = run_mpi([str(exe), "2"], n, {"LD_PRELOAD": str(LIB / "librankwise_coll.so"), "RANKWISE_COLL_TRACE": "1",
                                         **variables}, timeout=90)
    except subprocess.TimeoutExpired as e:
        pytest.fail(timed_out(e, f"{n} ranks, {variables}: no end within 90 s (a run takes about 1 s)"))
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    assert "pipeline_stress: " in r.stdout and " 0 failures" in r.stdout, r.stdout
    return r


@needs_mpi
@pytest.mark.parametrize("n", [4, 7, 8, 12])
def test_trinary_stress_under_open_mpi(stress, n):
    """Three runs of each rank count (the hang was random: 2 of 7 runs at 12 ranks)."""
    for _ in range(3):
        r = stress_run(stress, n, {"RANKWISE_COLL_BCAST": "trinary", "RANKWISE_COLL_REDUCE": "trinary",
                                   "RANKWISE_COLL_ALLREDUCE": "trinary"})
        algs = ran(r.stderr)
        assert all(algs.get(op) == {"trinary"} for op in ("bcast", "reduce", "allreduce")), algs


@needs_mpi
def test_trinary_from_rules_out_of_rank_order_under_open_mpi(stress, tmp_path):
    """The issue's rules: trees laid even ranks first, trinary for every size; six runs."""
    rules = tmp_path / "rules.rwr"
    rules.write_text("rankwise-coll-rules 1\ncomm-size 8\ntrinary-order 0,2,4,6,1,3,5,7\n"
                     "rule op=bcast root=0 bytes=0:2147483647 alg=trinary segment=0\n"
                     "rule op=reduce root=* bytes=0:2147483647 alg=trinary segment=0\n")
    for _ in range(6):
        # verification off: every call runs the rules' trinary trees, none the MPI's own
        r = stress_run(stress, 8, {"RANKWISE_COLL_RULES": str(rules), "RANKWISE_COLL_VERIFY": "0"})
        assert "rankwise-coll: bcast trinary 300000 bytes (rules)" in r.stderr, r.stderr[-2000:]
        assert "rankwise-coll: reduce trinary 4194304 bytes (rules)" in r.stderr, r.stderr[-2000:]
