"""`rankwise node probe`: real Open MPI on this machine (2 cores), the ranks
attributed to levels by a synthetic topology naming more structure than the
machine has: binding to other domains cannot be real here, but the code
path from the launcher's binding to the model's node-cost lines is."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
from conftest import assert_one_line_error, run_cli

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from test_core_binding import needs_mpi  # noqa: E402

BOUND = "mpirun -np 2 --bind-to core"
TWO_PACKAGES = "pack:2 core:1 pu:1"  # cpu 0 and cpu 1 in different packages


def _two_cores():
    return len(os.sched_getaffinity(0)) >= 2


@needs_mpi
def test_two_ranks_on_two_packages_fill_the_node_level(tmp_path):
    if not _two_cores():
        import pytest
        pytest.skip("one core")
    from rankwise.model.model import Model

    Model.empty(["a", "b"], [8, 1024]).save(tmp_path / "in.rwm")
    r = run_cli("node", "probe", "--launcher", BOUND, "--synthetic", TWO_PACKAGES, "--sizes", "8,64K",
                "--rounds", "5", "--model", tmp_path / "in.rwm", "-o", tmp_path / "out.rwm")
    assert r.returncode == 0, r.stderr
    assert "2 ranks on cpus 0, 1" in r.stdout and "probe cost" in r.stdout
    m = Model.load(tmp_path / "out.rwm")
    assert np.isnan(m.node_alpha[:3]).all()  # only the node level was measured
    assert m.node_alpha[3] > 0 and m.node_beta[3] > 0


@needs_mpi
def test_a_rank_on_a_cpu_the_topology_lacks_is_a_one_line_error(tmp_path):
    if not _two_cores():
        import pytest
        pytest.skip("one core")
    r = run_cli("node", "probe", "--launcher", BOUND, "--synthetic", "pack:1 core:1 pu:1", "--rounds", "2")
    assert_one_line_error(r, "rank 1 reports cpu 1, which is the first cpu of no core of the node topology")


def test_an_unreadable_topology_fails_before_any_launch(tmp_path):
    (tmp_path / "bad.xml").write_text("<topology><object")
    r = run_cli("node", "probe", "--launcher", "no-such-launcher", "--xml", "bad.xml", cwd=tmp_path)
    assert_one_line_error(r, "bad.xml: not a topology hwloc can read")


def test_model_and_output_go_together(tmp_path):
    assert_one_line_error(run_cli("node", "probe", "--model", tmp_path / "m.rwm"), "--model and --output go together")


def test_a_launcher_that_does_not_exist(tmp_path):
    assert_one_line_error(run_cli("node", "probe", "--launcher", "no-such-launcher -np 2", "--synthetic", TWO_PACKAGES),
                          "launcher 'no-such-launcher' not found")


@needs_mpi
def test_one_rank_on_the_node_is_a_one_line_error():
    r = run_cli("node", "probe", "--launcher", "mpirun -np 1", "--synthetic", TWO_PACKAGES, "--rounds", "2")
    assert_one_line_error(r, "ran 1 rank on the node of rank 0: the launcher must start at least 2 ranks")
