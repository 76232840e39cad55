"""The house rules the layout keeps (docs/architecture.md): library modules
never import the CLI, and what real clusters use does not need the simulator."""

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
    sample = PACKAGE / "probe.py"
    assert "rankwise.sim.hosts" in _imports(sample)  # imported inside probe_sim


# Modules that run on a real cluster: importing them, and their real-MPI parts, must work where the
# simulator is absent (here: rankwise.sim made unimportable).
REAL_CLUSTER = ["rankwise.cluster.launch", "rankwise.cluster.allocation", "rankwise.cluster.launcher_files", "rankwise.cluster.launcher_files.openmpi",
                "rankwise.cluster.launcher_files.mpich", "rankwise.cluster.launcher_files.intel", "rankwise.cluster.launcher_files.slurm",
                "rankwise.cluster.launcher_files.permutation", "rankwise.measure.probe", "rankwise.measure.profile", "rankwise.cluster.hostfile",
                "rankwise.util.files"]

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
