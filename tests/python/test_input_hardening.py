"""Inputs that crashed, hung or silently misled rankwise (issue "Hardening",
sections 1-3 and 7): each is now one `rankwise: error:` line, or handled as
the docs say, and leaves no output behind."""

from __future__ import annotations

import gzip
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from conftest import assert_one_line_error, run_cli
from rankwise.util.errors import RankwiseError
from rankwise.util.files import prepare_output, remove_stale_temporaries, write_atomic
from rankwise.traffic.matrix import CommMatrix
from rankwise.model.model import MEASURED, Model
from rankwise.util.numbers import OutOfRange, bounded_int

ROOT = Path(__file__).resolve().parents[2]
HUGE = "9" * 4301  # one digit beyond Python's int-conversion limit


@pytest.fixture
def ring(tmp_path) -> Path:
    path = tmp_path / "ring.rwc"
    CommMatrix(4, [0, 1, 2, 3], [1, 2, 3, 0], [1] * 4, [4096] * 4).save(path)
    return path


def write(path: Path, text: str | bytes) -> Path:
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


# ------------------------------------------------- 1. numbers of 4,301 digits
def test_bounded_int_refuses_by_length_before_converting():
    assert bounded_int("000042", 100) == 42 and bounded_int("-7", 10) == -7
    with pytest.raises(OutOfRange):
        bounded_int(HUGE, 2**63)
    with pytest.raises(OutOfRange):
        bounded_int("101", 100)
    for bad in ("1_0", "\u0663", "", "0x1", " 1"):
        with pytest.raises(ValueError):
            bounded_int(bad, 100)


@pytest.mark.parametrize("name, text, line", [
    ("d.txt", f"0 1 {HUGE}\n", 1),                                            # the example
    ("l.txt", f"0 1 5\n{HUGE} 1 5\n", 2),                                     # a rank
    ("m.mat", f"0 1\n{HUGE} 0\n", 2),                                         # dense
    ("c.mtx", f"%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 {HUGE} 5\n", 3),
    ("s.mtx", f"%%MatrixMarket matrix coordinate integer general\n{HUGE} {HUGE} 1\n", 2),
    ("stats.txt", f"~~~~ Process 0 of {HUGE} on node a\n", 1),                 # Intel MPI
    ("x.prof", f"E\t0\t1\t{HUGE} bytes\t1 msgs sent\n", 1),                   # Open MPI monitoring
    ("y.prof", f"E\t0\t{HUGE}\t5 bytes\t1 msgs sent\n", 1),
])
def test_huge_numbers_in_every_importer_name_file_and_line(tmp_path, name, text, line):
    src = write(tmp_path / name, text)
    out = tmp_path / "x.rwc"
    r = run_cli("import", src, "-o", out)
    assert_one_line_error(r, f"{src}:{line}: ")
    assert len(r.stderr) < 400  # the number is cut, not printed whole
    assert not out.exists()


def test_huge_numbers_in_gzipped_input(tmp_path):
    src = write(tmp_path / "d.txt.gz", gzip.compress(f"0 1 {HUGE}\n".encode()))
    assert_one_line_error(run_cli("import", src, "-o", tmp_path / "x.rwc"), f"{src}:1: bytes 99999")


def test_huge_hostfile_slots_and_pattern_values(tmp_path, ring):
    for slots, msg in ((HUGE, "is more than 67108864"), ("2147483648", "slots 2147483648 is more than 67108864")):
        hosts = write(tmp_path / "hosts", f"a slots={slots}\nb slots=2\n")
        assert_one_line_error(run_cli("map", "--matrix", ring, "--hostfile", hosts, "--objective", "hop-bytes",
                                      "-o", tmp_path / "p.txt"), f"{hosts}:1: slots {slots[:10]}")
    hosts = write(tmp_path / "many", "".join(f"h{i} slots={1 << 25}\n" for i in range(3)))
    assert_one_line_error(run_cli("map", "--matrix", ring, "--hostfile", hosts, "--objective", "hop-bytes",
                                  "-o", tmp_path / "p.txt"), "more than 67108864 slots in all")
    for spec in (f"ring:ranks={HUGE},bytes=1K", f"ring:ranks=4,bytes={HUGE}K",
                 f"stencil2d:grid={HUGE}x4,bytes=1K"):
        r = run_cli("pattern", "spec", spec, "-o", tmp_path / "p.rwc")
        assert_one_line_error(r, "pattern 'ring" if spec.startswith("ring") else "pattern 'stencil2d")
        assert len(r.stderr) < 400
    assert not (tmp_path / "p.rwc").exists() and not (tmp_path / "p.txt").exists()


