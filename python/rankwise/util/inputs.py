"""Opening the files users name as input, without hanging or guessing.

A path may be a directory, a FIFO nobody writes to (open() would wait
forever), a device that never ends (/dev/zero) or a pipe from the shell
(``<(zcat stats.txt.gz)``). Readers take regular files and pipes; a FIFO
without a writer reads as empty (and is refused as such by the reader);
anything else is refused here with what it is."""

from __future__ import annotations

import os
import stat
from os import PathLike, fspath

from rankwise.util.errors import RankwiseError

# Worded as the C engine's reader words a directory (rw_open_text).
_KINDS = (
    (stat.S_ISDIR, "cannot open: it is a directory, not a file"),
    (stat.S_ISCHR, "cannot open: it is a character device, not a file"),
    (stat.S_ISBLK, "cannot open: it is a block device, not a file"),
    (stat.S_ISSOCK, "cannot open: it is a socket, not a file"),
)


def check_input(path: str | PathLike, *, pipes: bool = False) -> None:
    """RankwiseError 'path: ...' unless path is a regular file (or, with
    pipes, a FIFO): for readers that open the path themselves (the C engine,
    numpy), which would block on a FIFO."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise RankwiseError(f"{fspath(path)}: cannot open: No such file or directory") from None
    except OSError as exc:
        raise RankwiseError(f"{fspath(path)}: cannot open: {exc.strerror}") from None
    _check_mode(path, mode, pipes)


def read_input(path: str | PathLike, what: str = "") -> bytes:
    """The bytes of a regular file or a pipe (a FIFO with no writer reads as
    empty); `what` names the file in errors ('cannot read hostfile: ...')."""
    cannot = f"cannot read {what}" if what else "cannot open"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO must not block the open
    except IsADirectoryError:
        raise RankwiseError(f"{fspath(path)}: {_KINDS[0][1]}") from None
    except OSError as exc:
        raise RankwiseError(f"{fspath(path)}: {cannot}: {exc.strerror}") from None
    try:
        _check_mode(path, os.fstat(fd).st_mode, pipes=True)  # before fdopen, which refuses directories itself
    except RankwiseError:
        os.close(fd)
        raise
    with os.fdopen(fd, "rb") as f:
        os.set_blocking(fd, True)  # a pipe with a writer: wait for its data, as cat would
        try:
            return f.read()
        except OSError as exc:
            raise RankwiseError(f"{fspath(path)}: cannot read: {exc.strerror}") from None


def _check_mode(path, mode: int, pipes: bool) -> None:
    if stat.S_ISREG(mode) or (pipes and stat.S_ISFIFO(mode)):
        return
    if stat.S_ISFIFO(mode):
        raise RankwiseError(f"{fspath(path)}: cannot open: it is a FIFO; this reader needs a regular file")
    what = next((text for test, text in _KINDS if test(mode)), "cannot open: it is not a regular file")
    raise RankwiseError(f"{fspath(path)}: {what}")
