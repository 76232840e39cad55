"""The one error type the CLI turns into a one-line message and exit code."""

from __future__ import annotations

from os import PathLike


class RankwiseError(Exception):
    """A user-facing error: str() is a single line, no traceback is shown."""

    def __init__(self, message: str, exit_code: int = 2):
        super().__init__(message.replace("\n", " "))
        self.exit_code = exit_code


def file_error(path: str | PathLike, line: int | None, msg: str) -> RankwiseError:
    """'path:line: msg' (or 'path: msg' when the line is unknown)."""
    where = f"{path}:{line}" if line is not None else f"{path}"
    return RankwiseError(f"{where}: {msg}")