def test_npz_format_version_huge_or_not_ascii(tmp_path):
    for version, msg in ((HUGE, "is newer than this rankwise"), ("\u00b2", "not a rankwise communication matrix")):
        path = tmp_path / "v.npz"
        np.savez(path, format=np.array(f"rankwise-matrix {version}"), n_ranks=2, src=[0], dst=[1], msgs=[1],
                 bytes=[1])
        with pytest.raises(RankwiseError, match=msg):
            CommMatrix.load(path)


# ------------------------------------------------------ 1. model timestamps
@pytest.mark.parametrize("stamp", ["1e300", "9.2e18", "-1e300"])
def test_show_prints_timestamps_a_calendar_cannot_hold(tmp_path, model_file, stamp):
    text = model_file.read_text()
    created = next(line for line in text.splitlines() if line.startswith("created "))
    pair = next(line for line in text.splitlines() if line.startswith("pair 0 1 "))
    bad = write(tmp_path / "m.rwm", text.replace(created, f"created {stamp}")
                .replace(pair, " ".join(pair.split()[:-1] + [stamp])))
    r = run_cli("show", bad)
    assert "Traceback" not in r.stderr
    if r.returncode == 0:  # the C reader may take the numbers: then they are shown as numbers
        assert "not a calendar date" in r.stdout
    else:  # or refuse them, naming the line
        assert_one_line_error(r, f"{bad}:")


def test_report_formats_timestamps_defensively(model_file):
    from rich.console import Console

    from rankwise.report.model import render, summarize

    m = Model.load(model_file)
    m.created = 1e300
    m.measured_at[m.state == MEASURED] = 9.2e18
    console = Console(record=True, width=200)
    render(summarize(m), console)
    assert console.export_text().count("not a calendar date") >= 2


def test_node_name_not_utf8_is_one_line_in_show_and_map(tmp_path, model_file):
    bad = write(tmp_path / "m.rwm", model_file.read_bytes().replace(b"node 0 n0 2", b"node 0 a\xff 2"))
    assert_one_line_error(run_cli("show", bad), f"{bad}")
    r = run_cli("map", "--model", bad, "--pattern", "ring:ranks=4,bytes=1K", "-o", tmp_path / "p.txt")
    assert_one_line_error(r, f"{bad}")
    assert not (tmp_path / "p.txt").exists()


# --------------------------------------------- 1. -o, .npz, show, node lists
def test_output_naming_an_existing_directory(tmp_path, ring):
    folder = tmp_path / "out.rwc"
    folder.mkdir()
    assert_one_line_error(run_cli("import", ring, "-o", folder), f"{folder}: is a directory")
    assert_one_line_error(run_cli("pattern", "ring", "--ranks", "4", "--bytes", "1K", "-o", folder),
                          f"{folder}: is a directory")
    assert folder.is_dir() and not list(folder.iterdir())


def test_npz_with_array_n_ranks_and_empty_npz(tmp_path):
    arr = tmp_path / "a.npz"
    np.savez(arr, format=np.array("rankwise-matrix 1"), n_ranks=np.array([4, 4]), src=[0], dst=[1], msgs=[1],
             bytes=[1])
    assert_one_line_error(run_cli("show", arr), "'n_ranks' must be one integer")
    empty = write(tmp_path / "e.npz", b"")
    for args in (("show", empty), ("import", empty, "-o", tmp_path / "x.rwc")):
        r = run_cli(*args)
        assert_one_line_error(r, f"{empty}: not a numpy .npz file (the file is empty)")
        assert "Aborted" not in r.stderr


