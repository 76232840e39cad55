"""rankwise's own matrix files, read by CommMatrix.load: the text format
(``.rwc``, first line ``rankwise-matrix 2``, or 1) and the numpy ``.npz``
alternative (docs/reference/formats.md, "Communication matrix"). Importing one is a
check and a copy (to the other format, say); --ranks must agree with it."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from rankwise.util.errors import RankwiseError, file_error
from rankwise.traffic.importers._common import job_size, read_bytes
from rankwise.traffic.matrix import CommMatrix

RWC = "rwc"
NPZ = "npz"


def load_rwc(path, n_ranks: int | None = None) -> CommMatrix:
    matrix = CommMatrix.load(path)  # the engine's reader names path:line itself
    job_size(path, n_ranks, matrix.n_ranks, "the matrix has")
    return matrix


def load_npz(path, n_ranks: int | None = None) -> CommMatrix:
    path = Path(path)
    if path.suffix.lower() == ".npz":
        matrix = CommMatrix.load(path)
    else:
        # CommMatrix.load picks numpy by the name: give it one that ends in .npz.
        if not read_bytes(path).startswith(b"PK"):
            raise file_error(path, None, "not a numpy .npz file (not a zip archive)")
        with tempfile.TemporaryDirectory() as tmp:
            copy = Path(tmp) / "matrix.npz"
            shutil.copyfile(path, copy)
            try:
                matrix = CommMatrix.load(copy)
            except RankwiseError as exc:
                raise RankwiseError(str(exc).replace(str(copy), str(path))) from None
    job_size(path, n_ranks, matrix.n_ranks, "the matrix has")
    return matrix
