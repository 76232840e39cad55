"""The house rules the layout keeps (docs/architecture.md): the package by pipeline stage, each
stage importing only the stages below it; only rankwise._engine declares the C engine's ctypes;
one CLI module per verb, and library modules never import the CLI; what real clusters use does
not need the simulator."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import rankwise

PACKAGE = Path(rankwise.__file__).resolve().parent


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every module a file imports, wherever the import statement is (inside functions too)."""
    tree = ast.parse(path.read_text(), str(path))
    package = _module_name(path) if path.name == "__init__.py" else _module_name(path).rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the file's package upwards
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, base] if base else up)
            found |= {base} | {f"{base}.{alias.name}" for alias in node.names}
    return found


def test_library_modules_never_import_the_cli():
    library = [p for p in PACKAGE.rglob("*.py")
               if "cli" not in p.relative_to(PACKAGE).parts and p.name != "__main__.py"]
    assert len(library) > 20  # the walk found the package
    offenders = {_module_name(p): sorted(m for m in _imports(p) if m == "rankwise.cli" or m.startswith("rankwise.cli."))
                 for p in library}
    assert {k: v for k, v in offenders.items() if v} == {}


def test_the_walk_sees_imports_inside_functions(tmp_path):
    sample = PACKAGE / "measure" / "probe.py"
    assert "rankwise.sim.hosts" in _imports(sample)  # imported inside probe_sim


# Modules that run on a real cluster: importing them, and their real-MPI parts, must work where the
# simulator is absent (here: rankwise.sim made unimportable). Every module of these stages, but the
# benchmark programs' runner (it runs them under smpirun too).
REAL_CLUSTER_STAGES = ("util", "_engine", "model", "traffic", "cluster", "measure", "map")
NEEDS_SIM = {"rankwise.cluster.benchmark_programs"}
REAL_CLUSTER = sorted(_module_name(p) for stage in REAL_CLUSTER_STAGES for p in (PACKAGE / stage).rglob("*.py")
                      if _module_name(p) not in NEEDS_SIM)

NO_SIM = """
import sys
sys.modules["rankwise.sim"] = None  # `import rankwise.sim...` now raises ImportError
for name in {modules!r}:
    __import__(name)
from rankwise.measure.probe import ProbeOptions
from rankwise.measure.profile import launcher_command
assert ProbeOptions(sizes="8,1K", group_by="rank").args() == ["--sizes", "8,1K", "--group-by", "rank"]
words, env = launcher_command("srun -n 2", "./app", ["x"], {{"RANKWISE_PROFILE_OUT": "p.rwc"}})
assert words == ["srun", "-n", "2", "./app", "x"] and env["RANKWISE_PROFILE_OUT"] == "p.rwc"
assert not [m for m in sys.modules if m.startswith("rankwise.sim.")]
print("ok")
"""


