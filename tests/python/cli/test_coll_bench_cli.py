"""`rankwise coll bench` as a user runs it: one-line errors for bad arguments,
and a tiny simulated run whose three columns are what they say (the binomial
column is SMPI's pinned binomial tree: rankwise's own binomial broadcast,
which equals it to the nanosecond, gives the same times)."""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys

import pytest
from conftest import assert_one_line_error, run_cli

needs_smpi = pytest.mark.skipif(not (shutil.which("smpicc") and shutil.which("smpirun")), reason="no SimGrid")


@pytest.mark.parametrize("args,text", [
    ([], "give --sim PLATFORM"),
    (["--sim", "p", "--launcher", "mpirun -np 2"], "not both"),
    (["--launcher", "mpirun -np 2", "--ops", "bcast,alltoall"], "unknown operation 'alltoall'"),
    (["--launcher", "mpirun -np 2", "--ops", ","], "--ops is empty"),
    (["--launcher", "mpirun -np 2", "--iterations", "0"], "--iterations must be >= 1"),
    (["--launcher", "mpirun -np 2", "--sizes", "8,huge"], "'huge' is not a size"),
    (["--launcher", "mpirun -np 2", "--ranks", "16"], "--ranks and --ranks-per-node are for --sim"),
    (["--launcher", "mpirun -np 2", "--model", "nowhere.rwm"], "--model: nowhere.rwm is not a file"),
    (["--launcher", "no-such-launcher -np 2"], "launcher 'no-such-launcher' not found"),
])
def test_bad_arguments_give_one_line(tmp_path, args, text):
    r = run_cli("coll", "bench", "--out", tmp_path / "out", *args, cwd=tmp_path)
    assert_one_line_error(r, text)
    exit_code = 1 if "not found" in text else 2
    assert r.returncode == exit_code


def test_sim_arguments_are_checked(tmp_path, small_platform):
    plat = small_platform.out_dir
    cases = [
        (["--sim", tmp_path], "no SimGrid platform there"),
        (["--sim", plat, "--ranks", "16,x"], "--ranks: 'x' is not a whole number"),
        (["--sim", plat, "--ranks-per-node", "0"], "--ranks-per-node: 0 is below 1"),
        (["--sim", plat, "--overhead", "2"], "--overhead must be in [0, 1)"),
        (["--sim", plat, "--hostfile", plat / "hostfile"], "--hostfile is for --launcher runs"),
        (["--sim", plat, "--sim", plat, "--model", plat / "ground_truth.json"], "give one --sim with it"),
    ]
    for args, text in cases:
        r = run_cli("coll", "bench", "--out", tmp_path / "out", *args, cwd=tmp_path)
        assert_one_line_error(r, text)
        assert r.returncode == 2
    assert not (tmp_path / "out").exists()  # nothing written before the arguments were checked


