"""The probe under a real MPI (Open MPI on localhost, every rank a node)."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from rankwise.model import MEASURED
from rankwise.probe import ProbeOptions, probe_launcher

pytestmark = pytest.mark.skipif(not shutil.which("mpirun"), reason="no mpirun on this machine")


@pytest.mark.parametrize("ranks", [3, 4])
def test_real_mpi_probe_on_localhost(tmp_path, ranks):
    model = probe_launcher(
        f"mpirun -np {ranks} --oversubscribe",
        tmp_path / "local.rwm",
        ProbeOptions(sizes="8,1K,64K", repetitions=3, rounds=2, group_by="rank", timeout=30),
        show_progress=False,
    )
    assert model.n_nodes == ranks
    assert len(set(model.names)) == ranks
    mask = ~np.eye(ranks, dtype=bool)
    assert (model.state[mask] == MEASURED).all()
    assert (model.alpha[mask] > 0).all()
    # Timings on a shared, oversubscribed host are noisy: check consistency, not speed.
    lo, mid, hi = model.rtt_min[mask], model.rtt_median[mask], model.rtt_max[mask]
    assert (lo > 0).all() and (lo <= mid).all() and (mid <= hi).all()
    assert (model.samples[mask] >= 3).all()  # at least one round of 3 repetitions kept
    assert (model.beta[mask] >= 0).all()  # the fit never returns a negative slope
    assert model.source.startswith("mpi:mpirun")
