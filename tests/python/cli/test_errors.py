"""Errors that tell the truth: exit code 2 for a wrong command line and 1 for a
failure, every error one line, `--version`, and what the user typed (file and
node names) printed as typed, never read as rich markup or emoji codes."""

from __future__ import annotations

import shutil

import pytest
from conftest import assert_one_line_error, run_cli

from rankwise import __version__
from rankwise._engine.core import version as engine_version

PATTERNS = ("alltoall", "stencil3d", "stencil2d", "ring", "groups", "fft", "tree", "collective", "spec", "show")

# Every verb and sub-verb that takes arguments, given none: its help (or its one missing option)
# and a usage error's exit code. `demo` and `bench` are left out: every option they have has a
# default, so without arguments they run.
NO_ARGS = [(), ("probe",), ("show",), ("import",), ("map",), ("optimize",), ("profile",), ("sim",),
           ("sim", "platform"), ("pattern",), *[("pattern", p) for p in PATTERNS], ("emulate",),
           *[("emulate", v) for v in ("up", "set", "status", "down")]]


@pytest.mark.parametrize("verb", NO_ARGS, ids=lambda v: " ".join(v) or "rankwise")
def test_a_verb_without_its_arguments_is_a_usage_error(verb):
    r = run_cli(*verb)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr
    assert "Usage:" in r.stdout or len([line for line in r.stderr.splitlines() if line.strip()]) == 1


# A bad option value in every verb and sub-verb: exit 2, one line naming the option or the value.
# None of these starts a run (the platform files need not exist: options are checked first).
BAD_VALUES = [
    (("probe", "--sim", "p.xml", "-o", "m.rwm", "--sizes", "8,x"), "--sizes"),
    (("probe", "--sim", "p.xml", "-o", "m.rwm", "--mode", "fast"), "--mode: 'fast'"),
    (("probe", "--sim", "p.xml", "-o", "m.rwm", "--group-by", "node"), "--group-by: 'node'"),
    (("probe", "--sim", "p.xml", "-o", "m.rwm", "--rounds", "abc"), "'--rounds'"),
    (("probe", "--sim", "p.xml", "-o", "m.rwm", "--rounds", "0"), "--rounds must be >= 1"),
    (("probe", "--sim", "p.xml", "-o", "m.rwm", "--timeout", "-1"), "--timeout must be > 0"),
    (("probe", "-o", "m.rwm"), "give exactly one of --sim"),
    (("show", "m.rwm", "--top", "many"), "'--top'"),
    (("import", "x.txt", "-o", "x.rwc", "--format", "nope"), "unknown format 'nope'"),
    (("import", "x.txt", "-o", "x.rwc", "--ranks", "zero"), "--ranks"),
    (("map", "--pattern", "ring:ranks=4,bytes=1K", "--objective", "nope"), "unknown objective 'nope'"),
    (("map", "--pattern", "ring:ranks=4,bytes=1K", "--algorithm", "nope"), "unknown algorithm 'nope'"),
    (("map", "--pattern", "ring:ranks=4,bytes=1K", "--nodelist", "n[1-x]"), "node list 'n[1-x]'"),
    (("map", "--pattern", "ring:ranks=4,bytes=1K", "--min-gain", "2"), "--min-gain"),
    (("optimize", "--sim", "p.xml", "--pattern", "ring:ranks=4,bytes=1K", "--format", "nope"), "--format"),
    (("optimize", "--sim", "p.xml", "--pattern", "ring:ranks=4,bytes=1K", "--repeats", "0"), "--repeats"),
    (("optimize", "--launcher", "mpirun", "--group-by", "node", "alltoall"), "--group-by: 'node'"),
    (("optimize", "--pattern", "ring:ranks=4,bytes=1K"), "give exactly one of --sim"),
    (("profile", "--sim", "p.xml", "-o", "p.txt", "true"), "must end in .rwc or .npz"),
    (("profile", "--launcher", "mpirun", "--ranks", "3", "true"), "are for --sim"),
    (("demo", "--nodes", "many"), "'--nodes'"),
    (("bench", "--only", "nope"), "--only: unknown experiment 'nope'"),
    (("bench", "--repeats", "0"), "--repeats must be >= 1"),
    (("sim", "platform", "-o", "d", "--racks", "abc"), "'--racks'"),
    (("sim", "platform", "-o", "d", "--racks", "0"), "racks must be at least 1"),
    (("sim", "platform", "-o", "d", "--degrade", "bogus"), "--degrade 'bogus'"),
    (("pattern", "alltoall", "-o", "x.rwc", "--ranks", "4", "--bytes", "1Q"), "--bytes"),
    (("pattern", "stencil3d", "-o", "x.rwc", "--grid", "2x2"), "--grid"),
    (("pattern", "stencil2d", "-o", "x.rwc", "--grid", "2xq"), "--grid"),
    (("pattern", "ring", "-o", "x.rwc", "--ranks", "abc"), "--ranks"),
    (("pattern", "groups", "-o", "x.rwc", "--groups", "x"), "--groups"),
    (("pattern", "fft", "-o", "x.rwc", "--grid", "8x8x8", "--decomp", "cube"), "--decomp"),
    (("pattern", "tree", "-o", "x.rwc", "--ranks", "4", "--bytes", "1K", "--op", "scan"), "--op"),
    (("pattern", "collective", "-o", "x.rwc", "--ranks", "4", "--bytes", "1K", "--op", "scan"), "--op"),
    (("pattern", "spec", "nope:x=1", "-o", "x.rwc"), "unknown pattern 'nope'"),
    (("pattern", "show", "a.rwc", "b.rwc"), "unexpected extra argument"),
    (("emulate", "up", "-o", "d", "--nic-rate", "fast"), "--nic-rate 'fast'"),
    (("emulate", "up", "-o", "d", "--degrade", "uplink:0:0.5:2"), "cannot add latency"),
    (("emulate", "set", "d", "node:x", "1G"), "link 'node:x'"),
    (("emulate", "set", "d", "node:0", "1Q"), "RATE '1Q'"),
    (("frobnicate",), "No such command 'frobnicate'"),
]


