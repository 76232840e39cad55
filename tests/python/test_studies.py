"""studies/run.py knows every study (`make studies` runs them by area; studies/README.md)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

STUDIES_DIR = Path(__file__).resolve().parents[2] / "studies"


def _runner():
    spec = importlib.util.spec_from_file_location("studies_run", STUDIES_DIR / "run.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # its dataclass looks its module up
    spec.loader.exec_module(mod)
    return mod


def test_every_study_script_is_in_the_table_and_every_entry_exists():
    run = _runner()
    scripts = {str(p.relative_to(STUDIES_DIR)) for p in STUDIES_DIR.glob("*/*.py") if "__main__" in p.read_text()}
    listed = {s.script for s in run.STUDIES}
    assert scripts == listed
    assert len({s.name for s in run.STUDIES}) == len(run.STUDIES)
    assert all(s.script.split("/")[0] == s.area for s in run.STUDIES)  # a study runs from its area


def test_areas_and_names_select_and_unknown_words_are_refused():
    run = _runner()
    coll = run.select(["coll"])
    assert coll and all(s.area == "coll" and not s.by_name_only for s in coll)
    assert [s.name for s in run.select(["ompi_rules_gain"])] == ["ompi_rules_gain"]
    assert not [s for s in run.select([]) if s.by_name_only]
    r = subprocess.run([sys.executable, str(STUDIES_DIR / "run.py"), "nowhere"], capture_output=True, text=True)
    assert r.returncode != 0 and "unknown area or study nowhere" in r.stderr


def test_list_prints_each_study_with_its_path():
    r = subprocess.run([sys.executable, str(STUDIES_DIR / "run.py"), "--list"], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    for s in _runner().STUDIES:
        assert f"studies/{s.script}" in r.stdout
