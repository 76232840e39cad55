"""Where the compiled parts of rankwise live inside the installed package."""

from __future__ import annotations

import os
from pathlib import Path

from rankwise.util.errors import RankwiseError

PACKAGE_DIR = Path(__file__).resolve().parents[1]  # rankwise/, which holds _lib and _bin


def engine_library() -> Path:
    """librankwise (the C engine without MPI), loaded through ctypes."""
    override = os.environ.get("RANKWISE_LIB")
    path = Path(override) if override else PACKAGE_DIR / "_lib" / "librankwise.so"
    if not path.exists():
        raise RankwiseError(
            f"the C engine is not built ({path} is missing): run 'make' in the rankwise checkout"
        )
    return path


def program(name: str, flavour: str) -> Path:
    """An MPI program of the engine; flavour 'mpi' (real MPI) or 'smpi' (simulated)."""
    override = os.environ.get(f"RANKWISE_{flavour.upper()}_BIN")
    base = Path(override) if override else PACKAGE_DIR / "_bin" / flavour
    path = base / name
    if not path.exists():
        raise RankwiseError(f"{name} for {flavour} is not built ({path} is missing): run 'make'")
    return path
