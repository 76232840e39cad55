"""The live model in the job (rankwise_live.h, docs/concepts/live.md "In the
job"): tests/engine/mpi/live_api.c under Open MPI on localhost (4 ranks,
each a node of a `--group-by rank` model) and under SMPI, and the stencil
and all-to-all programs' --live mode.

- rotation: one round per probe measures every ordered pair once per cycle;
- drift: on a platform whose node-2 link falls to a tenth at a simulated
  time, the probes before it see no change against a probe's model, the
  first one after it names exactly the pairs of node-2, and node-2;
- remap: a ring the model puts across slow pairs gets a new communicator
  (the same processes, a permutation), the data moved to the new ranks;
- errors: bad arguments, an unreadable model, a model without the ranks
  (one warning, pass through), a probe that times out (gives up, MPI goes on).
"""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
from pathlib import Path

import pytest

from rankwise.util import paths
from rankwise.model.model import MEASURED, Model

from test_coll_lib import library_engine_sources, library_mpi_sources, run_mpi
from rankwise.sim.smpi import smpirun_command
from test_coll_rules import LIB, MPI_SOURCES, _compile, _env
from conftest import run_cli

needs_mpi = pytest.mark.skipif(not (shutil.which("mpicc") and shutil.which("mpirun")), reason="no Open MPI")
needs_smpi = pytest.mark.skipif(not (shutil.which("smpicc") and shutil.which("smpirun")), reason="no SimGrid")

N = 4
SMPI_BIN = paths.PACKAGE_DIR / "_bin" / "smpi"


def parity_model(names: list[str]) -> Model:
    """Ranks of the same parity 1 us and 1 GB/s apart, of different parity
    100 us and 100 MB/s: a ring in rank order crosses on every edge."""
    n = len(names)
    m = Model.empty(names, [8, 131072])
    for i in range(n):
        for j in range(n):
            if i != j:
                a, b = (100e-6, 1e-8) if i % 2 != j % 2 else (1e-6, 1e-9)
                m.state[i, j] = MEASURED
                m.alpha[i, j], m.beta[i, j], m.measured_at[i, j] = a, b, 1.79e9
                m.rtt_min[i, j] = m.rtt_median[i, j] = m.rtt_max[i, j] = [2 * a + 8 * b, 2 * a + 131072 * b]
                m.jitter[i, j], m.samples[i, j] = [0.0, 0.0], [5, 5]
    m.source, m.created, m.duration = "synthetic", 1.79e9, 1.0
    return m


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("live-models")
    here, other = folder / "parity.rwm", folder / "other.rwm"
    parity_model([f"{socket.gethostname()}:{r}" for r in range(N)]).save(here)
    parity_model([f"elsewhere:{r}" for r in range(N)]).save(other)
    return here, other


