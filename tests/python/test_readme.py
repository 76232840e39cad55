"""Every command of README.md runs (`make check-readme`; also part of `make test`).

The ```sh blocks are read from README.md; each command runs, in order, in one
scratch folder (later commands use what earlier ones wrote), as a user would
type it, with `rankwise` the installed CLI. What this machine needs changed
or provided is stated here, nowhere else:

Provided in the scratch folder before the first command:
  ./app       a small MPI program (a ring exchange) built with smpicc and
              `rankwise profile --smpi-flags`, as README says to build one
  stats.txt   an Intel MPI statistics file (the importers' test sample)

SUBSTITUTIONS (command text -> what runs here, and why):
  'mpirun -np 4'  -> 'mpirun -np 4 --oversubscribe'  this machine has 2 cores
SKIPPED (with the reason printed in the test's output):
  make demo       tests/python/cli/test_cli.py runs `rankwise demo` (on 8 nodes)
  make test       this test is part of it
Blocks whose first line is '# real cluster only' need nodes this machine has
not: each of their commands is parsed (verb, options and values checked, as
the CLI would) and not run. Blocks whose first line starts with '# emulated
cluster (root)' run where network namespaces can be made (root; CI) and are
parsed only elsewhere; their `rankwise emulate down` runs even when a command
before it failed, so that a failure leaves no namespace behind."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.core import TyperGroup
from typer.main import get_command

from rankwise.measure import profile as prof
from rankwise.cli import app as cli_app
from rankwise.cluster.launch import mpi_environment

README = Path(__file__).resolve().parents[2] / "README.md"
RANKWISE = Path(sys.executable).parent / "rankwise"  # the CLI installed beside this Python
REAL_CLUSTER = "# real cluster only"
EMULATED = "# emulated cluster (root)"
SUBSTITUTIONS = [("'mpirun -np 4'", "'mpirun -np 4 --oversubscribe'")]
SKIPPED = {"make demo": "tests/python/cli/test_cli.py runs `rankwise demo` (on 8 nodes)",
           "make test": "this test is part of it"}
BUDGET_S = 240  # the whole page, on this shared 2-core machine

pytestmark = pytest.mark.readme

RING = r"""
#include <mpi.h>
int main(int argc, char **argv)
{
    int rank, size, token = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int k = 0; k < 10; k++)
        MPI_Sendrecv_replace(&token, 1, MPI_INT, (rank + 1) % size, 0, (rank + size - 1) % size, 0,
                             MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
"""


def sh_blocks(text: str) -> list[list[str]]:
    """The commands of every ```sh block: continuation lines joined, comments and blanks dropped."""
    blocks = []
    for body in re.findall(r"^```sh\n(.*?)^```", text, flags=re.S | re.M):
        commands, pending = [], ""
        for line in body.splitlines():
            if not pending and line.lstrip().startswith("#"):
                for marker in (REAL_CLUSTER, EMULATED):
                    if not commands and line.startswith(marker):
                        commands.append(marker)  # the block's marker
                continue
            pending += line[:-1] + " " if line.endswith("\\") else line
            if line.endswith("\\"):
                continue
            words = shlex.split(pending, comments=True)
            pending = ""
            if words:
                commands.append(shlex.join(words))
        blocks.append(commands)
    return blocks


def parse_only(command: str) -> str:
    """Check a rankwise command line the way the CLI parses it, without running it; its verb."""
    words = shlex.split(command)
    assert words[0] == "rankwise", command
    cmd = get_command(cli_app)
    ctx = cmd.make_context("rankwise", words[1:])
    while isinstance(cmd, TyperGroup) and cmd.list_commands(ctx):
        name, cmd, rest = cmd.resolve_command(ctx, [*ctx._protected_args, *ctx.args])
        ctx = cmd.make_context(name, rest, parent=ctx)
    return cmd.name


def test_the_readme_has_what_this_test_reads():
    blocks = sh_blocks(README.read_text())
    commands = [c for b in blocks for c in b if not c.startswith("#")]
    assert len(blocks) >= 3 and len(commands) >= 15
    assert any(b and b[0] == REAL_CLUSTER for b in blocks)
    for old, _ in SUBSTITUTIONS:
        assert any(old in c for c in commands), f"substitution {old} no longer matches README.md"
    for skipped in SKIPPED:
        assert skipped in commands, f"skipped command {skipped} no longer in README.md"


def test_real_cluster_commands_parse():
    blocks = [b[1:] for b in sh_blocks(README.read_text()) if b and b[0] == REAL_CLUSTER]
    verbs = {parse_only(c) for b in blocks for c in b}
    assert {"probe", "profile", "optimize"} <= verbs


def namespaces_work() -> bool:
    """Can this test make network namespaces (an emulated cluster)?"""
    if os.geteuid() != 0 or not all(shutil.which(t) for t in ("ip", "tc", "unshare")):
        return False
    return subprocess.run(["unshare", "--net", "true"], capture_output=True).returncode == 0


def run_emulated(block: list[str], run) -> None:
    """An emulated-cluster block: its commands in order, its `emulate down` whatever happened."""
    downs = [c for c in block if c.startswith("rankwise emulate down")]
    try:
        for command in block:
            if command not in downs:
                run(command)
    finally:
        for command in downs:
            run(command)


@pytest.mark.skipif(not (shutil.which("smpicc") and shutil.which("mpirun")), reason="needs SimGrid and Open MPI")
def test_every_readme_command_runs(tmp_path, capsys):
    (tmp_path / "ring.c").write_text(RING)
    env = {k: v for k, v in os.environ.items() if k != "SMPI_PRETEND_CC"}
    subprocess.run(["smpicc", "-O1", "ring.c", *prof.smpi_flags(), "-o", "app"], cwd=tmp_path, env=env, check=True,
                   capture_output=True)
    from test_importers import INTEL  # the importers' Intel MPI sample
    (tmp_path / "stats.txt").write_text(INTEL)

    env = {**mpi_environment(), "PATH": f"{RANKWISE.parent}:{os.environ['PATH']}", "COLUMNS": "100"}
    start, ran = time.monotonic(), []
    parsed = []

    def run(command: str) -> None:
        for old, new in SUBSTITUTIONS:
            command = command.replace(old, new)
        t0 = time.monotonic()
        r = subprocess.run(command, shell=True, cwd=tmp_path, env=env, capture_output=True, text=True,
                           timeout=BUDGET_S, stdin=subprocess.DEVNULL)
        assert r.returncode == 0, f"{command}\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}"
        assert "Traceback" not in r.stderr, command
        ran.append((command, time.monotonic() - t0))

    for block in sh_blocks(README.read_text()):
        if block and block[0] == REAL_CLUSTER:
            continue
        if block and block[0] == EMULATED:
            if namespaces_work():
                run_emulated(block[1:], run)
            else:
                print(f"parsed only (no network namespaces here): {block[1:]}")
                parsed += [parse_only(c) for c in block[1:]]
            continue
        for command in block:
            if command.startswith("#"):
                continue
            if command in SKIPPED:
                print(f"skipped: {command}: {SKIPPED[command]}")
                continue
            run(command)
    with capsys.disabled():
        for command, seconds in ran:
            print(f"  {seconds:6.1f} s  {command}")
    assert len(ran) + len(parsed) + len(SKIPPED) == sum(
        len([c for c in b if not c.startswith("#")]) for b in sh_blocks(README.read_text()) if REAL_CLUSTER not in b)
    assert time.monotonic() - start < BUDGET_S, ran
    assert (tmp_path / "rankfile").exists() and (tmp_path / "hosts.slurm").exists()
    assert (tmp_path / "opt" / "verify.csv").exists() and (tmp_path / "local.rwm").exists()
