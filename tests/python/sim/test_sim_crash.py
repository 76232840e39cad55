"""Simulated runs that SimGrid cannot run, and what rankwise says about them.

The platform of tests/python/sim_platforms.py (a user's hand-written Full zone,
a few slow NICs and one slow uplink) made SimGrid 3.32's max-min solver abort
or segfault under a 2-ranks-per-node probe (docs/concepts/simulation.md, 'SimGrid
crashes'). 48 hosts in 6 racks fail within a second; 96 as the user had, in
about a minute."""

from __future__ import annotations

import io
import re
import shutil
import time

import numpy as np
import pytest
import rich
from rich.console import Console

from conftest import assert_one_line_error, run_cli
from sim_platforms import full_zone_platform
from rankwise.workflows import optimize
from rankwise.util.errors import RankwiseError
from rankwise.model.model import MEASURED
from rankwise.measure.probe import LIGHT_SIM_PROBE, ProbeOptions, probe_sim
from rankwise.cluster.benchmark_programs import run_benchmark
from rankwise.sim import smpi

needs_smpi = pytest.mark.skipif(not shutil.which("smpirun"), reason="no SimGrid")

SLOW_NICS = (3, 10, 21, 30, 40)


@pytest.fixture(scope="module")
def uneven_platform(tmp_path_factory):
    """48 hosts of 4 cores, 6 racks of 8; 5 NICs at 1.5625 GB/s and 20 us,
    rack 2's uplink at 12.5 GB/s and 20 us; no loopback declared."""
    return full_zone_platform(tmp_path_factory.mktemp("uneven") / "plat.xml", hosts=48, racks=6,
                              slow_nics=SLOW_NICS, slow_uplink=2)


NO_ROUTE = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="z" routing="Full">
    <host id="a" speed="1Gf" core="2"/><host id="b" speed="1Gf" core="2"/><host id="c" speed="1Gf" core="2"/>
    <link id="l" bandwidth="1GBps" latency="1us"/>
    <route src="a" dst="b"><link_ctn id="l"/></route>
  </zone>