@pytest.fixture(scope="module")
def live_mpi(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("live-mpi") / "live_api"
    _compile(["mpicc", "-O1", "-g", f"-I{LIB / 'include'}", str(MPI_SOURCES / "live_api.c"), f"-L{LIB}",
              f"-Wl,-rpath,{LIB}", "-lrankwise_coll", "-lrankwise", "-lm", "-o", str(out)])
    return out


@pytest.fixture(scope="module")
def live_smpi(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("live-smpi") / "live_api"
    _compile(["smpicc", "-O1", f"-I{LIB / 'include'}", str(MPI_SOURCES / "live_api.c"), f"-L{LIB / 'smpi'}",
              "-Wl,--whole-archive", "-lrankwise_coll", "-Wl,--no-whole-archive", "-lm", "-o", str(out)])
    return out


def ok(r: subprocess.CompletedProcess, ranks: int = N) -> None:
    assert r.returncode == 0 and r.stdout.count("failures 0") == ranks, r.stdout[-3000:] + r.stderr[-3000:]


@needs_mpi
def test_every_pair_is_refreshed_once_per_cycle_under_open_mpi(live_mpi, models):
    r = run_mpi([str(live_mpi), "rotation", str(models[0])], N, {})
    ok(r)
    assert "rotation ok 3 calls" in r.stdout  # 4 nodes: 3 tournament rounds


@needs_mpi
def test_remap_gives_a_communicator_in_the_mappers_order_under_open_mpi(live_mpi, models):
    r = run_mpi([str(live_mpi), "remap", str(models[0])], N, {"RANKWISE_COLL_TRACE": "1"})
    ok(r)
    m = re.search(r"^remap ok ([0-9.]+) order ([\d ]+)$", r.stdout, re.M)
    assert m, r.stdout
    order = [int(w) for w in m.group(2).split()]  # the old (world) rank of each new rank
    assert sorted(order) == list(range(N))
    slow = sum(order[v] % 2 != order[(v + 1) % N] % 2 for v in range(N))
    assert slow == 2  # the identity ring crosses parity on all 4 edges; two pairs of two cross twice
    assert 0.4 < float(m.group(1)) < 0.6  # predicted: half the slow messages
    assert "rankwise-live: remap of 4 ranks on 4 nodes" in r.stderr


@needs_mpi
def test_errors_are_returned_and_the_application_goes_on_under_open_mpi(live_mpi, models):
    r = run_mpi([str(live_mpi), "errors", str(models[0]), str(models[1])], N, {})
    ok(r)
    assert "errors ok" in r.stdout
    warnings = [line for line in r.stderr.splitlines() if line.startswith("rankwise-live: warning")]
    assert len(warnings) == 1 and "not in the model" in warnings[0], r.stderr


def sim_platform(folder: Path, *extra: str) -> Path:
    r = run_cli("sim", "platform", "-o", folder, "--racks", "2", "--nodes-per-rack", "2", "--cores", "2", *extra)
    assert r.returncode == 0, r.stderr
    return folder / "platform.xml"


@pytest.fixture(scope="module")
def degrading(tmp_path_factory) -> tuple[Path, Path, float]:
    """4 nodes of 2 cores; node-2's link at a tenth from simulated 0.02 s;
    a model probed before (8 B and 128 KiB)."""
    folder = tmp_path_factory.mktemp("live-platform")
    xml = sim_platform(folder / "platform", "--degrade", "node:2:0.1", "--degrade-at", "0.02")
    model = folder / "before.rwm"
    r = run_cli("probe", "--sim", xml, "--ranks-per-node", "2", "--sizes", "8,128K", "-o", model)
    assert r.returncode == 0, r.stderr
    assert Model.load(model).duration < 0.02
    return xml, model, 0.02


def smpirun(program, xml: Path, hosts: list[str], args: list[str], tmp: Path, env=None):
    """With the SMPI settings `rankwise probe --sim` uses: the in-job
    measurements are then comparable with its models."""
    hostfile = tmp / "hosts"
    hostfile.write_text("\n".join(hosts) + "\n")
    # in tmp: what the programs write to their working folder (a profile) stays out of the checkout
    return subprocess.run(smpirun_command(program, args, xml, hostfile, len(hosts)), capture_output=True, text=True,
                          env=_env(env or {}), timeout=300, cwd=tmp)


@needs_smpi
def test_rotation_under_smpi_on_five_nodes(live_smpi, tmp_path):
    xml = sim_platform(tmp_path / "p5", "--racks", "1", "--nodes-per-rack", "5", "--cores", "1")
    r = smpirun(live_smpi, xml, [f"node-{i}" for i in range(5)], ["rotation", "none"], tmp_path)
    # no model: the nodes are the processor names, every pair unmeasured until probed
    ok(r, 5)
    assert "rotation ok 5 calls" in r.stdout  # an odd count: 5 rounds, one node idle in each


@needs_smpi
def test_a_degraded_link_is_found_at_the_first_probe_after_the_change(live_smpi, degrading, tmp_path):
    xml, model, at = degrading
    r = smpirun(live_smpi, xml, [f"node-{i}" for i in range(4)], ["drift", str(model), str(at)], tmp_path)
    ok(r)
    probes = [line.split() for line in r.stdout.splitlines() if line.startswith("probe ")]
    # a probe ends where the next starts; the loop stops at the first that starts after the change
    ended_before = [p for p, q in zip(probes, probes[1:]) if float(q[2]) < at]
    spanning = probes[len(ended_before)]
    assert len(ended_before) >= 3 and float(probes[-1][2]) >= at, r.stdout
    # the in-job measurement agrees with the probe's model on the plain network
    assert all(p[3] == "0" for p in ended_before), ended_before
    # the first probe that measured after the change names node-2's pairs, and node-2 alone
    changed = spanning[4:spanning.index("nodes")]
    assert int(spanning[3]) == len(changed) >= 4 and all("node-2" in p for p in changed), spanning
    assert spanning[spanning.index("nodes") + 1:] == ["node-2"]
    later = [p for p in probes if float(p[2]) >= at]
    assert all("node-2" in pair for p in later for pair in p[4:p.index("nodes")])


@needs_smpi
def test_a_change_during_a_pairs_measurement_is_found_at_the_next_probe(live_smpi, degrading, tmp_path):
    """node-2's link falls at 8 instants spread over the probe under way at
    the change, so some land inside a pair's timed round trips (a sample
    half fast, half slow, not a change). The probes from that one through
    the first that starts after the change still name every pair of node-2
    and no other: an undecided sample does not become the reference."""
    xml, model, at = degrading
    r = smpirun(live_smpi, xml, [f"node-{i}" for i in range(4)], ["drift", str(model), str(at)], tmp_path)
    ok(r)
    starts = [float(line.split()[2]) for line in r.stdout.splitlines() if line.startswith("probe ")]
    k = next(i for i in range(1, len(starts)) if starts[i] >= at) - 1  # the probe under way at `at`
    duration = starts[k + 1] - starts[k]
    node2 = {f"node-{a}>node-{b}" for a in range(4) for b in range(4) if a != b and 2 in (a, b)}
    for i in range(8):
        when = starts[k] + duration * (i + 0.5) / 8
        folder = tmp_path / f"at{i}"
        platform = sim_platform(folder, "--degrade", "node:2:0.1", "--degrade-at", f"{when:.9f}")
        r = smpirun(live_smpi, platform, [f"node-{i}" for i in range(4)], ["drift", str(model), str(when)], folder)
        ok(r)
        probes = [line.split() for line in r.stdout.splitlines() if line.startswith("probe ")]
        named = {pair for p in probes for pair in p[4:p.index("nodes")]}
        assert named == node2, (when, r.stdout)


@needs_smpi
def test_the_collectives_decide_again_when_the_live_model_changes(live_smpi, degrading, tmp_path):
    """RANKWISE_MODEL: a broadcast is decided from the model once per size
    class; once the live probe has changed the model (a new generation) the
    next broadcast is decided again, on the new figures."""
    xml, model, at = degrading
    r = smpirun(live_smpi, xml, [f"node-{i}" for i in range(4)], ["decide", str(model), str(at)], tmp_path,
                {"RANKWISE_MODEL": str(model), "RANKWISE_COLL_TRACE": "1"})
    ok(r)
    generations = [int(g) for g in re.findall(r"^generation (\d+)$", r.stdout, re.M)]
    assert len(generations) == 2 and generations[1] > generations[0], r.stdout
    decided = re.findall(r"^rankwise-coll: decided bcast root 0 16384\+ bytes on 4 ranks from the model", r.stderr,
                         re.M)
    assert len(decided) == 2, r.stderr[-3000:]  # once per generation, not per call


@needs_smpi
def test_a_live_context_alone_leaves_the_collectives_to_the_mpi(live_smpi, degrading, tmp_path):
    xml, model, at = degrading
    r = smpirun(live_smpi, xml, [f"node-{i}" for i in range(4)], ["decide", str(model), str(at)], tmp_path,
                {"RANKWISE_COLL_TRACE": "1"})
    ok(r)
    assert "rankwise-coll: decided" not in r.stderr


@needs_smpi
def test_stencil_live_mode_remaps_and_its_results_stay_correct(degrading, tmp_path):
    """A chain of 8 ranks on 4 nodes: after node-2's link degrades, the live
    mode moves an end of the chain there; --check verifies every block of
    every iteration, before and after the move."""
    xml, model, at = degrading
    hosts = [f"node-{i // 2}" for i in range(8)]
    r = smpirun(SMPI_BIN / "rankwise-bench-stencil-coll", xml, hosts,
                ["--grid", "8x1x1", "--mode", "1d", "--sizes", "256K", "--iterations", "600", "--live", "100",
                 "--live-model", str(model), "--check"], tmp_path)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    rows = [line.split() for line in r.stdout.splitlines() if line and not line.startswith("#")]
    assert len(rows) == 600
    remapped = [row for row in rows if row[7] == "1"]
    assert len(remapped) == 1 and float(remapped[0][1]) >= at, remapped
    i = int(remapped[0][0])
    before, after = float(rows[i][2]), float(rows[-1][2])
    assert after < 0.8 * before, (before, after)


@needs_smpi
def test_stencil_live_keep_probes_as_live_but_never_remaps(degrading, tmp_path):
    """--live-keep (the kept placement of studies/live/live_remap.py --emulated): the same re-probes,
    the change found after it, and no remap."""
    xml, model, at = degrading
    r = smpirun(SMPI_BIN / "rankwise-bench-stencil-coll", xml, [f"node-{i // 2}" for i in range(8)],
                ["--grid", "8x1x1", "--mode", "1d", "--sizes", "256K", "--iterations", "600", "--live", "100",
                 "--live-model", str(model), "--live-keep", "--check"], tmp_path)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert "never remapped (--live-keep)" in r.stdout
    rows = [line.split() for line in r.stdout.splitlines() if line and not line.startswith("#")]
    assert len(rows) == 600 and sum(int(row[5]) > 0 for row in rows) == 6
    assert any(int(row[6]) > 0 and float(row[1]) >= at for row in rows)
    assert not any(row[7] == "1" or float(row[4]) > 0 for row in rows)


@needs_smpi
def test_alltoall_live_mode_keeps_its_order_and_results(degrading, tmp_path):
    """All-to-all traffic is the same whatever the order: no remap."""
    xml, model, _ = degrading
    r = smpirun(SMPI_BIN / "rankwise-bench-alltoall-coll", xml, [f"node-{i // 2}" for i in range(8)],
                ["--sizes", "16K", "--iterations", "100", "--live", "20", "--live-model", str(model), "--check"],
                tmp_path)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    rows = [line.split() for line in r.stdout.splitlines() if line and not line.startswith("#")]
    assert len(rows) == 100 and not any(row[7] == "1" for row in rows)
    assert sum(int(row[5]) > 0 for row in rows) == 5  # a probe every 20 iterations


@needs_smpi
def test_live_mode_options_are_checked(tmp_path):
    xml = sim_platform(tmp_path / "p")
    for args, message in ((["--sizes", "1K,2K", "--live", "5"], "--live takes one size"),
                          (["--sizes", "1K", "--live", "5", "--live-budget", "-1"], "--live-budget must be"),
                          (["--sizes", "1K", "--live", "5", "--live-model", str(tmp_path / "no.rwm")], "--live:"),
                          (["--sizes", "1K", "--live-keep"], "--live-keep needs --live K"),
                          (["--sizes", "1K", "--live", "5", "--live-min-gain", "1"], "--live-min-gain must be")):
        r = smpirun(SMPI_BIN / "rankwise-bench-alltoall-coll", xml, ["node-0", "node-1"], args, tmp_path)
        assert r.returncode != 0 and message in r.stderr, r.stderr[-2000:]
        assert "Traceback" not in r.stderr
    # the programs not linked with the library have no live model
    for plain in ("rankwise-bench-stencil", "rankwise-bench-stencil-profiled", "rankwise-bench-alltoall"):
        r = smpirun(SMPI_BIN / plain, xml, ["node-0", "node-1"], ["--sizes", "1K", "--live", "5"], tmp_path)
        assert r.returncode != 0 and "built without the live model" in r.stderr, r.stderr[-2000:]


@needs_mpi
def test_stencil_live_mode_under_open_mpi_with_the_library_preloaded(models):
    """The real-MPI programs find the live model in the preloaded library;
    without it --live is refused with the reason."""
    stencil = paths.PACKAGE_DIR / "_bin" / "mpi" / "rankwise-bench-stencil"
    args = [str(stencil), "--grid", "4x1x1", "--mode", "1d", "--sizes", "4K", "--iterations", "40", "--live", "10",
            "--live-model", str(models[0]), "--check"]
    r = run_mpi(args, N, {"LD_PRELOAD": str(LIB / "librankwise_coll.so")})
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    rows = [line.split() for line in r.stdout.splitlines() if line and not line.startswith("#")]
    assert len(rows) == 40 and sum(int(row[5]) > 0 for row in rows) == 4  # a probe every 10 iterations
    r = run_mpi(args, N, {})
    assert r.returncode != 0 and "--live needs librankwise_coll.so preloaded" in r.stderr, r.stderr[-2000:]


def asan_live_program(out_dir: Path) -> Path:
    """The library's sources (collectives and live model), the engine's and
    live_api.c in one executable under -fsanitize=address,undefined."""
    root = MPI_SOURCES.parents[2]
    engine = root / "engine" / "src"
    mpi = root / "engine" / "mpi"
    flags = ["-O1", "-g", "-fsanitize=address,undefined", "-fno-omit-frame-pointer",
             f"-I{root / 'engine' / 'include'}", f"-I{engine}", f"-I{engine / 'predict'}", f"-I{engine / 'coll'}",
             f"-I{mpi / 'coll'}", f"-I{mpi / 'live'}"]
    objects = []
    for sub, src in library_engine_sources(engine):
        obj = out_dir / f"{sub or 'src'}_{src.stem}.o"
        _compile(["mpicc", *flags, "-c", str(src), "-o", str(obj)])
        objects.append(str(obj))
    exe = out_dir / "live_api_asan"
    library = library_mpi_sources(mpi) + sorted((mpi / "live").glob("*.c"))
    _compile(["mpicc", *flags, *map(str, library), *objects, str(MPI_SOURCES / "live_api.c"), "-ldl", "-lm", "-o", str(exe)])
    return exe


@needs_mpi
def test_the_live_api_under_address_sanitizer(models, tmp_path):
    from test_coll_lib import ASAN_ENV

    exe = asan_live_program(tmp_path)
    for args in (["rotation", str(models[0])], ["remap", str(models[0])],
                 ["errors", str(models[0]), str(models[1])]):
        r = run_mpi([str(exe), *args], N, {**ASAN_ENV})
        ok(r)
        assert "ERROR: AddressSanitizer" not in r.stderr and "runtime error" not in r.stderr, r.stderr[-3000:]
