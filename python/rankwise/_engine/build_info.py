"""What this installation of rankwise holds: its version, the build's features (the MPI it was
built with, the simulated cluster, hwloc, METIS), the files to preload or link, and every
environment variable it reads with its current value (`rankwise info`)."""

from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass, field
from pathlib import Path

from rankwise import __version__

from rankwise.util import paths
from rankwise.util.variables import VARIABLES

BUILD_INFO = "build-info.txt"  # written by engine/CMakeLists.txt beside the libraries


@dataclass
class Info:
    version: str
    features: dict[str, str]
    files: dict[str, str]
    variables: list[dict[str, str | None]] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"version": self.version, "features": self.features, "files": self.files,
                "variables": self.variables}


def _read_build_info(lib: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    try:
        text = (lib / BUILD_INFO).read_text(errors="replace")
    except OSError:
        return out
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            out[key.strip()] = value.strip()
    return out


def _mpi_library_version(coll: Path) -> str:
    """MPI_Get_library_version of the MPI the collectives library is linked with (MPI lets it be
    called before MPI_Init)."""
    if not coll.exists():
        return "not built"
    try:
        lib = ctypes.CDLL(str(coll))
        buf, length = ctypes.create_string_buffer(8192), ctypes.c_int(0)
        if lib.MPI_Get_library_version(buf, ctypes.byref(length)) != 0:
            return "unknown (MPI_Get_library_version failed)"
    except (OSError, AttributeError) as e:
        return f"unknown ({e})"
    return " ".join(buf.value.decode(errors="replace").split())


def collect() -> Info:
    lib = paths.PACKAGE_DIR / "_lib"
    built = _read_build_info(lib)
    coll, profiler = lib / "librankwise_coll.so", lib / "librankwise_profile.so"
    smpi = (paths.PACKAGE_DIR / "_bin" / "smpi" / "rankwise-probe").exists()
    features = {
        "MPI": _mpi_library_version(coll),
        "MPI standard": built.get("mpi_standard", "unknown"),
        "built with": built.get("mpicc", "unknown"),
        "simulated cluster (SimGrid SMPI)": "yes" if smpi else "no (built without smpicc)",
        "hwloc": built.get("hwloc", "unknown"),
        "METIS": built.get("metis", "unknown"),
    }
    files = {
        "collectives library (LD_PRELOAD)": str(coll),
        "profiler (LD_PRELOAD)": str(profiler),
        "C headers": str(lib / "include"),
        "C engine (no MPI)": str(lib / "librankwise.so"),
        "real-MPI programs": str(paths.PACKAGE_DIR / "_bin" / "mpi"),
    }
    variables = [{"name": v.name, "read by": v.reader, "meaning": v.meaning, "in full": v.doc,
                  "value": os.environ.get(v.name)} for v in VARIABLES]
    return Info(__version__, features, files, variables)