def test_show_a_directory_says_so(tmp_path):
    assert_one_line_error(run_cli("show", tmp_path), f"{tmp_path}: is a directory")


@pytest.mark.parametrize("nodes", ["a[0-9999]b[0-9999]", "n[0-99999]", "n[0-99999999]",
                                   "n[0-" + "9" * 5000 + "]", "a[1-8192],b"])
def test_node_lists_beyond_the_limit_are_refused_at_once(tmp_path, ring, nodes):
    start = time.monotonic()
    r = run_cli("map", "--matrix", ring, "--nodelist", nodes, "--objective", "hop-bytes", "-o", tmp_path / "p.txt")
    assert time.monotonic() - start < 20
    assert_one_line_error(r, "node list")
    assert "8192" in r.stderr or "digits" in r.stderr


def test_node_list_at_the_limit_still_expands():
    from rankwise.cluster.hostlist import MAX_NODES
    from rankwise.cluster.hostlist import expand as expand_nodelist

    hosts = expand_nodelist(f"n[1-{MAX_NODES}]")
    assert len(hosts) == MAX_NODES and hosts[-1] == f"n{MAX_NODES}"
    with pytest.raises(RankwiseError, match=f"more than {MAX_NODES} nodes"):
        expand_nodelist(f"n[1-{MAX_NODES}],m0")


# ------------------------------------------------------------------ 3.
def test_kinds_I_and_C_together_are_refused(tmp_path):
    prof = write(tmp_path / "all.prof", "E\t0\t1\t4096 bytes\t4 msgs sent\nI\t1\t0\t96 bytes\t12 msgs sent\n")
    for kinds in ("IC", "EISRC", "c,i"):
        assert_one_line_error(run_cli("import", prof, "--kinds", kinds, "-o", tmp_path / "x.rwc"),
                              "I and C count the same collective bytes twice")
    assert run_cli("import", prof, "--kinds", "EC", "-o", tmp_path / "x.rwc").returncode == 0


def test_output_never_replaces_a_fifo_or_a_device(tmp_path, ring):
    fifo = tmp_path / "out.rwc"
    os.mkfifo(fifo)
    r = run_cli("import", ring, "-o", fifo, timeout=60)
    assert_one_line_error(r, f"{fifo}: is a FIFO")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    before = os.stat("/dev/null")
    r = run_cli("map", "--matrix", ring, "--nodelist", "n[1-4]", "--objective", "hop-bytes", "-o", "/dev/null")
    assert_one_line_error(r, "/dev/null: is a character device")
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev and after.st_ino == before.st_ino
    with pytest.raises(RankwiseError, match="is a FIFO"):
        write_atomic(fifo, "x")
    with pytest.raises(RankwiseError, match="is a FIFO"):
        CommMatrix.load(fifo)  # reading one is refused, never waited on


def test_stale_temporaries_of_our_naming_are_removed(tmp_path, ring):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    out = tmp_path / "x.rwc"
    stale = write(tmp_path / f"x.rwc.tmp.{dead.pid}", "half a matrix")
    live = write(tmp_path / f"x.rwc.tmp.{os.getppid()}", "a writer still at work")
    foreign = write(tmp_path / "x.rwc.tmp.notapid", "not ours")
    other = write(tmp_path / f"y.rwc.tmp.{dead.pid}", "another file's")
    assert run_cli("import", ring, "-o", out).returncode == 0
    assert out.exists() and not stale.exists()
    assert live.exists() and foreign.exists() and other.exists()
    assert remove_stale_temporaries(tmp_path / "y.rwc") == [other]