def _bench(tmp_path, platform, out: str, env_extra: dict[str, str]) -> tuple[subprocess.CompletedProcess, list[dict]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RANKWISE_COLL_")}
    env.update(env_extra, COLUMNS="160")
    r = subprocess.run([sys.executable, "-m", "rankwise", "coll", "bench", "--sim", str(platform), "--ranks", "16",
                        "--ranks-per-node", "2", "--ops", "bcast", "--sizes", "8,1K", "--out", str(tmp_path / out)],
                       capture_output=True, text=True, env=env, timeout=600, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    name = platform.resolve().name
    with open(tmp_path / out / f"coll-{name}.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    return r, rows


@needs_smpi
def test_tiny_sim_run_has_three_columns_and_binomial_is_smpis(tmp_path, small_platform):
    plat = small_platform.out_dir
    # rankwise's binomial broadcast forced in the library: its column must equal the binomial one
    r, rows = _bench(tmp_path, plat, "binomial", {"RANKWISE_COLL_BCAST": "binomial"})
    for head in ("default us", "binomial us", "rankwise us", "vs default", "vs binomial"):
        assert head in r.stdout
    assert "goal: bcast below 64 KiB" in r.stdout
    assert [int(x["size"]) for x in rows] == [8, 1024]
    assert all(x["op"] == "bcast" and x["ranks"] == "16" and x["ranks_per_node"] == "2" for x in rows)
    assert [x["rankwise_us"] for x in rows] == [x["binomial_us"] for x in rows]
    # the comparison can fail: Open MPI's choice and a flat tree take other times here
    assert [x["default_us"] for x in rows] != [x["binomial_us"] for x in rows]
    _, flat = _bench(tmp_path, plat, "flat", {"RANKWISE_COLL_BCAST": "flat"})
    assert [x["binomial_us"] for x in flat] == [x["binomial_us"] for x in rows]
    assert [x["rankwise_us"] for x in flat] != [x["binomial_us"] for x in flat]
    # rules were tuned for the allocation and kept; plots written
    assert (tmp_path / "binomial" / "rules" / f"{plat.resolve().name}-16x2.rwr").is_file()
    assert (tmp_path / "binomial" / f"coll-{plat.resolve().name}-bcast.png").is_file()


@needs_smpi
def test_shape_too_large_for_the_platform_is_skipped_with_a_note(tmp_path, small_platform):
    r = run_cli("coll", "bench", "--sim", small_platform.out_dir, "--ranks", "4,32", "--ranks-per-node", "1",
                "--ops", "gather", "--sizes", "64", "--out", tmp_path / "o", "--brief")
    assert r.returncode == 0, r.stderr
    assert "32 ranks at 1 per node (needs 32 nodes, the platform has 8)" in " ".join(r.stdout.split())
    with open(tmp_path / "o" / f"coll-{small_platform.out_dir.resolve().name}.csv") as f:
        rows = list(csv.DictReader(f))
    assert [(x["ranks"], x["size"]) for x in rows] == [("4", "64")]


def test_no_shape_fits_is_a_usage_error(tmp_path, small_platform):
    r = run_cli("coll", "bench", "--sim", small_platform.out_dir, "--ranks", "64", "--ranks-per-node", "1",
                "--out", tmp_path / "o")
    assert_one_line_error(r, "no job shape fits the platform")
    assert r.returncode == 2


# ------------------------------------------------------------ issue 25, item 8: --rules is checked
BAD_RULES = [
    ("", "not a rankwise rules file"),
    ("rankwise-coll-rules 2\ncomm-size 2\n", "rules"),
    ("rankwise-coll-rules 1\ncomm-size 2\nrule op=bcast root=0 bytes=0:", "bad.rwr:3"),
    ("\x00\x01\x02binary", "bad.rwr"),
    ("rankwise-coll-rules 1\ncomm-size 2\nrule op=bcast root=0 bytes=0:10 alg=tree alg=binomial\n",
     "bad.rwr:3: alg= given twice"),
]


@pytest.mark.parametrize("text,error", BAD_RULES, ids=["empty", "version 2", "truncated", "binary", "alg twice"])
def test_a_rules_file_the_library_refuses_is_refused_before_any_run(tmp_path, text, error):
    rules = tmp_path / "bad.rwr"
    rules.write_bytes(text.encode())
    r = run_cli("coll", "bench", "--launcher", "mpirun -np 2", "--rules", rules, "--out", tmp_path / "out")
    assert_one_line_error(r, error)
    assert "--rules" in r.stderr and not (tmp_path / "out").exists()


def test_what_ran_is_checked_against_what_the_rules_asked():
    from rankwise.coll.comparison import NOT_AS_ASKED, traced, verified

    ran = traced(["rankwise-coll: bcast binomial 8 bytes", "noise", "rankwise-coll: bcast binomial 8 bytes (rules)",
                  "rankwise-coll: reduce knomial 1024 bytes"])
    assert ran == {("bcast", 8): {"binomial"}, ("reduce", 1024): {"knomial"}}
    assert verified("binomial", ran[("bcast", 8)]) == "binomial"  # as asked
    assert verified("MPI", set()) == "MPI"
    assert verified("binomial", set()).startswith(f"MPI: {NOT_AS_ASKED}")  # asked a tree, the MPI's own ran
    assert NOT_AS_ASKED in verified("MPI", {"knomial"})  # asked the passthrough, the library's ran
    assert NOT_AS_ASKED in verified("", {"knomial"})  # no rules, yet the library ran its own


@pytest.mark.skipif(not shutil.which("mpirun"), reason="no mpirun")
def test_rules_of_another_job_size_are_refused_before_the_timed_runs(tmp_path):
    rules = tmp_path / "four.rwr"
    rules.write_text("rankwise-coll-rules 1\ncomm-size 4\nrule op=bcast root=0 bytes=0:1000 alg=binomial\n")
    r = run_cli("coll", "bench", "--launcher", "mpirun -np 2 --oversubscribe", "--rules", rules, "--ops", "bcast",
                "--sizes", "8", "--iterations", "1", "--out", tmp_path / "out", timeout=300)
    assert_one_line_error(r, "four.rwr is for 4 ranks; the job runs 2")
    assert not list((tmp_path / "out").glob("*.csv"))


@pytest.mark.skipif(not shutil.which("mpirun"), reason="no mpirun")
def test_rules_that_run_are_reported_as_run(tmp_path):
    rules = tmp_path / "two.rwr"
    rules.write_text("rankwise-coll-rules 1\ncomm-size 2\nrule op=bcast root=0 bytes=0:100 alg=binomial\n")
    r = run_cli("coll", "bench", "--launcher", "mpirun -np 2 --oversubscribe", "--rules", rules, "--ops", "bcast",
                "--sizes", "8,4096", "--iterations", "2", "--out", tmp_path / "out", timeout=600)
    assert r.returncode in (0, 1), r.stderr  # goals may miss on a loaded machine; the rows must be true
    assert "NOT AS ASKED" not in r.stdout + r.stderr, r.stdout + r.stderr
    rows = {int(row["size"]): row["runs"] for row in csv.DictReader(open(tmp_path / "out" / "coll-real-mpi.csv"))}
    assert rows[8] != "" and not rows[8].startswith("MPI") and rows[4096].startswith("MPI"), rows
