"""The library's MPI_Alltoall: pairwise and symmetric with injection-rate control (Ajima, Tofu's uniformly
overlaid symmetrical pattern). The MPI's own results under Open MPI and SMPI (alltoall_check.c: derived types,
IN_PLACE, counts 0, 1, 7 and a large odd one, split and reversed communicators, sub-phases of every width);
the sub-phases and the cap from a network's shared links; the predictor's schedules against SMPI; the tuner's
candidates; the rules file's names."""

from __future__ import annotations

import ctypes as C
import re
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from test_coll_lib import LIB, MPI_SOURCES, _compile, needs_mpi, needs_smpi, ran, run_mpi

from rankwise.coll import selection
from rankwise.predict.predictor import PredictNetwork, placement, predict_lib
from rankwise.sim.platform import PlatformSpec, generate

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "studies" / "coll"))
import tofu_alltoall as study  # noqa: E402


def passed(stdout: str) -> int:
    m = re.search(r"alltoall_check: (\d+) checks, (\d+) failures", stdout)
    assert m, stdout
    assert m.group(2) == "0", stdout
    return int(m.group(1))


@pytest.fixture(scope="module")
def check_mpi(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("a2a-mpi") / "alltoall_check"
    _compile(["mpicc", "-O1", "-g", f"-I{LIB / 'include'}", str(MPI_SOURCES / "alltoall_check.c"), f"-L{LIB}",
              f"-Wl,-rpath,{LIB}", "-lrankwise_coll", "-o", str(out)])
    return out


@pytest.fixture(scope="module")
def check_smpi(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("a2a-smpi") / "alltoall_check"
    lib = LIB / "smpi"
    _compile(["smpicc", "-O1", f"-I{lib / 'include'}", str(MPI_SOURCES / "alltoall_check.c"), f"-L{lib}",
              "-Wl,--whole-archive", "-lrankwise_coll", "-Wl,--no-whole-archive", "-o", str(out)])
    return out


# (algorithm, ranks, cap): caps 1 and 2 run one phase at a time, 3 packs phases whole (never split), a cap
# above the ranks runs every peer at once; 2 ranks have one phase of one shift
MPI_CASES = [("passthrough", 3, None), ("pairwise", 2, None), ("pairwise", 5, None), ("symmetric", 2, None), ("symmetric", 3, "1"),
             ("symmetric", 6, "3"), ("symmetric", 7, None), ("symmetric", 8, "100"),
             ("symmetric", 3, "2147483647")]


@needs_mpi
@pytest.mark.parametrize("alg,n,cap", MPI_CASES)
def test_alltoall_gives_the_mpi_results_under_open_mpi(check_mpi, alg, n, cap):
    env = {"RANKWISE_COLL_ALLTOALL": alg, "RANKWISE_COLL_TRACE": "1"}
    if cap:
        env["RANKWISE_COLL_ALLTOALL_CAP"] = cap
    r = run_mpi([str(check_mpi), "2001"], n, env, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    assert passed(r.stdout) > 1000
    assert ran(r.stderr).get("alltoall", {"passthrough"}) == {alg}  # the MPI's own says nothing
    assert "warning" not in r.stderr


@needs_mpi
def test_a_bad_cap_says_so_and_still_runs(check_mpi):
    r = run_mpi([str(check_mpi), "11"], 3, {"RANKWISE_COLL_ALLTOALL": "symmetric", "RANKWISE_COLL_ALLTOALL_CAP": "x"})
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    passed(r.stdout)
    warnings = [line for line in r.stderr.splitlines() if "RANKWISE_COLL_ALLTOALL_CAP=x" in line]
    assert len(warnings) == 1, r.stderr


@needs_mpi
def test_not_an_alltoall_algorithm_passes_through_with_one_warning(check_mpi):
    r = run_mpi([str(check_mpi), "11"], 3, {"RANKWISE_COLL_ALLTOALL": "binomial", "RANKWISE_COLL_TRACE": "1"})
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    passed(r.stdout)
    assert "alltoall" not in ran(r.stderr)
    assert sum("RANKWISE_COLL_ALLTOALL=binomial" in line for line in r.stderr.splitlines()) == 1


@needs_smpi
@pytest.mark.parametrize("alg,cap", [("pairwise", None), ("symmetric", "2"), ("symmetric", None)])
def test_alltoall_gives_the_mpi_results_under_smpi(check_smpi, small_platform, tmp_path, alg, cap):
    """7 ranks, 2 per node (intra-node pairs too)."""
    hosts = small_platform.hostfile.read_text().split()
    hostfile = tmp_path / "hosts"
    hostfile.write_text("".join(f"{hosts[r // 2]}\n" for r in range(7)))
    env = {**os.environ, "RANKWISE_COLL_ALLTOALL": alg, "RANKWISE_COLL_TRACE": "1"}
    if cap:
        env["RANKWISE_COLL_ALLTOALL_CAP"] = cap
    env.pop("SMPI_PRETEND_CC", None)
    r = subprocess.run(["smpirun", "-np", "7", "-platform", str(small_platform.platform_xml), "-hostfile",
                        str(hostfile), "--log=root.thres:critical", "--cfg=smpi/simulate-computation:no",
                        str(check_smpi), "301"], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    assert passed(r.stdout) > 1000
    assert ran(r.stderr)["alltoall"] == {alg}


# --- sub-phases and the cap (MPI-free) ------------------------------------------------------


def subphases(n: int, cap: int) -> list[list[int]]:
    so = predict_lib()
    so.rw_a2a_subphases.argtypes = [C.c_int32, C.c_int32, C.POINTER(C.c_int32), C.POINTER(C.c_int32)]
    shift, start = (C.c_int32 * max(n, 1))(), (C.c_int32 * max(n + 1, 1))()
    k = so.rw_a2a_subphases(n, cap, shift, start)
    return [list(shift[start[j]:start[j + 1]]) for j in range(k)]


@pytest.mark.parametrize("n", [2, 3, 4, 7, 8, 16, 33])
@pytest.mark.parametrize("cap", [1, 2, 3, 4, 5, 100])
def test_subphases_cover_every_peer_once_in_whole_symmetric_phases(n, cap):
    subs = subphases(n, cap)
    assert sorted(s for sub in subs for s in sub) == list(range(1, n))
    for sub in subs:
        assert len(sub) <= max(cap, 2)
        assert sorted(sub) == sorted(n - s for s in sub)  # every +d with its -d: symmetric positions
    # the phases +-d, a near one beside a far one: d = 1, n/2, 2, n/2 - 1, ... (n/2 alone)
    half = n // 2
    order = [i // 2 + 1 if i % 2 == 0 else half - i // 2 for i in range(half)]
    assert [sorted(sub) for sub in subphases(n, 1)] == [sorted({d, n - d}) for d in order]
    # as few sub-phases as whole phases allow
    assert all(len(a) + len(b) > max(cap, 2) for a, b in zip(subs, subs[1:]) if len(b) <= 2)


def cap_of(spec: PlatformSpec, tmp_path: Path, n: int, nbytes: int = 1 << 20) -> int:
    plat = generate(spec, tmp_path)
    net = PredictNetwork.from_ground_truth(plat.out_dir).with_overheads(1e-6, 1e-6)
    return study.model_cap(net, n, nbytes)


def test_cap_is_narrow_behind_oversubscribed_uplinks_and_wide_where_links_have_room(tmp_path):
    """1 MiB per pair, 16 ranks on 4 racks of 4: behind 4:1 uplinks more sends in flight only queue on them
    (rate control: 2); without oversubscription 8 at once fill the nodes' links better; on a 4x4x2 torus every
    peer at once (the router links have room)."""
    narrow = cap_of(PlatformSpec(racks=4, nodes_per_rack=4, cores=1, oversubscription=4, seed=1), tmp_path / "a", 16)
    wide = cap_of(PlatformSpec(racks=4, nodes_per_rack=4, cores=1, seed=1), tmp_path / "b", 16)
    assert narrow == 2 and wide == 8
    assert cap_of(PlatformSpec(topology="torus:4,4,2", cores=1, seed=1), tmp_path / "t", 32) == 31


def test_cap_without_capacities_is_the_default():
    """Pairs only (no node cap, no shared link): nothing to size the sub-phases from."""
    n = 8
    net = PredictNetwork([f"n{i}" for i in range(n)], np.full((n, n), 1e-6), np.full((n, n), 1e-9))
    assert study.model_cap(net, n, 1 << 20) == 4
    assert study.model_cap(net, 3, 1 << 20) == 2  # never more than the peers


# --- predictor and tuner -------------------------------------------------------------------


@needs_smpi
def test_symmetric_beats_pairwise_on_a_torus_as_predicted(tmp_path):
    """4x4x2 torus, one rank per node, 1 MiB per pair: symmetric (its cap from the ground truth's links)
    at least 1.2x faster than pairwise, both predicted within 5 % of SMPI."""
    exe = study.build(tmp_path)
    spec = PlatformSpec(topology="torus:4,4,2", cores=1, seed=1)
    rows = study.run_platform(study.Console(width=150, file=open(os.devnull, "w")), "torus", spec, 32, [1 << 20],
                              (), tmp_path, exe)
    (b, times, pred, low, cap), = rows
    assert times["pairwise"] / times["symmetric"] >= 1.2, times
    for alg in ("pairwise", "symmetric"):
        assert abs(pred[alg] / times[alg] - 1) <= 0.05, (alg, pred, times)


def test_the_tuner_weighs_pairwise_and_symmetric(tmp_path):
    plat = generate(PlatformSpec(topology="torus:4,4,2", cores=1, seed=1), tmp_path / "t")
    net = PredictNetwork.from_ground_truth(plat.out_dir)
    d = selection.decide(net, placement(1, 32), "alltoall", 1 << 20)
    names = [c.algorithm for c in d.candidates]
    assert names[1:] == ["pairwise", "symmetric"]
    times = {c.algorithm: c.time for c in d.candidates}
    assert np.isfinite(times["linear"]) and times["symmetric"] < times["pairwise"] / 1.2


@pytest.mark.parametrize("line,error", [
    ("rule op=alltoall root=* bytes=0:100 alg=symmetric", None),
    ("rule op=alltoall root=* bytes=0:100 alg=pairwise", None),
    ("rule op=alltoall root=* bytes=0:100 alg=passthrough", None),
    ("rule op=alltoall root=* bytes=0:100 alg=ring", "alltoall runs alg=pairwise, symmetric or passthrough"),
    ("rule op=allgather root=* bytes=0:100 alg=symmetric", "alltoall runs alg=pairwise, symmetric or passthrough"),
    ("rule op=alltoall root=0 bytes=0:100 alg=pairwise", "alltoall has no root"),
])
def test_rules_take_the_alltoall_names_and_refuse_others(tmp_path, line, error):
    path = tmp_path / "rules"
    path.write_text(f"rankwise-coll-rules 1\ncomm-size 8\n{line}\n")
    if error is None:
        rules = selection.Rules(path)
        assert rules.lookup("alltoall", 8, -1, 50).algorithm == line.split("alg=")[1]
    else:
        with pytest.raises(Exception, match=error):
            selection.Rules(path)


@needs_mpi
@pytest.mark.parametrize("forced", [None, "symmetric"])
def test_results_stay_right_with_a_model(check_mpi, tmp_path, forced):
    """RANKWISE_MODEL: the alltoalls are decided from the model (or forced symmetric, the cap then from the
    model's network, once per size class, every rank agreeing), and the results stay the MPI's."""
    import socket

    from test_coll_rules import synthetic_model

    model = tmp_path / "ranks.rwm"
    synthetic_model([f"{socket.gethostname()}:{r}" for r in range(4)]).save(model)
    env = {"RANKWISE_MODEL": str(model), "RANKWISE_COLL_TRACE": "1"}
    if forced:
        env["RANKWISE_COLL_ALLTOALL"] = forced
    r = run_mpi([str(check_mpi), "2001"], 4, env, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    assert passed(r.stdout) > 1000
    assert "warning" not in r.stderr, r.stderr[-2000:]
    assert re.search(r"^rankwise-coll: decided alltoall root -1 \d+\+ bytes on 4 ranks from the model", r.stderr,
                     re.M), r.stderr[-2000:]
    if forced:
        assert ran(r.stderr)["alltoall"] == {forced}