def test_real_cluster_modules_import_without_the_simulator(tmp_path):
    fake = tmp_path / "srun"  # launcher_command checks that the launcher exists
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    env = {"PATH": f"{tmp_path}:/usr/bin:/bin"}
    r = subprocess.run([sys.executable, "-c", NO_SIM.format(modules=REAL_CLUSTER)], capture_output=True, text=True,
                       env=env, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


# The pipeline's stages, lowest first: a module imports from its own stage, a stage of its level or
# below, never above (the shared utilities at the bottom, the command line at the top). sim and
# emulate are the simulated and the emulated cluster; report prints and draws what the stages find.
LEVELS = {"util": 0, "_engine": 1, "model": 2, "traffic": 2, "cluster": 3, "sim": 3, "report": 3, "predict": 4,
          "map": 5, "measure": 6, "emulate": 6, "coll": 7, "workflows": 8, "cli": 9}
TOP = {"rankwise", "rankwise.__main__"}  # the version, and `python -m rankwise` (the CLI)

# Imports upwards that are known and wait for their fix; a new one fails the test.
UPWARD = {
    # the predictor's network from a model through the mapper's (one C rule replaces both)
    ("rankwise.predict.predictor", "rankwise.map.mapping"),
    # the before/after tables compute the mapper's costs
    ("rankwise.report.placement", "rankwise.map.mapping"),
    # nodes of one host per NUMA domain: the platform, and its probe by node
    ("rankwise.sim.domains", "rankwise.measure.node_probe"),
    ("rankwise.sim.domains", "rankwise.measure.probe"),
}


def _stage(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if parts[0] == "rankwise" and len(parts) > 1 else None


def _package_files() -> list[Path]:
    files = sorted(PACKAGE.rglob("*.py"))
    assert len(files) > 100  # the walk found the package
    return files


def test_every_module_is_in_a_stage():
    assert sorted(_module_name(p) for p in PACKAGE.glob("*.py")) == sorted(TOP)
    stages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    assert stages == set(LEVELS)


def test_stages_import_downward_only():
    upward = set()
    for path in _package_files():
        module = _module_name(path)
        if module in TOP:
            continue
        for name in _imports(path):
            target = _stage(name)
            if target in LEVELS and LEVELS[target] > LEVELS[_stage(module)]:
                # by module: `from rankwise.x.y import z` counts as rankwise.x.y
                upward.add((module, ".".join(name.split(".")[:3])))
    assert upward - UPWARD == set(), sorted(upward - UPWARD)
    assert UPWARD - upward == set(), f"fixed, remove from UPWARD: {sorted(UPWARD - upward)}"


def _ctypes_declarations(path: Path) -> list[str]:
    """ctypes Structures and prototypes (argtypes, restype) a file declares."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ClassDef) and any(ast.unparse(b).endswith("Structure") for b in node.bases):
            found.append(f"class {node.name}")
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Attribute) and target.attr in ("argtypes", "restype"):
                    found.append(ast.unparse(target))
    return found


# Declarations still beside their module (none: a new one fails the test).
CTYPES_PENDING: set[str] = set()
# Stage modules that hand numpy arrays and handles to the engine's functions (byref, data_as).
CTYPES_CALLERS = {"rankwise.model.model", "rankwise.model.node", "rankwise.traffic.matrix", "rankwise.map.mapping",
                  "rankwise.coll.selection", "rankwise.predict.predictor", "rankwise.predict.workload"}


def test_only_the_engine_package_declares_ctypes():
    declared = {_module_name(p): _ctypes_declarations(p) for p in _package_files()
                if "_engine" not in p.relative_to(PACKAGE).parts}
    assert {m: d for m, d in declared.items() if d and m not in CTYPES_PENDING} == {}
    assert _ctypes_declarations(PACKAGE / "_engine" / "map.py")  # the check sees declarations
    users = {_module_name(p) for p in _package_files() if "ctypes" in _imports(p)}
    outside = {m for m in users if _stage(m) != "_engine"}
    assert outside <= CTYPES_PENDING | CTYPES_CALLERS, sorted(outside - CTYPES_PENDING - CTYPES_CALLERS)


CLI_HELPERS = {"rankwise.cli", "rankwise.cli.common", "rankwise.cli.sim_options", "rankwise.cli.manpages"}


def test_one_cli_module_per_verb():
    """`rankwise VERB [SUB]` lives in rankwise/cli/VERB.py (or VERB_SUB.py); every other CLI module is
    a verb's, or one of the shared helpers."""
    from typer.main import get_command

    from rankwise.cli import app

    def commands(cmd, path):
        if getattr(cmd, "commands", None):
            for name, sub in cmd.commands.items():
                yield from commands(sub, [*path, name])
        else:
            yield path, cmd.callback.__module__

    homes = set()
    for path, module in commands(get_command(app), []):
        verb = path[0].replace("import", "import_")
        allowed = {f"rankwise.cli.{verb}"} | ({f"rankwise.cli.{verb}_{path[1]}"} if len(path) > 1 else set())
        assert module in allowed, (" ".join(path), module)
        homes.add(module)
    modules = {_module_name(p) for p in (PACKAGE / "cli").glob("*.py")}
    assert modules - CLI_HELPERS == homes


REPO = Path(__file__).resolve().parents[2]


def test_papers_are_cited_by_author_and_year():
    """Code, docs, help and output cite the papers as 'Cui et al. 2020', never by
    a number a reader cannot look up ('seed' and three digits), which also reads as a random seed."""
    if not (REPO / ".git").exists():
        import pytest

        pytest.skip("needs the source tree")
    found = subprocess.run(["git", "grep", "-n", "-I", "-i", "-E", r"seed 0[0-9]{2}|the seeds'", "--", ".", ":!tests/python/test_layout.py"],
                           cwd=REPO, capture_output=True, text=True).stdout
    assert found == "", found
