"""Writing files safely: readers see the old content or the new one, never a part."""

from __future__ import annotations

import os
import tempfile
from os import PathLike
from pathlib import Path


def write_atomic(path: str | PathLike, data: str | bytes) -> None:
    """Write a file so that readers see either the old or the new content, never a part."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = data.encode() if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; these files are meant to be shared
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
