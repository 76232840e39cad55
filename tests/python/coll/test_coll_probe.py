"""The collectives library's in-job measurement (RANKWISE_COLL_PROBE=1,
engine/mpi/coll/decision/probe.c): under SMPI its figures are the platform's ground
truth, a degraded node shows, the send overhead is SMPI's smpi/os, every
rank builds the same network, and it costs little; under Open MPI on
localhost it finishes with finite positive figures.

The program is tests/engine/mpi/coll_probe.c: it calls rwc_probe_pnet (a
symbol of the library, hidden in the shared one: linked from the static
library under SMPI, compiled from the sources for Open MPI) and prints the
network rank 0 got and the measurement's cost (max over ranks)."""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from rankwise.util import paths
from rankwise.cluster.launch import mpi_environment
from rankwise.sim.platform import Degraded, PlatformSpec, generate
from rankwise.sim.smpi import smpirun_command

from test_coll_lib import library_engine_sources, library_mpi_sources

ROOT = Path(__file__).resolve().parents[3]
ENGINE = ROOT / "engine"
PROGRAM = ROOT / "tests" / "engine" / "mpi" / "coll_probe.c"
LIB = paths.PACKAGE_DIR / "_lib"
INCLUDES = [f"-I{ENGINE / d}" for d in ("include", "src", "src/predict", "mpi/coll")]

needs_mpi = pytest.mark.skipif(not (shutil.which("mpicc") and shutil.which("mpirun")), reason="no Open MPI")
needs_smpi = pytest.mark.skipif(not (shutil.which("smpicc") and shutil.which("smpirun")), reason="no SimGrid")


def _compile(cmd: list[str]) -> None:
    env = dict(os.environ)
    env.pop("SMPI_PRETEND_CC", None)
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stdout + r.stderr


@dataclass
class Measured:
    nodes: int
    ranks: int
    cost: float
    identical: bool
    alpha: np.ndarray
    beta: np.ndarray
    o: np.ndarray | None
    node_of: list[int] = field(default_factory=list)
    o_recv: np.ndarray | None = None

    def measured_alpha(self) -> np.ndarray:
        """The ping-pongs' alpha: the network's, with the overheads taken out of it put back."""
        if self.o is None:
            return self.alpha
        return self.alpha + self.o[:, None] + self.o_recv[None, :]


def parse(stdout: str) -> Measured:
    m = re.search(r"^coll_probe: nodes (\d+) ranks (\d+) cost (\S+) identical (\d)$", stdout, re.M)
    assert m, stdout
    n = int(m.group(1))
    alpha, beta = np.full((n, n), np.nan), np.full((n, n), np.nan)
    for i, j, a, b in re.findall(r"^pair (\d+) (\d+) (\S+) (\S+)$", stdout, re.M):
        alpha[int(i), int(j)], beta[int(i), int(j)] = float(a), float(b)
    for i, a, b in re.findall(r"^intra (\d+) (\S+) (\S+)$", stdout, re.M):
        alpha[int(i), int(i)], beta[int(i), int(i)] = float(a), float(b)
    o = re.findall(r"^o (\d+) (\S+)$", stdout, re.M)
    o_recv = re.findall(r"^or (\d+) (\S+)$", stdout, re.M)
    node_of = [int(k) for _, k in re.findall(r"^node (\d+) (\d+)$", stdout, re.M)]
    return Measured(n, int(m.group(2)), float(m.group(3)), m.group(4) == "1", alpha, beta,
                    np.array([float(v) for _, v in o]) if o else None, node_of,
                    np.array([float(v) for _, v in o_recv]) if o_recv else None)