def test_an_empty_matrix_is_refused_where_a_matrix_is_required(tmp_path, model_file):
    zero = write(tmp_path / "zero.rwc", "rankwise-matrix 1\nranks 4\nnonzeros 1\n0 1 5 0\n")
    r = run_cli("map", "--matrix", zero, "--model", model_file, "-o", tmp_path / "p.txt")
    assert_one_line_error(r, "holds no traffic")
    assert r.returncode == 1 and not (tmp_path / "p.txt").exists()
    assert run_cli("show", zero).returncode == 0  # showing one is fine


def test_output_rules_are_the_same_in_every_verb(tmp_path, ring, model_file):
    # missing parent folders are made, by every verb
    for args, out in ((("import", ring), tmp_path / "a" / "b" / "x.rwc"),
                      (("pattern", "ring", "--ranks", "4", "--bytes", "1K"), tmp_path / "c" / "x.npz"),
                      (("map", "--matrix", ring, "--model", model_file), tmp_path / "d" / "rankfile")):
        r = run_cli(*args, "-o", out)
        assert r.returncode == 0, r.stderr
        assert out.is_file()
    # an extension rankwise does not write is refused with the accepted ones, nothing written
    for args in (("import", ring), ("pattern", "ring", "--ranks", "4", "--bytes", "1K"),
                 ("pattern", "spec", "ring:ranks=4,bytes=1K")):
        for name in ("x.csv", "x.txt", "x"):
            r = run_cli(*args, "-o", tmp_path / name)
            assert_one_line_error(r, ".rwc or .npz")
            assert not (tmp_path / name).exists()


def test_prepare_output_refuses_what_is_not_a_regular_file(tmp_path):
    with pytest.raises(RankwiseError, match="is a directory"):
        prepare_output(tmp_path)
    with pytest.raises(RankwiseError, match=r"must end in \.rwc or \.npz \(rankwise writes no other kind here\), not '\.csv'"):
        prepare_output(tmp_path / "m.csv", (".rwc", ".npz"))
    assert prepare_output(tmp_path / "new" / "m.rwc", (".rwc", ".npz")).parent.is_dir()


def test_readers_refuse_fifos_and_devices_without_blocking(tmp_path, ring):
    fifo = tmp_path / "in.rwm"
    os.mkfifo(fifo)
    for args in (("show", fifo), ("map", "--matrix", ring, "--model", fifo), ("import", "/dev/zero", "-o",
                                                                            tmp_path / "x.rwc")):
        r = run_cli(*args, timeout=60)
        assert r.returncode != 0 and "Traceback" not in r.stderr
        assert len([line for line in r.stderr.splitlines() if line.strip()]) == 1


def test_no_runtime_warning_reaches_the_user(tmp_path):
    """Summaries of a model with nothing measured and of a matrix with no
    traffic: numpy warnings (empty means, all-NaN medians) are errors here."""
    m = Model.empty(["a", "b"], [8])
    m.save(tmp_path / "empty.rwm")
    write(tmp_path / "zero.rwc", "rankwise-matrix 1\nranks 3\nnonzeros 0\n")
    for path in (tmp_path / "empty.rwm", tmp_path / "zero.rwc"):
        r = subprocess.run([sys.executable, "-W", "error", "-m", "rankwise", "show", path],
                           capture_output=True, text=True, timeout=120)
        assert "Warning" not in r.stderr and "Traceback" not in r.stderr, r.stderr
        assert r.returncode == 0


# ------------------------------------------------------------ 7. the corpus
def test_mutation_corpus_small():
    """~200 damaged inputs over every reader and verb: no traceback, hang or
    half-written file (studies/hardening/mutate_inputs.py; the 5,000-input run is in
    docs/results/hardening.md)."""
    r = subprocess.run([sys.executable, str(ROOT / "studies" / "hardening" / "mutate_inputs.py"), "--count", "204", "--seed", "7",
                        "--timeout", "20"], capture_output=True, text=True, timeout=300)
    assert "inputs tried: 204" in r.stdout, r.stdout + r.stderr
    for line in ("tracebacks: 0", "hangs: 0", "half-written files: 0"):
        assert line in r.stdout.splitlines(), r.stdout
    assert r.returncode == 0
