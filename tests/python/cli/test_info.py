"""`rankwise info`: the build's features, the files to preload, and every environment variable
rankwise reads, the same list as docs/guide/environment.md and as the sources read."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from conftest import run_cli

from rankwise import __version__
from rankwise.util.variables import VARIABLES, markdown_table

ROOT = Path(__file__).resolve().parents[3]


def test_info_names_the_build_and_every_variable():
    r = run_cli("info")
    assert r.returncode == 0, r.stderr
    assert f"rankwise {__version__}" in r.stdout
    assert "librankwise_coll.so" in r.stdout and "librankwise_profile.so" in r.stdout
    for v in VARIABLES:
        assert v.name in r.stdout, v.name


def test_info_json_carries_values_and_the_mpi_the_library_runs_with(monkeypatch):
    monkeypatch.setenv("RANKWISE_COLL_TRACE", "yes")
    monkeypatch.delenv("RANKWISE_MODEL", raising=False)
    r = run_cli("info", "--json")
    assert r.returncode == 0, r.stderr
    info = json.loads(r.stdout)
    assert info["version"] == __version__
    values = {v["name"]: v["value"] for v in info["variables"]}
    assert list(values) == [v.name for v in VARIABLES]
    assert values["RANKWISE_COLL_TRACE"] == "yes" and values["RANKWISE_MODEL"] is None
    # asked of the MPI library the collectives library is linked with, not from the build
    assert re.match(r"(Open MPI|MPICH|Intel\(R\) MPI)", info["features"]["MPI"]), info["features"]
    assert info["features"]["hwloc"] and info["features"]["METIS"]
    for path in info["files"].values():
        assert Path(path).exists(), path


def test_docs_table_is_the_list():
    text = (ROOT / "docs" / "guide" / "environment.md").read_text()
    assert markdown_table() in text, "docs/guide/environment.md's table differs from rankwise.util.variables"


def test_every_variable_the_sources_read_is_listed():
    listed = {v.name for v in VARIABLES}
    found: dict[str, str] = {}
    for folder, suffixes in ((ROOT / "engine", {".c", ".h"}), (ROOT / "python" / "rankwise", {".py"})):
        for path in folder.rglob("*"):
            if path.suffix in suffixes:
                # _?: the shell completion variable is _RANKWISE_COMPLETE (click's _{PROG}_COMPLETE)
                for name in re.findall(r"_?RANKWISE_[A-Z0-9_]*[A-Z0-9]", path.read_text(errors="replace")):
                    found.setdefault(name, str(path.relative_to(ROOT)))
    # header guards; RANKWISE_COLL is the prefix of the per-operation names (RANKWISE_COLL_<OP>),
    # RANKWISE_{flavour}_BIN spelled out in paths.py
    ignored = {n for n in found if n.endswith("_H")} | {"RANKWISE_COLL"}
    # RANKWISE_COLL_<OP>: the library reads it by the registry's operation names ("RANKWISE_COLL_%s")
    registry = (ROOT / "engine" / "src" / "coll" / "registry.c").read_text()
    names = re.search(r"OP_NAMES\[RW_N_OPS\] = \{([^}]*)\}", registry)
    assert names, "engine/src/coll/registry.c: OP_NAMES not found"
    for path in (ROOT / "engine" / "mpi" / "coll").rglob("*.c"):
        if '"RANKWISE_COLL_%s"' in path.read_text():
            for op in re.findall(r'"(\w+)"', names.group(1)):
                found.setdefault(f"RANKWISE_COLL_{op.upper()}", str(path.relative_to(ROOT)))
    missing = {n: where for n, where in found.items() if n not in listed and n not in ignored}
    assert not missing, f"read but not in rankwise/util/variables.py: {missing}"
    stale = listed - set(found) - {"RANKWISE_MPI_BIN", "RANKWISE_SMPI_BIN"}
    assert not stale, f"listed but read nowhere: {stale}"