@pytest.fixture(scope="session")
def probe_smpi(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("coll-probe-smpi") / "coll_probe"
    _compile(["smpicc", "-O1", *INCLUDES, str(PROGRAM), f"-L{LIB / 'smpi'}", "-Wl,--whole-archive",
              "-lrankwise_coll", "-Wl,--no-whole-archive", "-lm", "-o", str(out)])
    return out


@pytest.fixture(scope="session")
def probe_mpi(tmp_path_factory) -> Path:
    """The library's sources with the program (the symbol is hidden in the
    .so) and the engine's C the library links."""
    work = tmp_path_factory.mktemp("coll-probe-mpi")
    srcs = library_mpi_sources(ENGINE / "mpi")
    src = ENGINE / "src"
    objects = []
    for _, c in library_engine_sources(src):
        obj = work / f"{c.parent.name}_{c.stem}.o"
        _compile(["mpicc", "-O1", *INCLUDES, f"-I{src / 'coll'}", "-c", str(c), "-o", str(obj)])
        objects.append(obj)
    out = work / "coll_probe"
    _compile(["mpicc", "-O1", *INCLUDES, *map(str, srcs), *map(str, objects), str(PROGRAM), "-ldl", "-lm", "-o",
              str(out)])
    return out


def run_smpi(program: Path, platform_dir: Path, hosts: list[str], tmp_path: Path) -> Measured:
    hostfile = tmp_path / "hosts"
    hostfile.write_text("".join(f"{h}\n" for h in hosts))
    cmd = smpirun_command(program, [], platform_dir / "platform.xml", hostfile, len(hosts))
    env = dict(os.environ)
    env.pop("SMPI_PRETEND_CC", None)
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    return parse(r.stdout)


@needs_smpi
def test_smpi_figures_are_the_ground_truth_and_the_degraded_nodes_show(probe_smpi, tmp_path):
    """8 nodes x 2 ranks, node 5 at a quarter of the bandwidth, node 2 at 4x
    the latency: each leader pair's alpha and beta within 2 % of the
    platform's routes, each node's own pair within 2 % of its loopback."""
    spec = PlatformSpec(racks=2, nodes_per_rack=4, cores=2, seed=3,
                        degraded=[Degraded("node", 5, bw_factor=0.25), Degraded("node", 2, lat_factor=4.0)])
    gen = generate(spec, tmp_path / "platform")
    n = len(gen.nodes)
    got = run_smpi(probe_smpi, gen.platform_xml.parent, [h for h in gen.nodes for _ in range(2)], tmp_path)
    print(f"in-job measurement, {n} nodes x 2 ranks: {got.cost * 1e3:.3f} ms simulated")
    assert got.identical and (got.nodes, got.ranks) == (n, 2 * n)
    assert got.node_of == [r // 2 for r in range(2 * n)]
    off = ~np.eye(n, dtype=bool)
    # a ping-pong's fit sees the latency of both directions (the full probe's convention)
    measured = got.measured_alpha()
    np.testing.assert_allclose(measured[off], ((gen.alpha + gen.alpha.T) / 2)[off], rtol=0.02)
    np.testing.assert_allclose(1 / got.beta[off], gen.bandwidth[off], rtol=0.02)
    np.testing.assert_allclose(np.diag(measured), spec.loopback_lat, rtol=0.02)
    np.testing.assert_allclose(1 / np.diag(got.beta), spec.loopback_bw, rtol=0.02)
    per_node_beta = np.nanmean(np.where(off, got.beta, np.nan), axis=1)
    per_node_alpha = np.nanmean(np.where(off, got.alpha, np.nan), axis=1)
    assert int(np.argmax(per_node_beta)) == 5 and per_node_beta[5] > 2 * np.median(per_node_beta)
    assert int(np.argmax(per_node_alpha)) == 2
    assert np.all(got.o == 0)  # SMPI's default smpi/os
    assert np.all(got.o_recv < 1e-8)  # nor smpi/or: a few ns of the batch's messages on the wire
    assert 0 < got.cost < 0.01


@needs_smpi
def test_smpi_send_overhead_and_single_rank_nodes(probe_smpi, tmp_path):
    """smpi/os = 2 us: o is 2 us on every node; nodes of one rank have a
    free own pair (as coll tune leaves an unprobed one)."""
    spec = PlatformSpec(racks=1, nodes_per_rack=5, cores=1, send_overhead=2e-6)
    gen = generate(spec, tmp_path / "platform")
    got = run_smpi(probe_smpi, gen.platform_xml.parent, list(gen.nodes), tmp_path)
    assert got.identical and got.nodes == 5 and got.node_of == list(range(5))
    np.testing.assert_allclose(got.o, 2e-6, rtol=0.01)
    assert np.all(np.diag(got.alpha) == 0) and np.all(np.diag(got.beta) == 0)
    off = ~np.eye(5, dtype=bool)
    np.testing.assert_allclose(got.measured_alpha()[off], gen.alpha[off], rtol=0.02)
    # the ping-pongs' nonblocking sends do not pay smpi/os: alpha held no o, and loses it (at least 0)
    np.testing.assert_allclose(got.alpha[off], np.maximum(gen.alpha - 2e-6 - got.o_recv[None, :], 0)[off], rtol=0.02,
                               atol=1e-10)


@needs_smpi
def test_smpi_receive_overhead_is_measured_and_taken_out_of_alpha(probe_smpi, tmp_path):
    """smpi/or = 1 us: the receive overhead is 1 us on every node; the ping-pongs' alpha held it
    (both messages pay it), the network's alpha is the route's latency."""
    spec = PlatformSpec(racks=1, nodes_per_rack=4, cores=1, recv_overhead=1e-6)
    gen = generate(spec, tmp_path / "platform")
    got = run_smpi(probe_smpi, gen.platform_xml.parent, list(gen.nodes), tmp_path)
    np.testing.assert_allclose(got.o_recv, 1e-6, rtol=0.01)
    off = ~np.eye(4, dtype=bool)
    np.testing.assert_allclose(got.alpha[off], gen.alpha[off], rtol=0.02)
    np.testing.assert_allclose(got.measured_alpha()[off], gen.alpha[off] + 1e-6, rtol=0.02)


def run_mpi(program: Path, n: int, args: list[str]) -> Measured:
    r = subprocess.run(["mpirun", "-np", str(n), "--oversubscribe", str(program), *args], capture_output=True,
                       text=True, env=mpi_environment(), timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    return parse(r.stdout)


@needs_mpi
def test_open_mpi_every_rank_a_node_gives_finite_positive_figures(probe_mpi):
    got = run_mpi(probe_mpi, 4, ["ranks"])
    print(f"in-job measurement, Open MPI localhost, 4 ranks as nodes: {got.cost * 1e3:.3f} ms")
    assert got.identical and got.nodes == 4
    off = ~np.eye(4, dtype=bool)
    assert np.all(np.isfinite(got.alpha[off]) & (got.alpha[off] > 0))
    assert np.all(np.isfinite(got.beta[off]) & (got.beta[off] > 0))
    assert got.o is not None and np.all(np.isfinite(got.o) & (got.o > 0))
    assert math.isfinite(got.cost) and 0 < got.cost < 1.0


@needs_mpi
def test_open_mpi_one_host_is_one_node_measured_inside(probe_mpi):
    """The library's nodes are the ranks sharing memory: localhost is one
    node, whose own pair is measured (ranks 0 and 1)."""
    got = run_mpi(probe_mpi, 3, [])
    assert got.identical and got.nodes == 1 and got.node_of == [0, 0, 0]
    assert got.alpha[0, 0] > 0 and got.beta[0, 0] > 0 and got.o is None
