"""The collectives library's layers (engine/mpi/coll), read from the sources:
entries (entry/) call the decision (decision/), the decision calls the
algorithms (base/), never back; comm/ (the per-communicator cache and what
every layer shares) is below them all. The C API (entry/api.c) and the MPI
entry points (entry/entry.c) do not call each other: both call the decided
path (entry/decided.c). Operation names are written once, in the registry
(engine/src/coll/registry.c), as the algorithms' names are."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ENGINE = Path(__file__).resolve().parents[2] / "engine"
COLL = ENGINE / "mpi" / "coll"
OPS = ("bcast", "reduce", "gather", "scatter", "allreduce", "allgather", "alltoall")
ALGS = ("auto", "passthrough", "binomial", "knomial", "flat", "chain", "hier", "ring", "recursive_doubling",
        "trinary", "pairwise", "symmetric", "multiring")


def code(path: Path) -> str:
    """The source without its comments and the contents of its string literals."""
    text = re.sub(r'"(?:[^"\\\n]|\\.)*"', '""', path.read_text())
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def declared(header: Path) -> set[str]:
    """The functions a header declares."""
    return set(re.findall(r"\b(rwc?_[a-z0-9_]+)\s*\(", code(header)))


def defined(source: Path) -> set[str]:
    """The functions a source file defines with external linkage."""
    names = set()
    for m in re.finditer(r"^(?!static)[A-Za-z_][\w \*]*?\b((?:rwc?_|P?MPI_)[A-Za-z0-9_]+)\s*\([^;{]*\)\s*\{",
                         code(source), flags=re.M | re.S):
        names.add(m.group(1))
    return names


def includes(path: Path) -> list[str]:
    return re.findall(r'^\s*#\s*include\s+"([^"]+)"', path.read_text(), flags=re.M)


def calls(path: Path, names: set[str]) -> set[str]:
    text = code(path)
    return {n for n in names if re.search(rf"\b{re.escape(n)}\b", text)}


def layer(name: str) -> list[Path]:
    return sorted((COLL / name).glob("*.[ch]"))


DECISION = declared(COLL / "decision" / "decision.h") | declared(COLL / "decision" / "verify.h")
ENTRY = declared(COLL / "entry" / "entry.h")
# The collectives the library defines: called from inside, they would run the library's decision again.
MPI_ENTRIES = {f"MPI_{op.capitalize()}" for op in OPS}


def test_the_layers_exist_and_their_headers_declare_something():
    for sub in ("base", "decision", "comm", "entry"):
        assert layer(sub), sub
    assert DECISION and ENTRY
    assert {"rwc_decide_call", "rwc_decision_params", "rwc_net_ready", "rwc_trinary_order"} <= DECISION


@pytest.mark.parametrize("path", layer("base"), ids=lambda p: p.name)
def test_algorithms_never_reach_the_decision_or_the_entries(path):
    assert not [h for h in includes(path) if h.startswith(("decision/", "entry/")) or
                h in ("decision.h", "verify.h", "entry.h")], path
    assert not calls(path, DECISION | ENTRY | MPI_ENTRIES), path
    # nor read the environment: their parameters are given (rwc_params)
    assert not re.search(r"\bgetenv\s*\(", code(path)), path


@pytest.mark.parametrize("path", layer("decision"), ids=lambda p: p.name)
def test_the_decision_never_calls_the_entries(path):
    assert not [h for h in includes(path) if h.startswith("entry/") or h == "entry.h"], path
    assert not calls(path, ENTRY | MPI_ENTRIES), path


@pytest.mark.parametrize("path", layer("comm"), ids=lambda p: p.name)
def test_the_cache_is_below_the_algorithms_and_entries(path):
    assert not [h for h in includes(path) if h.startswith(("base/", "entry/")) or h in ("base.h", "entry.h")], path
    assert not calls(path, ENTRY | MPI_ENTRIES | declared(COLL / "base" / "base.h")), path


def test_the_c_api_and_the_mpi_entries_do_not_call_each_other():
    api, entry = COLL / "entry" / "api.c", COLL / "entry" / "entry.c"
    assert not calls(api, defined(entry) | MPI_ENTRIES)
    assert not calls(entry, defined(api))
    # both go down to the decided path
    assert calls(api, ENTRY) and calls(entry, ENTRY)


def string_literals(path: Path) -> list[str]:
    return [s for _, s in numbered_literals(path)]


def numbered_literals(path: Path) -> list[tuple[int, str]]:
    """(line, contents) of each string literal outside comments."""
    text = re.sub(r'"(?:[^"\\\n]|\\.)*"|/\*.*?\*/|//[^\n]*',
                  lambda m: m.group(0) if m.group(0).startswith('"') else re.sub(r"[^\n]", " ", m.group(0)),
                  path.read_text(), flags=re.S)
    return [(text.count("\n", 0, m.start()) + 1, m.group(1))
            for m in re.finditer(r'"((?:[^"\\\n]|\\.)*)"', text)]


REGISTRY = ENGINE / "src" / "coll" / "registry.c"
# An operation's name (or the predictor's name of Open MPI's variant of it, "reduce_ompi"), or a list
# of operations written out ("bcast, reduce and gather"): a second list beside the registry's.
OP_NAME = re.compile(rf"(?:{'|'.join(OPS)})(?:_ompi)?")
OP_LIST = re.compile(rf"\b(?:{'|'.join(OPS)})(?:,\s*|\s+(?:or|and)\s+)(?:{'|'.join(OPS)})\b")


def operation_names(path: Path, root: Path = ENGINE.parent) -> list[str]:
    """`path:line: "literal"` for each literal of path that names an operation or lists operations."""
    return [f'{path.relative_to(root)}:{line}: "{s}"' for line, s in numbered_literals(path)
            if OP_NAME.fullmatch(s) or OP_LIST.search(s)]


def test_the_names_check_finds_literals_in_code_not_in_comments(tmp_path):
    src = tmp_path / "x.c"
    src.write_text('/* "bcast" */\nstatic const char *a = "reduce_ompi"; // "gather"\n'
                   'fail("known: bcast, reduce or gather"); fail("%s: root %d", "x", "scatter_allgather");\n')
    assert operation_names(src, tmp_path) == ['x.c:2: "reduce_ompi"', 'x.c:3: "known: bcast, reduce or gather"']


def test_operation_names_are_written_in_the_registry_only():
    """docs/architecture.md, rule 4: the engine (its library, rules reader, predictor, job and
    programs) takes every operation's name from the registry."""
    found = [hit for path in sorted(ENGINE.rglob("*.[ch]")) if path != REGISTRY for hit in operation_names(path)]
    assert not found, "operation names outside engine/src/coll/registry.c:\n" + "\n".join(found)


