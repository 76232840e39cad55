"""The error types the CLI turns into a one-line message and an exit code.

Two kinds, so that scripts can tell them apart (as click and typer do):

- UsageError (exit 2): the user's arguments are wrong - an unknown or
  malformed option value, options that conflict, a required one missing.
  Nothing was run; fix the command line.
- RankwiseError (exit 1): the command was well formed but failed - a file
  that cannot be read or is malformed, a run that crashed, a goal missed."""

from __future__ import annotations

from os import PathLike


class RankwiseError(Exception):
    """A user-facing failure: str() is a single line, no traceback is shown."""

    exit_code = 1

    def __init__(self, message: str, exit_code: int | None = None):
        super().__init__(message.replace("\r", " ").replace("\n", " "))
        if exit_code is not None:
            self.exit_code = exit_code


class UsageError(RankwiseError):
    """The command line is wrong (exit code 2, like typer's own usage errors)."""

    exit_code = 2


def file_error(path: str | PathLike, line: int | None, msg: str) -> RankwiseError:
    """'path:line: msg' (or 'path: msg' when the line is unknown)."""
    where = f"{path}:{line}" if line is not None else f"{path}"
    return RankwiseError(f"{where}: {msg}")
