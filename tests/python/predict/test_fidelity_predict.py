"""studies/model/fidelity_predict.py's small pieces: job sizes, error statistics, the dealing of seeds
(model_fidelity.py's), the --reuse layout (model_fidelity.py's folders are taken as they are)."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def fp():
    sys.path.insert(0, str(ROOT / "studies" / "model"))
    spec = importlib.util.spec_from_file_location("fidelity_predict", ROOT / "studies" / "model" / "fidelity_predict.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # its dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


def test_job_ranks_stay_in_16_to_64(fp):
    assert fp.job_ranks(16, 1) == 16
    assert fp.job_ranks(32, 2) == 64
    assert fp.job_ranks(96, 2) == 64
    assert fp.job_ranks(45, 2) == 64
    assert fp.job_ranks(8, 1) == 0  # below 16 ranks: no collective rows
    assert fp.job_ranks(8, 2) == 16


def test_stats_are_of_absolute_errors(fp):
    med, p90, n = fp.stats([0.1, -0.2, 0.0, float("nan"), -0.05])
    assert n == 4 and med == pytest.approx(0.075) and p90 == pytest.approx(0.17)
    assert all(math.isnan(x) for x in fp.stats([])[:2])


def test_errors_are_predicted_over_measured(fp):
    r = fp.CollRow(0, "torus:4,4,2", 1, 32, "bcast", "binomial", 1024, simulated=2.0, predicted=2.5)
    assert r.error == pytest.approx(0.25)
    s = fp.SpeedupRow(0, "fat-tree 4x8", 2, "alltoall 32", 1024, measured=2.0, predicted=1.5)
    assert s.error == pytest.approx(-0.25)
    assert fp.kind_of("fat-tree 4x8 shuffled 2:1") == "fat-tree"
    assert fp.kind_of("fat-tree3:2,2,8 shuffled") == "fat-tree3"


def test_a_row_over_a_cycle_is_also_judged_against_its_median_start(fp):
    s = fp.SpeedupRow(2, "dragonfly:2,2,4", 1, "stencil 3d 2x2x2", 4096, measured=1.5, predicted=2.0,
                      moments=(2.5, 2.0, 1.6))
    assert s.typical == pytest.approx(1.8) and s.typical_error == pytest.approx(2.0 / 1.8 - 1)
    assert fp.SpeedupRow(0, "torus:4,4,2", 1, "alltoall 16", 1024, 2.0, 1.5).typical == 2.0  # no cycle


def test_seeds_dealt_as_model_fidelity(fp):
    cases = fp.cases(7, 0, [16, 32], [1, 2])
    assert [(c.seed, c.nodes, c.rpn) for c in cases[:2]] == [(0, 16, 1), (0, 16, 2)]
    assert {c.nodes for c in cases if c.seed == 6} == {32}
    assert len(cases) == 14


def test_reuse_takes_a_model_fidelity_folder(fp, tmp_path):
    from rankwise.sim.random_platform import write_random_platform

    reuse = tmp_path / "theirs"
    gp, _ = write_random_platform(3, 16, fp.where_of(reuse, 3, 16) / "platform")
    (fp.where_of(reuse, 3, 16) / "rpn1.rwm").write_text("a model")
    got, model, probed = fp.platform_and_model(fp.Case(3, 16, 1), tmp_path / "out", reuse, capacities=False)
    assert model == fp.where_of(reuse, 3, 16) / "rpn1.rwm" and not probed
    assert got.platform_xml == gp.platform_xml


def test_results_round_trip(fp, tmp_path):
    import json
    from dataclasses import asdict

    c = fp.CollRow(0, "torus:4,4,2", 1, 32, "bcast", "binomial", 1024, 2.0, 2.5)
    s = fp.SpeedupRow(0, "torus:4,4,2", 1, "alltoall 16", 1024, 2.0, 1.5)
    v = fp.SpeedupRow(3, "fat-tree 4x4", 1, "alltoall 8", 1024, 2.0, 1.5, moments=(1.9, 2.2, 2.1))
    (tmp_path / "r.json").write_text(json.dumps({"collectives": [asdict(c)], "speedups": [asdict(s), asdict(v)]}))
    assert fp.load_results([tmp_path / "r.json", tmp_path / "r.json"]) == ([c, c], [s, v, s, v])
    old = asdict(s)
    del old["moments"]  # results.json written before the cycle's starts
    (tmp_path / "old.json").write_text(json.dumps({"collectives": [], "speedups": [old]}))
    assert fp.load_results([tmp_path / "old.json"]) == ([], [s])


def test_results_of_another_study_are_refused_naming_the_file(fp, tmp_path):
    (tmp_path / "other.json").write_text('[{"seed": 0}]')  # model_fidelity.py's rows, not this study's
    for bad in (tmp_path / "other.json", tmp_path / "missing.json"):
        with pytest.raises(SystemExit, match=f"--results {bad}: not this study's results.json"):
            fp.load_results([bad])
