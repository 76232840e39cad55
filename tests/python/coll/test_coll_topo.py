"""MPI's reorder flag made real by librankwise_coll (docs/concepts/collectives.md,
"Topology reordering"): with RANKWISE_MODEL, MPI_Cart_create and the graph
constructors with reorder = 1 give the grid's vertices the slots the mapper
chooses on the model; reorder = 0 or no model leave MPI's own order.

- Open MPI on localhost, ranks as nodes (`--group-by rank` names): a 2 x 4
  periodic grid on a model whose odd and even ranks are far apart. Every
  constructor returns a valid topology (tests/engine/mpi/topo_reorder.c
  checks coordinates, shifts, neighbour lists and a message to each
  neighbour), in an order with fewer slow neighbour pairs than the identity.
- SMPI: a halo exchange on a grid whose identity order crosses slow rack
  uplinks runs faster in simulated time with reorder = 1 under the
  library than without it.
"""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
from pathlib import Path

import pytest

from rankwise.model.model import MEASURED, Model
from rankwise.sim.platform import Degraded, PlatformSpec, generate

from test_coll_lib import ASAN_ENV, library_engine_sources, library_mpi_sources, run_mpi, timed_out
from test_coll_rules import LIB, MPI_SOURCES, SMPI_CONFIG, _compile, _env, ground_truth_model

needs_mpi = pytest.mark.skipif(not (shutil.which("mpicc") and shutil.which("mpirun")), reason="no Open MPI")
needs_smpi = pytest.mark.skipif(not (shutil.which("smpicc") and shutil.which("smpirun")), reason="no SimGrid")

DX, DY = 2, 4
N = DX * DY


def grid_pairs(order: list[int]) -> list[tuple[int, int]]:
    """(world rank, world rank) of every directed neighbour pair of the grid."""
    pairs = []
    for v in range(N):
        i, j = divmod(v, DY)
        for w in (((i + 1) % DX) * DY + j, ((i - 1) % DX) * DY + j, i * DY + (j + 1) % DY, i * DY + (j - 1) % DY):
            pairs.append((order[v], order[w]))
    return pairs


def slow(a: int, b: int) -> bool:
    return a % 2 != b % 2


def parity_model(names: list[str]) -> Model:
    """Ranks of the same parity 1 us and 1 GB/s apart, of different parity
    100 us and 100 MB/s: the identity grid puts every row neighbour across."""
    n = len(names)
    m = Model.empty(names, [8, 1024])
    for i in range(n):
        for j in range(n):
            if i != j:
                a, b = (100e-6, 1e-8) if slow(i, j) else (1e-6, 1e-9)
                m.state[i, j] = MEASURED
                m.alpha[i, j], m.beta[i, j], m.measured_at[i, j] = a, b, 1.79e9
                m.rtt_min[i, j] = m.rtt_median[i, j] = m.rtt_max[i, j] = [2 * a + 8 * b, 2 * a + 1024 * b]
                m.jitter[i, j], m.samples[i, j] = [0.0, 0.0], [5, 5]
    m.source, m.created, m.duration = "synthetic", 1.79e9, 1.0
    return m


