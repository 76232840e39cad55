"""Issue 25's command-line items: every output by the -o rules (plots included, links followed,
checked before any work), watch series that stay consistent after any stop and on one node
set, bounded sizes (synthetic nodes, --ranks, platforms), finite numbers everywhere, and
messages that name the real cause. Each is one `rankwise: error:` line, never a traceback."""

from __future__ import annotations

import gzip
import io
import os
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
from conftest import assert_one_line_error, run_cli

from rankwise.traffic.matrix import CommMatrix
from rankwise.model.model import Model
from rankwise.sim.platform import PlatformSpec, generate
from rankwise.measure.watch import read_index

PROBE = ("--sizes", "8,64K", "--repetitions", "2", "--rounds", "2")


@pytest.fixture(scope="module")
def ring(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("ring") / "ring.rwc"
    CommMatrix(4, [0, 1, 2, 3], [1, 2, 3, 0], [1] * 4, [4096] * 4).save(path)
    return path


# ------------------------------------------------------------ 6. every output, plots included
def _plot_verbs(model_file, ring, plot):
    return [("show", ring, "--plot", plot), ("show", model_file, "--plot", plot),
            ("diff", model_file, model_file, "--plot", plot),
            ("coll", "predict", "--model", model_file, "--op", "bcast", "--ranks", "8", "--sizes", "8",
             "--plot", plot),
            ("validate", "--sim", "nowhere.xml", "--op", "bcast", "--ranks", "4", "--plot", plot)]


def test_no_plot_replaces_a_device_a_fifo_or_a_directory(tmp_path, model_file, ring):
    before = os.stat("/dev/null")
    fifo = tmp_path / "plot.png"
    os.mkfifo(fifo)
    for target, what in (("/dev/null", "is a character device"), (fifo, "is a FIFO"), (tmp_path, "is a directory")):
        for args in _plot_verbs(model_file, ring, target):
            r = run_cli(*args, timeout=120)
            assert_one_line_error(r, f"{target}: {what}")
            assert r.returncode == 2 and r.stdout == "", (args, r.stdout)  # refused before any work
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and (after.st_ino, after.st_rdev) == (before.st_ino, before.st_rdev)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_an_output_link_is_followed_and_kept(tmp_path, model_file, ring):
    target = tmp_path / "real.png"
    target.write_bytes(b"old")
    link = tmp_path / "link.png"
    link.symlink_to(target.name)
    assert run_cli("show", ring, "--plot", link).returncode == 0
    assert link.is_symlink() and target.read_bytes()[:4] == b"\x89PNG"
    placement = tmp_path / "placement.txt"
    placement.write_text("old\n")
    plink = tmp_path / "p-link"
    plink.symlink_to(placement)
    r = run_cli("map", "--matrix", ring, "--model", model_file, "-o", plink)
    assert r.returncode == 0, r.stderr
    assert plink.is_symlink() and placement.read_text() != "old\n"
    assert not list(tmp_path.glob("*.tmp.*"))
    # a link to a device is refused as the device
    dev = tmp_path / "dev.png"
    dev.symlink_to("/dev/null")
    assert_one_line_error(run_cli("show", ring, "--plot", dev), "is a character device")
    assert dev.is_symlink()


# --------------------------------------------------------------- 14. outputs checked before work
@pytest.mark.skipif(os.access("/sys", os.W_OK) and os.geteuid() != 0, reason="needs an unwritable folder")
def test_an_unwritable_output_costs_no_work(tmp_path, model_file, small_platform):
    unwritable = Path("/sys/rankwise-test.rwm")  # sysfs: no new files, not even for root
    r = run_cli("probe", "--sim", small_platform.platform_xml, *PROBE, "-o", unwritable)
    assert_one_line_error(r, "cannot write")
    assert "probing" not in r.stdout
    r = run_cli("predict", "--model", model_file, "--op", "bcast", "--ranks", "8", "-o", tmp_path)
    assert_one_line_error(r, "is a directory")
    assert r.stdout == ""  # no table printed before the refusal
    (tmp_path / "garbage.rwm").write_text("garbage\n")
    r = run_cli("node", "probe", "--synthetic", "pack:1 core:2 pu:1", "--model", tmp_path / "garbage.rwm",
                "-o", tmp_path / "out.rwm", timeout=120)
    assert_one_line_error(r, "garbage.rwm:1: not a rankwise model")
    assert r.stdout == "" and not (tmp_path / "out.rwm").exists()


# ------------------------------------------------------------------------- 7. watch after a stop
def test_a_continued_series_removes_what_its_index_does_not_list(tmp_path):
    gen = generate(PlatformSpec(racks=2, nodes_per_rack=2, cores=1), tmp_path / "p")
    out = tmp_path / "series"
    assert run_cli("watch", "--sim", gen.platform_xml, "-o", out, "--every", "0", "--count", "1",
                   *PROBE).returncode == 0
    first = read_index(out)[0].model
    # what a SIGKILL between the model and the index leaves: a model of seq 2, its heatmap, temporaries
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    orphan = out / "model-0002-20260101T000000Z.rwm"
    orphan.write_bytes((out / first).read_bytes())
    leftovers = [orphan, out / "change-0002.png", out / f".change-0002.png.{dead.pid}.3.tmp",
                 out / f"model-0002-20260101T000000Z.rwm.tmp.{dead.pid}", out / f"index.tsv.tmp.{dead.pid}"]
    for path in leftovers[1:]:
        path.write_bytes(b"x")
    mine = out / f"notes.tmp.{dead.pid}"  # not the series' naming: left alone
    mine.write_text("mine")
    r = run_cli("watch", "--sim", gen.platform_xml, "-o", out, "--every", "0", "--count", "1")
    assert r.returncode == 0, r.stderr
    assert "removed 5 file(s) the series' index does not list" in r.stdout
    entries = read_index(out)
    assert [e.seq for e in entries] == [1, 2]
    models = sorted(p.name for p in out.glob("model-*.rwm"))
    assert models == sorted(e.model for e in entries)  # exactly the listed ones: no second model 2
    assert mine.exists() and not any(p.exists() for p in leftovers[2:])


def test_a_failed_index_write_takes_the_model_back(tmp_path, monkeypatch):
    from rankwise.measure import watch as w
    from rankwise.util.errors import RankwiseError

    gen = generate(PlatformSpec(racks=1, nodes_per_rack=2, cores=1), tmp_path / "p")
    out = tmp_path / "series"

    def probe(pairs, update, output, start):
        m = Model.empty(["node-0", "node-1"], [8])
        m.save(output)
        return m

    def full_disk(folder, entries):
        raise RankwiseError(f"{folder / w.INDEX}: cannot write: No space left on device")

    series = w.Watch(out, probe, plot=False)
    monkeypatch.setattr(w, "write_index", full_disk)
    with pytest.raises(RankwiseError, match="No space left"):
        series.step()
    assert list(out.iterdir()) == []  # neither the model nor an index: the series is as it was
    assert gen.platform_xml.exists()


def test_a_damaged_index_is_refused_at_its_line(tmp_path):
    out = tmp_path / "series"
    out.mkdir()
    (out / "model-0001-20260101T000000Z.rwm").write_text("x")
    head = "rankwise-watch 1\n"
    for fields, text in ((("1", "t", "model-0001-20260101T000000Z.rwm", "many", "-", "-", "-", "0", "1"), "pairs"),
                         (("1", "t", "model-0001-20260101T000000Z.rwm", "9" * 40, "-", "-", "-", "0", "1"), "pairs"),
                         (("1", "t", "model-0001-20260101T000000Z.rwm", "12", "-", "-", "-", "nan", "1"), "sim_start"),
                         (("1", "t", "model-0001-20260101T000000Z.rwm", "12", "-", "-", "-", "0", "inf"), "sim_end")):
        (out / "index.tsv").write_text(head + "\t".join(fields) + "\n")
        r = run_cli("diff", out / "1", out)
        assert_one_line_error(r, f"index.tsv:2: bad entry: {text}")


# ----------------------------------------------------------------------- 9. watch on other nodes
def test_a_series_is_continued_only_on_its_nodes(tmp_path):
    gen = generate(PlatformSpec(racks=2, nodes_per_rack=3, cores=1), tmp_path / "p6")
    small = generate(PlatformSpec(racks=2, nodes_per_rack=2, cores=1), tmp_path / "p4")
    out = tmp_path / "series"
    assert run_cli("watch", "--sim", gen.platform_xml, "-o", out, "--every", "0", "--count", "1",
                   *PROBE).returncode == 0
    for args in (("--sim", gen.platform_xml, "--nodes", "4"), ("--sim", small.platform_xml)):
        r = run_cli("watch", *args, "-o", out, "--every", "0", "--count", "1")
        assert_one_line_error(r, "its series was measured on 6 nodes")
        assert "would run on 4 nodes" in r.stderr and r.returncode == 2
    assert len(read_index(out)) == 1 and len(list(out.glob("model-*"))) == 1


# ------------------------------------------------------------------ 10, 11: sizes bounded at once
@pytest.mark.parametrize("args,text", [
    (("node", "show", "--synthetic", "pack:64 numa:64 core:64 pu:1"), "makes more than 4096 PUs"),
    (("node", "export", "--synthetic", "pack:64 numa:64 core:64 pu:1", "-o", "n.xml"), "makes more than 4096 PUs"),
    (("sim", "platform", "--node-synthetic", "pack:64 numa:64 core:64 pu:1", "--racks", "1", "--nodes-per-rack",
      "2", "-o", "d"), "makes more than 4096 PUs"),
    (("sim", "platform", "--racks", "1000", "--nodes-per-rack", "100", "-o", "d"), "at most 1024"),
    (("sim", "platform", "--cores", "99999999999", "-o", "d"), "cores must be at most 65536"),
    (("sim", "platform", "--seed", "-1", "-o", "d"), "seed must be in 0..4294967295"),
])
def test_sizes_beyond_the_caps_are_refused_at_once(args, text, tmp_path):
    r = run_cli(*args, cwd=tmp_path, timeout=60)
    assert_one_line_error(r, text)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("verb", [("coll", "predict", "--op", "bcast"), ("coll", "tune", "-o", "r.rules"),
                                  ("predict", "--op", "alltoall")])
@pytest.mark.parametrize("ranks,text", [("100000", "at most 4096 ranks"), ("2147483648", "at most 4096 ranks"),
                                        ("0", "--ranks must be >= 1")])
def test_coll_ranks_are_bounded(verb, ranks, text, model_file, tmp_path):
    r = run_cli(*verb, "--model", model_file, "--sizes", "8", "--ranks", ranks, cwd=tmp_path, timeout=60)
    assert_one_line_error(r, text)
    assert r.returncode == 2 and list(tmp_path.iterdir()) == []


def test_coll_ranks_beyond_what_the_nodes_hold(model_file, tmp_path):
    from rankwise.predict.allocation import MAX_RANKS_PER_NODE

    small = tmp_path / "two.rwm"
    m = Model.load(model_file)
    m2 = Model.empty(m.names[:2], m.sizes)
    m2.save(small)
    r = run_cli("coll", "predict", "--op", "bcast", "--model", small, "--nodes", "n0,n1", "--sizes", "8",
                "--ranks", str(2 * MAX_RANKS_PER_NODE + 1), timeout=60)
    assert_one_line_error(r, f"2 node(s) hold at most {2 * MAX_RANKS_PER_NODE} ranks")


# --------------------------------------------------------------------------- 12. no tracebacks
def _stats(amount: str) -> str:
    return (f"~~~~ Process 0 of 1 on node n01 lifetime = 1.0 usec\n\nData Transfers\nSrc Dst Amount(MB) Transfers\n"
            f"-----\n000 --> 000 {amount} 1\n=====\nTotals {amount} 1\n")


def test_inputs_that_raised_tracebacks(tmp_path, small_platform):
    (tmp_path / "stats.txt").write_text(_stats("1e308"))
    assert_one_line_error(run_cli("import", tmp_path / "stats.txt", "--format", "intel", "-o", tmp_path / "x.rwc"),
                          "stats.txt:6: amount 1e308 MB does not fit in 64 bits")
    with zipfile.ZipFile(tmp_path / "odd.npz", "w") as z:
        buf = io.BytesIO()
        np.save(buf, np.array("rankwise-matrix 2"))
        z.writestr("format.npy", buf.getvalue())
        z.writestr("src.txt", "not an array")
    for verb in (("import", tmp_path / "odd.npz", "-o", tmp_path / "y.rwc"), ("show", tmp_path / "odd.npz")):
        assert_one_line_error(run_cli(*verb), "member 'src.txt' is not a numpy array (.npy)")
    bomb = tmp_path / "bomb.txt.gz"
    with gzip.open(bomb, "wb", compresslevel=9) as f:
        line = b"0 1 100\n" * (1 << 16)
        for _ in range(300):  # 150 MiB of text from ~150 KB
            f.write(line)
    assert bomb.stat().st_size < 1 << 20
    r = run_cli("import", bomb, "-o", tmp_path / "z.rwc", timeout=120)
    assert_one_line_error(r, "bomb.txt.gz: expands to more than 128 MiB uncompressed")
    assert not (tmp_path / "z.rwc").exists()
    r = run_cli("validate", "--sim", small_platform.platform_xml, "--op", "bcast", "--ranks", "1")
    assert_one_line_error(r, "--ranks must be >= 2")


def test_several_gzip_members_are_one_input(tmp_path):
    path = tmp_path / "two.txt.gz"
    path.write_bytes(gzip.compress(b"0 1 100\n1 0 5\n") + gzip.compress(b"1 2 7\n"))
    r = run_cli("import", path, "--format", "list", "-o", tmp_path / "x.rwc")
    assert r.returncode == 0, r.stderr
    assert CommMatrix.load(tmp_path / "x.rwc").bytes.sum() == 112


# ------------------------------------------------------------------ 13. finite numbers everywhere
@pytest.mark.parametrize("args,text", [
    (("predict", "--model", "{m}", "--op", "alltoall", "--ranks", "8", "--switch",
      "radix=16,hops=3,packet=32,cycle=nan,load=0.5"), "cycle=nan is not a finite number"),
    (("predict", "--model", "{m}", "--op", "alltoall", "--ranks", "8", "--switch",
      "radix=16,hops=3,packet=inf,cycle=1e-9,load=0.5"), "packet=inf is not a finite number"),
    (("coll", "predict", "--model", "{m}", "--op", "reduce", "--ranks", "8", "--gamma", "inf"),
     "'--gamma': inf is not a finite number"),
    (("map", "--pattern", "ring:ranks=4,bytes=1K", "--model", "{m}", "--time-limit", "nan"),
     "'--time-limit': nan is not a finite number"),
    (("sim", "platform", "-o", "d", "--degrade", "node:0:inf"), "bandwidth factor 'inf' is not a finite number"),
    (("sim", "platform", "-o", "d", "--degrade", "node:0:1e-308"), "factors must be positive numbers in 1e-06..1e+06"),
    (("sim", "platform", "-o", "d", "--degrade", "node:0:1:1e308"), "factors must be positive numbers in 1e-06..1e+06"),
    (("sim", "platform", "-o", "d", "--oversubscription", "inf"), "'--oversubscription': inf is not a finite"),
    (("sim", "platform", "-o", "d", "--oversubscription", "1e-308"), "oversubscription must be a positive number in 1e-06..1e+06"),
    (("sim", "platform", "-o", "d", "--send-overhead", "inf"), "'--send-overhead': inf is not a finite"),
    (("sim", "platform", "-o", "d", "--send-overhead", "5"), "send_overhead must be below 1 s"),
    (("diff", "{m}", "{m}", "--threshold", "nan"), "'--threshold': nan is not a finite number"),
])
def test_absurd_numbers_are_refused(args, text, model_file, tmp_path):
    r = run_cli(*[str(model_file) if a == "{m}" else a for a in args], cwd=tmp_path, timeout=60)
    assert_one_line_error(r, text)
    assert r.returncode == 2 and list(tmp_path.iterdir()) == []


def test_every_float_option_is_checked():
    """The check is given to every float option of every verb by cli.command(), not verb by verb."""
    import typing

    from rankwise.cli import _finite, command

    def walk(cmd):
        for p in cmd.params:
            a = p.type_descriptor.annotation
            if float in (a, *typing.get_args(a)):
                yield p
        for sub in getattr(cmd, "commands", {}).values():
            yield from walk(sub)

    floats = list(walk(command()))
    assert len(floats) > 20 and all(p.callback is _finite for p in floats)


# --------------------------------------------------------------------- 15. messages that mislead
def test_messages_name_the_real_cause(tmp_path):
    r = run_cli("sim", "platform", "--default", "--racks", "2", "-o", tmp_path / "d")
    assert_one_line_error(r, "--default has faults on node 41, rack 3, which --racks 2 leaves out")
    (tmp_path / "neg.txt").write_text("0 -1 100\n")
    assert_one_line_error(run_cli("import", tmp_path / "neg.txt", "-o", tmp_path / "x.rwc"),
                          "neg.txt:1: destination rank -1 is below 0")
    rules = tmp_path / "r.rules"
    rules.write_text("rankwise-coll-rules 1\ncomm-size 4\nrule op=bcast root=0 bytes=0:100 alg=tree alg=binomial\n")
    from rankwise.coll.selection import Rules
    from rankwise.util.errors import RankwiseError

    with pytest.raises(RankwiseError, match=r"r\.rules:3: alg= given twice"):
        Rules(rules)


def test_found_by_the_corpus(tmp_path, model_file):
    """Two cases studies/hardening/mutate_inputs.py found once it covered the new verbs."""
    r = run_cli("node", "show", "--synthetic", "pack:2 \udce9")  # not UTF-8 on the command line
    assert_one_line_error(r, "holds characters hwloc's syntax has not")
    # a measured pair without its rtt lines (jitter unknown at every size): no numpy warning in the summary
    lines = [line for line in model_file.read_text().splitlines() if not line.startswith("rtt 0 1 ")]
    (tmp_path / "j.rwm").write_text("\n".join(lines) + "\n")
    r = subprocess.run([sys.executable, "-W", "error", "-m", "rankwise", "show", tmp_path / "j.rwm"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "Warning" not in r.stderr, r.stderr


def test_a_long_prediction_ends_on_sigterm(model_file, tmp_path):
    """coll predict at 4,096 ranks runs minutes inside the engine: SIGTERM still ends it at once."""
    import signal
    import time

    proc = subprocess.Popen([sys.executable, "-m", "rankwise", "coll", "predict", "--model", str(model_file),
                             "--op", "bcast", "--ranks", "4096", "--sizes", "8"], cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    time.sleep(4)  # into the engine's search
    start = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    finally:
        proc.kill()
    assert time.monotonic() - start < 20
    assert proc.returncode in (-signal.SIGTERM, 128 + signal.SIGTERM)
    assert b"Traceback" not in proc.stderr.read()


def test_the_probe_itself_refuses_another_node_set(tmp_path):
    """What `watch --launcher` relies on (its nodes are known only once the job runs): the probe,
    given --update MODEL --same-nodes, refuses a job on other nodes before writing anything."""
    import dataclasses

    from rankwise.util.errors import RankwiseError
    from rankwise.measure.probe import ProbeOptions, probe_sim

    gen = generate(PlatformSpec(racks=2, nodes_per_rack=3, cores=1), tmp_path / "p6")
    opts = ProbeOptions(sizes="8,64K", repetitions=2, rounds=2)
    probe_sim(gen.platform_xml, tmp_path / "six.rwm", opts, show_progress=False)
    same = dataclasses.replace(opts, update=tmp_path / "six.rwm", same_nodes=True)
    with pytest.raises(RankwiseError, match="the job runs on 4 of the 6 nodes"):
        probe_sim(gen.platform_xml, tmp_path / "four.rwm", same, nodes=4, show_progress=False)
    assert not (tmp_path / "four.rwm").exists()
    assert probe_sim(gen.platform_xml, tmp_path / "again.rwm", same, show_progress=False).n_nodes == 6
    assert "--same-nodes" not in ProbeOptions(same_nodes=True).args()  # only with --update


def test_a_one_rank_prediction_plots_without_a_warning(model_file, tmp_path):
    """Every predicted time is 0 on one rank: no log scale, no matplotlib warning (the corpus found it)."""
    r = subprocess.run([sys.executable, "-W", "error", "-m", "rankwise", "coll", "predict", "--model", model_file,
                        "--op", "bcast", "--sizes", "8", "--ranks", "1", "--plot", tmp_path / "one.png"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "Warning" not in r.stderr, r.stderr
    assert (tmp_path / "one.png").read_bytes()[:4] == b"\x89PNG"
