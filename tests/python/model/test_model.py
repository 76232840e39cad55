"""The model through the Python binding: C <-> Python round trips, fitting, errors."""

from __future__ import annotations

import numpy as np
import pytest

from rankwise.util.errors import RankwiseError
from rankwise.model.model import MEASURED, MISSING, Model


def synthetic(n=6, sizes=(8, 1024, 65536, 1 << 20), seed=0) -> Model:
    rng = np.random.default_rng(seed)
    m = Model.empty([f"n{i}" for i in range(n)], sizes, ranks_per_node=np.full(n, 2))
    alpha = rng.uniform(1e-6, 5e-6, (n, n))
    beta = 1 / rng.uniform(1e9, 1e10, (n, n))
    s = np.asarray(sizes, float)
    rtt = 2 * alpha[..., None] + beta[..., None] * s
    m.rtt_median[:] = rtt
    m.rtt_min[:] = rtt * 0.95
    m.rtt_max[:] = rtt * 1.1
    m.jitter[:] = 0.15
    m.samples[:] = 15
    m.state[:] = MEASURED
    np.fill_diagonal(m.state, 0)
    m.state[1, 4] = MISSING
    for arr in (m.rtt_median, m.rtt_min, m.rtt_max, m.jitter):
        arr[1, 4] = np.nan
        for i in range(n):
            arr[i, i] = np.nan
    m.samples[1, 4] = 0
    m.samples[np.arange(n), np.arange(n)] = 0
    m.measured_at[m.state != 0] = 1.79e9
    m.intra_state[:2] = MEASURED
    m.intra_median[:2] = 1e-7 + s / 4e10
    m.intra_min[:2] = m.intra_median[:2]
    m.intra_max[:2] = m.intra_median[:2]
    m.intra_jitter[:2] = 0.0
    m.intra_samples[:2] = 15
    m.source = "synthetic test"
    m.created = 1.79e9
    m.refit()
    return m, alpha, beta


def test_python_write_c_read_round_trip(tmp_path):
    m, _, _ = synthetic()
    path = tmp_path / "m.rwm"
    m.save(path)
    back = Model.load(path)
    assert back.equals(m)
    # The file is the documented text format, written by the C engine.
    lines = path.read_text().splitlines()
    assert lines[0] == "rankwise-model 2"
    assert "pair 1 4 missing nan nan 1790000000.000" in lines


def test_refit_recovers_hockney_parameters():
    m, alpha, beta = synthetic()
    ok = m.state == MEASURED
    # The fit sees rtt = alpha_ij + alpha_ji + beta m only through the
    # symmetric-alpha model, so compare with the generating values.
    np.testing.assert_allclose(m.alpha[ok], alpha[ok], rtol=1e-9)
    np.testing.assert_allclose(m.beta[ok], beta[ok], rtol=1e-9)
    assert np.isnan(m.alpha[1, 4])
    assert m.time(0, 1, 1000) == pytest.approx(alpha[0, 1] + beta[0, 1] * 1000)
    assert np.isnan(m.time(1, 4, 10))
    np.testing.assert_allclose(m.bandwidth[ok], 1 / beta[ok])


def test_groups_from_numbers():
    n = 12
    m = Model.empty([f"h{i}" for i in range(n)], [8])
    rack = np.arange(n) // 4
    m.alpha[:] = np.where(rack[:, None] == rack[None, :], 2e-6, 7e-6)
    m.beta[:] = 1e-10
    m.state[:] = MEASURED
    np.fill_diagonal(m.state, 0)
    g = m.groups()
    assert len(set(g)) == 3
    assert all(g[i] == g[4 * (i // 4)] for i in range(n))


def test_load_errors_are_one_line_with_file_and_line(tmp_path):
    bad = tmp_path / "bad.rwm"
    bad.write_text("rankwise-model 1\nsizes 8\nnodes 2\nnode 0 a 1\nnode 1 a 1\n")
    with pytest.raises(RankwiseError, match=r"bad.rwm:5: duplicate node name 'a'"):
        Model.load(bad)
    with pytest.raises(RankwiseError, match="cannot open"):
        Model.load(tmp_path / "absent.rwm")


def test_save_creates_missing_folders_as_every_writer_does(tmp_path):
    m, _, _ = synthetic(n=5)
    m.save(tmp_path / "nope" / "m.rwm")  # -o behaves alike everywhere: missing folders are made
    assert Model.load(tmp_path / "nope" / "m.rwm").equals(m)
    assert sorted(p.name for p in (tmp_path / "nope").iterdir()) == ["m.rwm"]


def test_binding_refuses_an_engine_of_another_abi(monkeypatch):
    """A package and an engine from different builds: a clear error at load
    time, not a crash in a structure of another layout."""
    from rankwise._engine import core as engine
    engine.lib.cache_clear()
    monkeypatch.setattr(engine, "ABI_VERSION", engine.ABI_VERSION + 1)
    try:
        with pytest.raises(RankwiseError, match=r"the C engine has ABI version \d+, this Python package "
                                                r"needs \d+: rebuild and reinstall rankwise"):
            engine.lib()
    finally:
        engine.lib.cache_clear()


def test_enumerations_come_from_the_engine_by_name():
    from rankwise._engine import core as engine
    from rankwise.model.model import MODES, STATE_NAMES

    assert engine.enum_names("pair_state") == STATE_NAMES
    assert engine.enum_names("probe_mode") == MODES
    assert engine.enum_value("status", "parse") == 2 and engine.enum_names("status")[0] == "ok"
    with pytest.raises(RankwiseError, match="the C engine knows no probe mode 'turbo'"):
        engine.enum_value("probe_mode", "turbo")


def test_settings_out_of_int32_are_refused_not_wrapped(tmp_path):
    """repetitions=3e9 used to wrap (UB in the reader, silent in ctypes)."""
    m, _, _ = synthetic()
    m.settings.repetitions = 3 * 10**9
    with pytest.raises(RankwiseError, match=r"x\.rwm: cannot write: settings: repetitions must be integers"):
        m.save(tmp_path / "x.rwm")
    assert not (tmp_path / "x.rwm").exists()
    (tmp_path / "y.rwm").write_text("rankwise-model 1\nsettings repetitions=3e9\nsizes 8\nnodes 1\nnode 0 a 1\n")
    with pytest.raises(RankwiseError, match=r"y\.rwm:2: settings: repetitions must be an integer in \[1, 2147483647\]"):
        Model.load(tmp_path / "y.rwm")


def test_a_directory_is_named_as_such(tmp_path):
    with pytest.raises(RankwiseError, match=rf"{tmp_path}: cannot open: it is a directory, not a file"):
        Model.load(tmp_path)