@pytest.fixture(scope="module")
def grid_program(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("topo-mpi") / "topo_reorder"
    _compile(["mpicc", "-O1", "-g", str(MPI_SOURCES / "topo_reorder.c"), "-o", str(out)])
    return out


@pytest.fixture(scope="module")
def parity_model_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("topo-model") / "parity.rwm"
    parity_model([f"{socket.gethostname()}:{r}" for r in range(N)]).save(path)
    return path


def run_grid(program: Path, kind: str, reorder: int, variables: dict[str, str]) -> tuple[list[int], str]:
    r = run_mpi([str(program), kind, str(reorder), str(DX), str(DY)], N,
                {"LD_PRELOAD": str(LIB / "librankwise_coll.so"), **variables})
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    assert r.stdout.count("failures 0") == N, r.stdout + r.stderr[-3000:]
    orders = re.findall(r"^order ([\d ]+)$", r.stdout, re.M)
    assert len(orders) == 1, r.stdout
    order = [int(w) for w in orders[0].split()]
    assert sorted(order) == list(range(N))
    return order, r.stderr


@needs_mpi
@pytest.mark.parametrize("kind", ["cart", "graph", "dist", "adjacent"])
def test_reorder_puts_grid_neighbours_on_fast_pairs(grid_program, parity_model_file, kind):
    order, err = run_grid(grid_program, kind, 1, {"RANKWISE_MODEL": str(parity_model_file),
                                                  "RANKWISE_COLL_TRACE": "1"})
    identity = list(range(N))
    assert order != identity
    slow_reordered = sum(slow(a, b) for a, b in grid_pairs(order))
    slow_identity = sum(slow(a, b) for a, b in grid_pairs(identity))
    # 2 x 4 torus on two groups of four: every row edge crosses in rank order,
    # a 2 x 2 block per group cuts half of them
    assert (slow_identity, slow_reordered) == (16, 8)
    assert "reordered" in err and "warning" not in err


@needs_mpi
def test_a_grid_smaller_than_the_communicator_may_take_any_of_its_slots(grid_program, parity_model_file):
    """2 x 3 on 8 ranks: six ranks of the mapper's choice form the grid, the
    other two get MPI_COMM_NULL (topo_reorder.c counts them)."""
    r = run_mpi([str(grid_program), "cart", "1", "2", "3"], N, {"LD_PRELOAD": str(LIB / "librankwise_coll.so"),
                                                               "RANKWISE_MODEL": str(parity_model_file)})
    assert r.returncode == 0 and r.stdout.count("failures 0") == N, r.stdout + r.stderr[-3000:]
    order = [int(w) for w in re.search(r"^order ([\d ]+)$", r.stdout, re.M).group(1).split()]
    assert len(set(order)) == 6 and order != list(range(6))


@needs_mpi
@pytest.mark.parametrize("kind", ["cart", "adjacent"])
def test_reorder_zero_or_no_model_keeps_mpis_order(grid_program, parity_model_file, kind):
    kept, err = run_grid(grid_program, kind, 0, {"RANKWISE_MODEL": str(parity_model_file)})
    assert kept == list(range(N)) and "rankwise-coll" not in err
    # no model: the MPI's own reorder (Open MPI keeps the order on one host)
    own, err = run_grid(grid_program, kind, 1, {})
    assert own == list(range(N)) and "rankwise-coll" not in err


@needs_mpi
@pytest.mark.parametrize("kind", ["dist", "adjacent"])
def test_topo_reorder_off_keeps_mpis_order_with_a_model(grid_program, parity_model_file, kind):
    """RANKWISE_TOPO_REORDER=0: a code that assumes reorder keeps every rank (MPICH's distgraph1)
    gets the MPI's own order although the model would reorder (the test above); a value that is no
    boolean is one warning and counts as off."""
    for value, warns in (("0", False), ("off", False), ("maybe", True)):
        kept, err = run_grid(grid_program, kind, 1, {"RANKWISE_MODEL": str(parity_model_file),
                                                     "RANKWISE_COLL_TRACE": "1", "RANKWISE_TOPO_REORDER": value})
        assert kept == list(range(N)) and "reordered" not in err, err
        assert ("RANKWISE_TOPO_REORDER=maybe is not a boolean" in err) == warns, err
    reordered, err = run_grid(grid_program, kind, 1, {"RANKWISE_MODEL": str(parity_model_file),
                                                      "RANKWISE_COLL_TRACE": "1", "RANKWISE_TOPO_REORDER": "yes"})
    assert reordered != list(range(N)) and "reordered" in err


@needs_mpi
def test_a_model_without_the_ranks_warns_once_and_passes_through(grid_program, tmp_path):
    other = tmp_path / "other.rwm"
    parity_model([f"elsewhere:{r}" for r in range(N)]).save(other)
    order, err = run_grid(grid_program, "cart", 1, {"RANKWISE_MODEL": str(other)})
    assert order == list(range(N))
    # (the program's own collectives warn once more, on their own path)
    warnings = [line for line in err.splitlines() if line.startswith("rankwise-coll: warning") and "topology" in line]
    assert len(warnings) == 1 and "not in the model" in warnings[0], err


def slow_pairs_along(order: list[int], dim: int) -> int:
    """Slow directed neighbour pairs along grid dimension 0 (length DX) or 1 (length DY)."""
    pairs = []
    for v in range(N):
        i, j = divmod(v, DY)
        ws = (((i + 1) % DX) * DY + j, ((i - 1) % DX) * DY + j) if dim == 0 else \
            (i * DY + (j + 1) % DY, i * DY + (j - 1) % DY)
        pairs += [(order[v], order[w]) for w in ws]
    return sum(slow(a, b) for a, b in pairs)


@needs_mpi
@pytest.mark.parametrize("weights, heavy", [("1,100", 1), ("100,1", 0)])
def test_cart_weights_keep_the_heavy_dimension_on_fast_pairs(grid_program, parity_model_file, weights, heavy):
    """RANKWISE_CART_WEIGHTS gives the volume per dimension, which a grid
    does not state: the heavy dimension's neighbours all land on fast pairs."""
    order, err = run_grid(grid_program, "cart", 1, {"RANKWISE_MODEL": str(parity_model_file),
                                                     "RANKWISE_CART_WEIGHTS": weights})
    assert order != list(range(N)) and "warning" not in err
    assert slow_pairs_along(order, heavy) == 0, order


@needs_mpi
@pytest.mark.parametrize("weights", ["1", "1,0", "1,2,3", "a,b", "1,,2", "3,"])
def test_bad_cart_weights_warn_once_and_keep_the_mpis_order(grid_program, parity_model_file, weights):
    order, err = run_grid(grid_program, "cart", 1, {"RANKWISE_MODEL": str(parity_model_file),
                                                     "RANKWISE_CART_WEIGHTS": weights})
    assert order == list(range(N))
    warnings = [line for line in err.splitlines() if "RANKWISE_CART_WEIGHTS" in line]
    assert len(warnings) == 1 and "give 2 positive integers" in warnings[0], err


@needs_mpi
@pytest.mark.parametrize("flag", ["--reorder", "--reorder-graph"])
def test_stencil_benchmark_runs_right_in_the_reordered_order(parity_model_file, flag):
    """rankwise-bench-stencil --reorder / --reorder-graph under the preloaded
    library: the grid renumbered, every received block verified (--check)."""
    from rankwise.util import paths
    program = paths.program("rankwise-bench-stencil", "mpi")
    r = run_mpi([str(program), "--grid", "2x4x1", "--mode", "3d", "--sizes", "1K", "--iterations", "2",
                 "--periodic", "--check", flag], N,
                {"LD_PRELOAD": str(LIB / "librankwise_coll.so"), "RANKWISE_MODEL": str(parity_model_file)})
    assert r.returncode == 0, r.stdout + r.stderr[-2000:]
    moved = re.search(r"^# order: .*: (\d+) of 8 ranks renumbered$", r.stdout, re.M)
    assert moved and int(moved.group(1)) > 0, r.stdout


@pytest.fixture(scope="module")
def slow_uplinks(tmp_path_factory):
    """2 racks of 4 nodes, both uplinks at a tenth of their bandwidth."""
    spec = PlatformSpec(racks=2, nodes_per_rack=4, cores=1, seed=5,
                        degraded=[Degraded("uplink", 0, bw_factor=0.1), Degraded("uplink", 1, bw_factor=0.1)])
    return generate(spec, tmp_path_factory.mktemp("topo-platform"))


@needs_smpi
def test_reordered_halo_exchange_is_faster_in_simulation(slow_uplinks, tmp_path):
    """Ranks dealt to the two racks alternately: in rank order every row
    neighbour of the grid is across the racks' slow uplinks."""
    program = tmp_path / "topo_reorder"
    _compile(["smpicc", "-O1", str(MPI_SOURCES / "topo_reorder.c"), f"-L{LIB / 'smpi'}", "-Wl,--whole-archive",
              "-lrankwise_coll", "-Wl,--no-whole-archive", "-lm", "-o", str(program)])
    nodes = slow_uplinks.hostfile.read_text().split()[:8]
    hosts = [h for pair in zip(nodes[:4], nodes[4:]) for h in pair]
    hostfile = tmp_path / "hostfile"
    hostfile.write_text("\n".join(hosts) + "\n")
    model = tmp_path / "truth.rwm"
    ground_truth_model(slow_uplinks, hosts).save(model)

    def simulated(reorder: int, variables: dict[str, str]) -> tuple[float, list[int]]:
        r = subprocess.run(["smpirun", "-np", str(N), "-platform", str(slow_uplinks.platform_xml), "-hostfile",
                            str(hostfile), *SMPI_CONFIG, str(program), "cart", str(reorder), str(DX), str(DY),
                            "262144", "4"], capture_output=True, text=True, env=_env(variables), timeout=300)
        assert r.returncode == 0 and r.stdout.count("failures 0") == N, r.stdout + r.stderr[-2000:]
        order = [int(w) for w in re.search(r"^order ([\d ]+)$", r.stdout, re.M).group(1).split()]
        return float(re.search(r"^time ([0-9.e+-]+)$", r.stdout, re.M).group(1)), order

    plain, plain_order = simulated(1, {})
    mapped, mapped_order = simulated(1, {"RANKWISE_MODEL": str(model)})
    print(f"halo exchange, simulated: MPI's order {plain:.6f} s, rankwise's {mapped:.6f} s, order {mapped_order}")
    assert plain_order == list(range(N)) and mapped_order != plain_order
    assert mapped < 0.9 * plain


def asan_grid_program(out_dir: Path) -> Path:
    """The library's sources, the engine's and topo_reorder.c in one
    executable under -fsanitize=address,undefined (as asan_coll_check)."""
    root = MPI_SOURCES.parents[2]
    engine = root / "engine" / "src"
    flags = ["-O1", "-g", "-fsanitize=address,undefined", "-fno-omit-frame-pointer",
             f"-I{root / 'engine' / 'include'}", f"-I{engine}", f"-I{engine / 'predict'}", f"-I{engine / 'coll'}",
             f"-I{root / 'engine' / 'mpi' / 'coll'}"]
    objects = []
    for sub, src in library_engine_sources(engine):
        obj = out_dir / f"{sub or 'src'}_{src.stem}.o"
        _compile(["mpicc", *flags, "-c", str(src), "-o", str(obj)])
        objects.append(str(obj))
    exe = out_dir / "topo_reorder_asan"
    _compile(["mpicc", *flags, *map(str, library_mpi_sources(root / "engine" / "mpi")), *objects,
              str(MPI_SOURCES / "topo_reorder.c"), "-ldl", "-lm", "-o", str(exe)])
    return exe


@needs_mpi
def test_reordering_under_address_sanitizer(parity_model_file, tmp_path):
    exe = asan_grid_program(tmp_path)
    for kind in ("cart", "graph", "dist", "adjacent"):
        r = run_mpi([str(exe), kind, "1", str(DX), str(DY)], N, {"RANKWISE_MODEL": str(parity_model_file), **ASAN_ENV})
        assert r.returncode == 0 and r.stdout.count("failures 0") == N, r.stdout + r.stderr[-3000:]
        assert "ERROR: AddressSanitizer" not in r.stderr and "runtime error" not in r.stderr, r.stderr[-3000:]
        assert re.search(r"^order ([\d ]+)$", r.stdout, re.M).group(1) != " ".join(map(str, range(N)))


@pytest.fixture(scope="module")
def dist_graph_program(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist-graph") / "dist_graph_cases"
    _compile(["mpicc", "-O1", str(MPI_SOURCES / "dist_graph_cases.c"), "-o", str(out)])
    return out


@needs_mpi
@pytest.mark.parametrize("model", [False, True])
def test_repeated_distributed_graphs_end(tmp_path, model):
    """60 MPI_Dist_graph_create calls in a row on MPI_COMM_WORLD, 7 ranks, three runs: Open MPI 4.1
    alone waits forever in most runs (its edge tags meet its nonblocking collectives' tags on the
    parent, open-mpi/ompi#13918); the library built every graph on a communicator of its own
    before that. Without a model (reorder 0) and with one (reorder 1: the library's mapping
    decides), every run ends."""
    exe = tmp_path / "dist_graph_repeat"
    _compile(["mpicc", "-O1", str(MPI_SOURCES / "dist_graph_repeat.c"), "-o", str(exe)])
    variables = {"LD_PRELOAD": str(LIB / "librankwise_coll.so")}
    if model:
        variables["RANKWISE_MODEL"] = str(tmp_path / "parity.rwm")
        parity_model([f"{socket.gethostname()}:{r}" for r in range(7)]).save(variables["RANKWISE_MODEL"])
    for run in range(3):
        try:
            r = run_mpi([str(exe), "1" if model else "0"], 7, variables, timeout=60)
        except subprocess.TimeoutExpired as e:
            pytest.fail(timed_out(e, f"run {run}: no end within 60 s (a run takes about 2 s)"))
        assert r.returncode == 0 and "dist_graph_repeat: 60 graphs" in r.stdout, r.stdout + r.stderr[-3000:]


@needs_mpi
@pytest.mark.parametrize("n", [4, 7])
def test_distributed_graph_constructors_with_a_model_end_and_agree(dist_graph_program, tmp_path, n):
    """MPICH's distgraph1 hung inside Open MPI's MPI_Dist_graph_create with RANKWISE_MODEL (issue 25, 2c):
    weighted, MPI_UNWEIGHTED, source-only, empty, NULL and MPI_WEIGHTS_EMPTY graphs with reorder 0, 1
    and 2, reordered on the parity model, three runs each within a time limit; every result a graph
    whose edges agree between their ends."""
    model = tmp_path / "parity.rwm"
    parity_model([f"{socket.gethostname()}:{r}" for r in range(n)]).save(model)
    for _ in range(3):
        try:
            r = run_mpi([str(dist_graph_program)], n, {"LD_PRELOAD": str(LIB / "librankwise_coll.so"),
                                                       "RANKWISE_MODEL": str(model), "RANKWISE_COLL_TRACE": "1"},
                        timeout=90)
        except subprocess.TimeoutExpired as e:
            pytest.fail(timed_out(e, f"{n} ranks: no end within 90 s"))
        assert r.returncode == 0 and "dist_graph_cases: " in r.stdout and " 0 failures" in r.stdout, \
            r.stdout + r.stderr[-3000:]
        assert "reordered" in r.stderr  # the library's reordering was exercised, not passed by