</platform>
"""


@needs_smpi
def test_uneven_platform_probes_with_two_ranks_per_node(uneven_platform, tmp_path):
    started = time.monotonic()
    model = probe_sim(uneven_platform, tmp_path / "m.rwm", ProbeOptions(sizes="8,64K"), ranks_per_node=2,
                      show_progress=False)
    assert time.monotonic() - started < 60
    n = model.n_nodes
    assert n == 48
    off = ~np.eye(n, dtype=bool)
    assert (model.state[off] == MEASURED).all()
    # Each slow NIC bounds every route through it; the concurrent probe
    # shares the 2:1 oversubscribed uplinks too, so other routes vary, but
    # never fall to a slow NIC's speed.
    bw = model.bandwidth
    slow = np.zeros(n, dtype=bool)
    slow[list(SLOW_NICS)] = True
    through_slow = (slow[:, None] | slow[None, :]) & off
    assert (bw[through_slow] <= 1.5625e9 * 1.01).all()
    assert np.median(bw[through_slow]) == pytest.approx(1.5625e9, rel=0.01)
    assert (bw[off & ~through_slow] > 1.6e9).all()


@needs_smpi
def test_the_default_allgather_crashes_simgrid_and_says_so(uneven_platform, tmp_path, monkeypatch):
    """The trigger: without the ring allgather, the probe's first collective
    puts ~9,000 flows in one max-min system and SimGrid 3.32 crashes."""
    monkeypatch.setattr(smpi, "PROBE_SETTINGS", ())
    try:
        probe_sim(uneven_platform, tmp_path / "m.rwm", ProbeOptions(sizes="8"), ranks_per_node=2,
                  show_progress=False)
    except RankwiseError as e:
        message = str(e)
    else:
        pytest.skip("this SimGrid no longer crashes on the platform")
    assert message.startswith("SimGrid crashed on this platform: ")
    assert "try fewer ranks per node" in message and "\n" not in message
    assert "Execution failed" not in message and "exit code" not in message
    assert not (tmp_path / "m.rwm").exists()


@needs_smpi
def test_one_rank_per_node_never_needed_the_fix(uneven_platform, tmp_path, monkeypatch):
    monkeypatch.setattr(smpi, "PROBE_SETTINGS", ())
    model = probe_sim(uneven_platform, tmp_path / "m.rwm", ProbeOptions(sizes="8"), show_progress=False)
    assert model.n_nodes == 48


MAXMIN_ABORT = [
    "[node-3:17:(18) 0.000065] ./src/kernel/lmm/maxmin.cpp:221: [ker_lmm/CRITICAL] Cannot saturate more a "
    "constraint that has no active element! You may want to change the maxmin precision "
    "(--cfg=maxmin/precision:<new_value>) because of possible rounding effects.",
    "Execution failed with code 134.",
]


@pytest.mark.parametrize(
    "code, log, expected",
    [
        (134, MAXMIN_ABORT, "SimGrid crashed on this platform: Cannot saturate more a constraint that has no "
                            "active element (MaxMin::do_solve); try fewer ranks per node or fewer nodes"),
        (139, ["/x/rankwise-probe --cfg=smpi/privatization:1 --cfg=surf/precision:1e-9 /tmp/p.xml",
               "Execution failed with code 139.", "Segmentation fault.", "Segmentation fault"],
         "SimGrid crashed on this platform: segmentation fault inside the simulation"),
        (134, ["[0.000000] [ker_routing/CRITICAL] You're trying to send data from a to c but there is no "
               "connecting path between these two hosts.", "Execution failed with code 134."],
         "the run failed: You're trying to send data from a to c but there is no connecting path between "
         "these two hosts"),
        (134, ["exerciser: rank 1 aborts on purpose", "Execution failed with code 134."],
         "the run failed (exit code 134): exerciser: rank 1 aborts on purpose"),
        (1, ["rankwise-probe: error: --sizes: '0' is not a size"], "--sizes: '0' is not a size"),
        (1, [], "the run failed (exit code 1): no output"),
    ],
)
def test_failure_message_of_simulated_runs(code, log, expected):
    message = smpi.failure_message("the run", code, log)
    assert message.startswith(expected), message
    assert "\n" not in message


@needs_smpi
def test_cli_probe_names_simgrids_error_line(tmp_path):
    platform = tmp_path / "noroute.xml"
    platform.write_text(NO_ROUTE)
    r = run_cli("probe", "--sim", platform, "-o", tmp_path / "m.rwm")
    assert_one_line_error(r, "no connecting path between these two hosts")
    assert r.returncode == 1 and "Execution failed" not in r.stderr
    assert not (tmp_path / "m.rwm").exists()


@needs_smpi
def test_benchmark_program_names_simgrids_error_line(tmp_path):
    platform = tmp_path / "noroute.xml"
    platform.write_text(NO_ROUTE)
    with pytest.raises(RankwiseError, match="no connecting path between these two hosts") as e:
        run_benchmark("alltoall", ["--sizes", "8", "--iterations", "1"], sim=platform)
    assert "Execution failed" not in str(e.value)


@needs_smpi
def test_progress_shows_the_time_left(small_platform, tmp_path, monkeypatch):
    screen = io.StringIO()
    monkeypatch.setattr(rich, "_console", Console(file=screen, force_terminal=True, width=160))
    probe_sim(small_platform.platform_xml, tmp_path / "m.rwm",
              ProbeOptions(sizes="8,1K,64K,1M", repetitions=4, rounds=4), show_progress=True)
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", screen.getvalue())
    assert "probing 8 simulated nodes" in text
    assert re.search(r"\d+/\d+ +\d+:\d\d:\d\d +\d+:\d\d:\d\d left", text), text[-500:]


class _Probed(Exception):
    pass


def test_optimize_probes_a_simulated_cluster_with_the_light_settings(small_platform, tmp_path, monkeypatch):
    seen = {}

    def fake_probe_sim(platform, path, options, ranks_per_node=1, **kw):
        seen.update(options=options, ranks_per_node=ranks_per_node)
        raise _Probed

    monkeypatch.setattr("rankwise.measure.probe.probe_sim", fake_probe_sim)
    with pytest.raises(_Probed):
        optimize.run_optimize(console=Console(file=io.StringIO()), app=None, args=[], sim=small_platform.platform_xml,
                              pattern="alltoall:ranks=8,bytes=1K", out=tmp_path / "out")
    assert seen["options"] == LIGHT_SIM_PROBE
    assert seen["options"].sizes == "8,16K,1M" and seen["options"].repetitions == 2
    assert seen["ranks_per_node"] == 2
