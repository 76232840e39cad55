"""`rankwise bench`: tables, CSV and PNG of the papers' evidence."""

from __future__ import annotations

import shutil

import pytest
from conftest import assert_one_line_error, run_cli

from rankwise.workflows.experiments import Experiment, Row, save


def test_save_writes_csv_and_png(tmp_path):
    exp = Experiment("x", "a title", "default", "size", "us",
                     rows=[Row("1K", 10.0, 5.0, {"nodes": "32"}), Row("1M", 100.0, 40.0, {"nodes": "32"})])
    csv, png = save(exp, tmp_path)
    assert csv.read_text().splitlines() == ["size,nodes,before_us,after_us,speedup", "1K,32,10,5,2.0000",
                                            "1M,32,100,40,2.5000"]
    assert png.stat().st_size > 1000


def test_unknown_experiment(tmp_path):
    r = run_cli("bench", "--out", tmp_path, "--only", "alltoall,pingpong")
    assert_one_line_error(r, "unknown experiment 'pingpong'")


@pytest.mark.skipif(not shutil.which("mpirun"), reason="no mpirun on this machine")
def test_real_mpi_experiment(tmp_path):
    r = run_cli("bench", "--out", tmp_path, "--only", "real")
    assert r.returncode == 0, r.stderr
    assert "real Open MPI on localhost" in r.stdout
    rows = (tmp_path / "real-mpi.csv").read_text().splitlines()
    assert len(rows) == 3
    if rows[0].endswith(",predicted_speedup"):  # shown when the default was kept: same placement, x1
        assert rows[0] == "size,before_us,after_us,speedup,predicted_speedup"
        assert all(r.endswith(",1.0000") for r in rows[1:])
    else:
        assert rows[0] == "size,before_us,after_us,speedup"
    assert (tmp_path / "real-mpi.png").exists()


def test_rows_carry_the_predicted_speedup_beside_the_measured_one(tmp_path):
    from rich.console import Console

    from rankwise.workflows.experiments import show

    exp = Experiment("y", "predicted", "default", "size", "us",
                     rows=[Row("1K", 10.0, 5.0, predicted=2.2), Row("1M", 100.0, 40.0, predicted=3.5)])
    csv, _ = save(exp, tmp_path)
    assert csv.read_text().splitlines() == ["size,before_us,after_us,speedup,predicted_speedup",
                                            "1K,10,5,2.0000,2.2000", "1M,100,40,2.5000,3.5000"]
    console = Console(record=True, width=120)
    show(exp, console)
    text = console.export_text()
    assert "x2.20" in text and "1/2 rows (worst +40.0%, 1M)" in text
