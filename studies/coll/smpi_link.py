"""The studies' SMPI programs (tests/engine/mpi/*.c) built with smpicc and linked with the collectives
library's static build, --whole-archive: SimGrid's mpi.h declares MPI_* weak, so the library's definitions
take the calls (docs/concepts/collectives.md)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from rankwise.util import paths
def build_linked(source: Path, exe: Path) -> Path:
    """smpicc -O2 source -> exe, linked with librankwise_coll.a."""
    lib = paths.PACKAGE_DIR / "_lib" / "smpi"
    env = {k: v for k, v in os.environ.items() if k != "SMPI_PRETEND_CC"}
    subprocess.run(["smpicc", "-O2", f"-I{lib / 'include'}", "-o", str(exe), str(source), f"-L{lib}",
                    "-Wl,--whole-archive", "-lrankwise_coll", "-Wl,--no-whole-archive"], check=True,
                   capture_output=True, text=True, env=env)
    return exe