def op_enumerations(path: Path) -> list[str]:
    """The enumerations of path that number the operations (three or more enumerators named after
    operations; message tags, one per collective, are not such a numbering)."""
    ends = "|".join(op.upper() for op in OPS)
    return [m.group(0)[:60] for m in re.finditer(r"\benum\b[^{;]*\{[^}]*\}", code(path))
            if len(re.findall(rf"\b(?![A-Z0-9_]*_TAG_)[A-Z0-9_]*?(?:{ends})\b", m.group(0))) >= 3]


def test_one_enumeration_of_the_operations():
    """The public rw_coll_op (rankwise.h) is the engine's one numbering of the operations."""
    found = {str(p.relative_to(ENGINE)): op_enumerations(p) for p in sorted(ENGINE.rglob("*.[ch]"))}
    found = {p: e for p, e in found.items() if e}
    assert list(found) == ["include/rankwise.h"] and len(found["include/rankwise.h"]) == 1, found


LIBRARY_NAMED = sorted(COLL.rglob("*.[ch]")) + [ENGINE / "src" / "predict" / "library.c",
                                                 ENGINE / "src" / "coll" / "rules.c"]


@pytest.mark.parametrize("path", LIBRARY_NAMED, ids=lambda p: p.name)
def test_algorithm_names_are_written_in_the_registry_only(path):
    assert not [s for s in string_literals(path) if s in ALGS], path


def test_the_registry_names_every_operation_and_algorithm_once():
    lits = string_literals(REGISTRY)
    for name in OPS + ALGS:
        assert lits.count(name) == 1, name
