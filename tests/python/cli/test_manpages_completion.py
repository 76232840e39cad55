"""Shell completion (typer's, through the variables click reads) and the man pages generated from
the command tree (python/rankwise/cli/manpages.py, `make man`, `make install-completion`)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_cli
from typer import _click as click

from rankwise.cli import command

RANKWISE = Path(sys.executable).parent / "rankwise"  # the installed entry point, as a shell finds it


def _complete_bash(words: str) -> list[str]:
    """What `rankwise` offers for the last word of `words` (the last word may be empty)."""
    parts = words.split(" ")
    r = run_cli(env={"_RANKWISE_COMPLETE": "complete_bash", "COMP_WORDS": words, "COMP_CWORD": str(len(parts) - 1)})
    assert r.returncode == 0, r.stderr
    return r.stdout.split()


def test_completion_offers_verbs_sub_verbs_and_options():
    assert _complete_bash("rankwise co") == ["coll"]
    assert _complete_bash("rankwise coll t") == ["tune"]
    assert "predict" in _complete_bash("rankwise coll ")
    options = _complete_bash("rankwise probe --")
    assert "--output" in options and "--help" in options


def _in_bash(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    # typer finds the shell to write for from the parent process (shellingham): make it bash.
    return subprocess.run(["bash", "-c", '"$@"; exit $?', "bash", *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, stdin=subprocess.DEVNULL, timeout=120)


def test_show_completion_prints_a_bash_script_that_completes():
    r = _in_bash(sys.executable, "-m", "rankwise", "--show-completion")
    assert r.returncode == 0, r.stderr
    assert "complete -o default -F _rankwise_completion rankwise" in r.stdout
    if not RANKWISE.exists():
        pytest.skip(f"{RANKWISE} is not installed (make build)")
    # The script itself, as bash runs it on <TAB>: it calls `rankwise` found on PATH.
    script = r.stdout + '\nCOMP_WORDS=(rankwise co); COMP_CWORD=1; _rankwise_completion rankwise; echo "${COMPREPLY[@]}"\n'
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PATH": f"{RANKWISE.parent}{os.pathsep}{os.environ['PATH']}"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["coll"]


def test_install_completion_writes_into_home(tmp_path):
    r = _in_bash(sys.executable, "-m", "rankwise", "--install-completion", env={"HOME": str(tmp_path)})
    assert r.returncode == 0, r.stderr
    scripts = list(tmp_path.rglob("rankwise*"))
    assert scripts and "_RANKWISE_COMPLETE=complete_bash" in scripts[0].read_text()
    assert str(scripts[0].relative_to(tmp_path)) in (tmp_path / ".bashrc").read_text()


def test_installable_completion_scripts(tmp_path):
    r = subprocess.run([sys.executable, "-m", "rankwise.cli.manpages", "--completion", str(tmp_path)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "complete -o default -F _rankwise_completion rankwise" in (tmp_path / "rankwise.bash").read_text()
    zsh = (tmp_path / "_rankwise").read_text()
    # autoloaded from $fpath: the file is the function's body, and completes the call that loaded it
    assert zsh.startswith("#compdef rankwise") and zsh.rstrip().endswith('_rankwise_completion "$@"')
    assert "_RANKWISE_COMPLETE=complete_zsh" in zsh


def _commands() -> list[tuple[str, object]]:
    """(page name, command) for every command of the tree, groups included."""
    found = []

    def walk(cmd, ctx):
        found.append((ctx.command_path.replace(" ", "-"), cmd, ctx))
        for name, sub in getattr(cmd, "commands", {}).items():
            walk(sub, click.Context(sub, info_name=name, parent=ctx))

    root = command()
    walk(root, click.Context(root, info_name="rankwise"))
    return found


@pytest.fixture(scope="module")
def man_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("man") / "man1"
    r = subprocess.run([sys.executable, "-m", "rankwise.cli.manpages", "--man", str(out)],
                       capture_output=True, text=True, timeout=300, env={**os.environ, "SOURCE_DATE_EPOCH": "0"})
    assert r.returncode == 0, r.stderr
    return out


@pytest.mark.skipif(not shutil.which("groff"), reason="groff is not installed")
def test_every_verb_has_a_page_that_renders_and_names_its_options(man_dir):
    commands = _commands()
    assert {p.name for p in man_dir.iterdir()} == {f"{name}.1" for name, _, _ in commands}
    assert {"rankwise.1", "rankwise-coll-tune.1", "rankwise-emulate-slurm-up.1"} <= {p.name for p in man_dir.iterdir()}
    for name, cmd, ctx in commands:
        page = man_dir / f"{name}.1"
        # -ww: every groff warning; -z: check only. A page groff warns about is a broken page.
        check = subprocess.run(["groff", "-man", "-ww", "-z", str(page)], capture_output=True, text=True, timeout=60)
        assert check.returncode == 0 and not check.stderr, f"{page.name}: {check.stderr}"
        text = subprocess.run(["groff", "-man", "-Tutf8", "-P-cbou", "-rLL=200n", str(page)],
                              capture_output=True, text=True, timeout=60).stdout
        assert f"{name} - " in text, page.name  # NAME section
        assert "1970-01-01" in text  # SOURCE_DATE_EPOCH
        for param in cmd.get_params(ctx):
            for opt in param.opts if param.param_type_name == "option" else ():
                assert opt in text, f"{page.name} does not mention {opt}"
        for sub in getattr(cmd, "commands", {}):
            assert f"{name}-{sub}(1)" in text, f"{page.name} does not point to {name}-{sub}(1)"


@pytest.mark.skipif(not shutil.which("man"), reason="man is not installed")
def test_man_reads_a_page(man_dir):
    r = subprocess.run(["man", "-l", str(man_dir / "rankwise-coll-tune.1")], capture_output=True, text=True,
                       timeout=60, env={**os.environ, "MANWIDTH": "100", "MANPAGER": "cat", "PAGER": "cat"})
    assert r.returncode == 0 and not r.stderr.strip(), r.stderr
    assert "RANKWISE-COLL-TUNE(1)" in r.stdout and "--output" in r.stdout and "[required]" in r.stdout


def test_unwritable_folder_is_one_line_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    r = subprocess.run([sys.executable, "-m", "rankwise.cli.manpages", "--man", str(blocker / "man1")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rankwise: error: cannot write") and "Traceback" not in r.stderr


# A terminal for zsh (zpty): type `rankwise co<TAB>` once, read the line back until it changes.
_ZSH_TAB = r'''
zmodload zsh/zpty
zpty z zsh -f -i
zpty -w z "PS1='> '; fpath=($1 \$fpath); PATH=$2:\$PATH; autoload -U compinit; compinit -u -D"
zpty -w -n z "rankwise co"$'\t'
all=""
for i in {1..100}; do
  while zpty -r -t z chunk; do all+=$chunk; done
  [[ $all == *"rankwise coll"* ]] && break
  sleep 0.3
done
print -r -- "$all"
zpty -d z
'''


@pytest.mark.skipif(not shutil.which("zsh"), reason="zsh is not installed (make installs it)")
def test_zsh_completes_on_the_first_tab(tmp_path):
    if not RANKWISE.exists():
        pytest.skip(f"{RANKWISE} is not installed (make build)")
    folder = tmp_path / "site-functions"
    r = subprocess.run([sys.executable, "-m", "rankwise.cli.manpages", "--completion", str(folder)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    (folder / "rankwise.bash").unlink()
    script = tmp_path / "tab.zsh"
    script.write_text(_ZSH_TAB)
    done = subprocess.run(["zsh", "-f", str(script), str(folder), str(RANKWISE.parent)], capture_output=True,
                          text=True, timeout=120)
    # the typed line, redrawn with the completed word
    assert "rankwise coll" in done.stdout, done.stdout[-2000:] + done.stderr