@pytest.mark.parametrize("args,text", BAD_VALUES, ids=lambda v: " ".join(v) if isinstance(v, tuple) else None)
def test_a_bad_option_value_is_a_one_line_usage_error(args, text, tmp_path):
    r = run_cli(*args, cwd=tmp_path)
    assert_one_line_error(r, text)
    assert r.returncode == 2, r.stderr
    assert list(tmp_path.iterdir()) == []  # nothing was run, nothing written


def test_a_failure_exits_1(tmp_path):
    r = run_cli("show", tmp_path / "absent.rwm")
    assert_one_line_error(r, "absent.rwm")
    assert r.returncode == 1


def test_version_names_the_package_and_the_engine():
    r = run_cli("--version")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"rankwise {__version__} (engine {engine_version()})"


# ---------------------------------------------------------------- names as typed

ODD_NAMES = ("[red]x.rwc", "a:x:b.rwc", "[bold]y:smile:.rwc")


@pytest.mark.parametrize("name", ODD_NAMES)
def test_file_names_are_printed_as_typed(name, tmp_path):
    r = run_cli("pattern", "ring", "--ranks", "4", "--bytes", "1K", "-o", name, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert name in r.stdout
    for verb in (("show", name), ("pattern", "show", name)):
        r = run_cli(*verb, cwd=tmp_path)
        assert r.returncode == 0 and name in r.stdout, (verb, r.stdout)
    r = run_cli("import", name, "-o", "copy-" + name, cwd=tmp_path)
    assert r.returncode == 0 and f"copy-{name}" in r.stdout and f"from {name}" in r.stdout, r.stdout
    r = run_cli("map", "--matrix", name, "--nodelist", "n[1-4]", "--objective", "hop-bytes", "-o", "p-" + name,
                cwd=tmp_path)
    assert r.returncode == 0 and f"wrote p-{name}" in r.stdout, r.stdout
    # and in errors
    assert_one_line_error(run_cli("show", "missing" + name, cwd=tmp_path), f"missing{name}: cannot open")
    assert_one_line_error(run_cli("probe", "--sim", "p" + name, "-o", "m.rwm", "--nodes", "2", cwd=tmp_path),
                          f"p{name}")


def test_node_names_are_printed_as_typed(tmp_path):
    assert_one_line_error(run_cli("map", "--pattern", "ring:ranks=4,bytes=1K", "--nodelist", "node[bold]"),
                          "node list 'node[bold]'")
    names = ["[bold]n0", "[i]n1", "[red]n2"]
    model = tmp_path / "odd.rwm"
    lines = ["rankwise-model 1", "settings mode=concurrent repetitions=2 rounds=1 warmup=1 timeout=10 time_budget=0",
             "sizes 8 1024", "nodes 3", *[f"node {k} {n} 1" for k, n in enumerate(names)]]
    for i in range(3):
        for j in range(3):
            if i != j and (i, j) != (2, 0):
                slow = 10 if 2 in (i, j) else 1
                lines.append(f"pair {i} {j} measured {2e-6 * slow:g} {8e-11 * slow:g} 1700000000.000")
    lines.append("pair 2 0 missing nan nan nan")
    model.write_text("\n".join(lines) + "\n")
    r = run_cli("show", model)
    assert r.returncode == 0, r.stderr
    for name in names:
        assert name in r.stdout, (name, r.stdout)
    # the missing pair: named as typed, with the option that would cost it (and only while not given)
    out = tmp_path / "placement.txt"
    map_args = ("map", "--model", model, "--pattern", "ring:ranks=3,bytes=1K", "--select", "all", "-o", out)
    r = run_cli(*map_args)
    assert_one_line_error(r, "no measurement for [red]n2 -> [bold]n0")
    assert "give --allow-missing" in r.stderr and not out.exists()
    r = run_cli(*map_args, "--allow-missing")
    assert r.returncode == 0, r.stderr
    assert "lacks 1 pair(s)" in r.stdout and "allow-missing" not in r.stderr
    assert "[bold]n0" in r.stdout and "[i]n1" in r.stdout and "[red]n2" in r.stdout


# ---------------------------------------------------------------- hints

@pytest.mark.skipif(not shutil.which("mpirun"), reason="no mpirun")
def test_the_probe_never_suggests_what_was_given(tmp_path):
    out = tmp_path / "m.rwm"
    r = run_cli("probe", "--launcher", "mpirun -np 1", "-o", out)
    assert_one_line_error(r, "only one node")
    assert "--group-by rank" in r.stderr
    r = run_cli("probe", "--launcher", "mpirun -np 1", "--group-by", "rank", "-o", out)
    assert_one_line_error(r, "run at least 2 ranks")
    assert "--group-by" not in r.stderr and not out.exists()


def test_map_names_rack_size_only_when_not_given():
    hop = ("map", "--pattern", "ring:ranks=4,bytes=1K", "--nodelist", "n[1-4]")
    r = run_cli(*hop)
    assert_one_line_error(r, "only --objective hop-bytes applies (with --rack-size N")
    r = run_cli(*hop, "--rack-size", "2")
    assert_one_line_error(r, "only --objective hop-bytes applies")
    assert "--rack-size" not in r.stderr
