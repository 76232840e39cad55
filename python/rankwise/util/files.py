"""Writing files safely: readers see the old content or the new one, never a part.

Every output rankwise writes (Python here, the C engine's models and text
matrices alike) is a complete temporary ``NAME.tmp.PID`` renamed over NAME.
Before writing, prepare_output() makes the rules the same for every verb's
``-o``:

- missing parent folders are created;
- NAME must be a regular file or absent: a directory, a device (``/dev/null``),
  a FIFO or a socket is refused, never replaced by a regular file (renaming
  over a device node would destroy it, and writing into a FIFO would wait
  for a reader that may never come);
- a symbolic link is followed: the file it points to is written (atomically,
  in the target's folder) and the link stays, as a shell's ``>`` would; a
  link to a directory or a device is refused like the directory or device;
- temporaries ``NAME.tmp.PID`` left by a writer that was killed (PID no
  longer running on this machine) are removed: they can be 150 MB.

Every writer, plots included, goes through prepare_output() and then
write_through_temporary() (or the engine's own NAME.tmp.PID writer) with
the path prepare_output() returned.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Iterable
from typing import BinaryIO
from os import PathLike
from pathlib import Path

from rankwise.util.errors import RankwiseError, UsageError

_TEMP = re.compile(r"\.tmp\.([0-9]{1,10})")  # what follows NAME in our temporaries

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
)


def prepare_output(path: str | PathLike, suffixes: Iterable[str] | None = None) -> Path:
    """Check that `path` may be written as a new regular file, create its
    folder, and clean up stale temporaries of earlier writes to it.
    Returns the path to write: `path`, or the file a symbolic link points to.
    With `suffixes` (e.g. ('.rwc', '.npz')), any other extension is refused:
    a file format is never chosen silently for a name that says another."""
    path = Path(path)
    if suffixes is not None:
        accepted = tuple(suffixes)
        if path.suffix.lower() not in accepted:
            raise UsageError(f"{path}: the file must end in {' or '.join(accepted)} (rankwise writes no other "
                             f"kind here), not {repr(path.suffix) if path.suffix else 'no extension'}")
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise RankwiseError(f"{path}: cannot write: {exc.strerror}") from None
    if mode is not None and not stat.S_ISREG(mode):
        kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
        raise UsageError(f"{path}: is {kind}; rankwise writes only regular files (give a file name)")
    if path.is_symlink():  # followed (a dangling link: its target is created)
        path = Path(os.path.realpath(path))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RankwiseError(f"{path.parent}: cannot create the folder: {exc.strerror}") from None
    remove_stale_temporaries(path)
    _check_writable(path)
    return path


def _check_writable(path: Path) -> None:
    """Create and remove the temporary the write will use: a read-only mount, a folder
    without write permission or a full inode table is found before any work, not after."""
    tmp = temporary_name(path)
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return  # this process is writing it already
    except OSError as exc:
        raise RankwiseError(f"{path}: cannot write: {exc.strerror}") from None
    os.close(fd)
    try:
        os.unlink(tmp)
    except OSError:
        pass


def temporary_name(path: str | PathLike) -> Path:
    """NAME.tmp.PID: the name every rankwise writer gives its temporary."""
    path = Path(path)
    return path.with_name(f"{path.name}.tmp.{os.getpid()}")


def remove_stale_temporaries(path: str | PathLike) -> list[Path]:
    """Remove NAME.tmp.PID files next to `path` whose PID is not running:
    only our own naming, only regular files, never a live writer's."""
    path = Path(path)
    prefix = path.name

    def pid_of(name: str) -> int | None:
        m = _TEMP.fullmatch(name[len(prefix):]) if name.startswith(prefix) else None
        return int(m.group(1)) if m else None

    return _remove_dead_writers(path.parent, pid_of)


_ANY_TEMP = re.compile(r"(.+)\.tmp\.([0-9]{1,10})"  # NAME.tmp.PID
                       r"|\.(.+)\.([0-9]{1,10})\.[0-9]+\.tmp")  # .NAME.PID.N.tmp: plots before 0.x


def remove_stale_temporaries_in(folder: str | PathLike, owned: Callable[[str], bool]) -> list[Path]:
    """The temporaries of dead writers in `folder` whose NAME `owned` accepts (a watch
    series' models, heatmaps and index): NAME.tmp.PID, and the .NAME.PID.N.tmp of
    earlier plots."""
    def pid_of(name: str) -> int | None:
        m = _ANY_TEMP.fullmatch(name)
        return int(m.group(2) or m.group(4)) if m and owned(m.group(1) or m.group(3)) else None

    return _remove_dead_writers(Path(folder), pid_of)


def _remove_dead_writers(folder: Path, pid_of: Callable[[str], int | None]) -> list[Path]:
    """Remove the regular files of `folder` whose name pid_of gives the PID of a writer that
    is not running (None: not a temporary of ours)."""
    removed = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        pid = pid_of(entry.name)
        if pid is None or _running(pid):
            continue
        try:
            if entry.is_file(follow_symlinks=False):
                os.unlink(entry.path)
                removed.append(Path(entry.path))
        except OSError:
            pass  # not ours to remove after all (permissions): leave it
    return removed


def _running(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return pid < 2**31  # PermissionError: it exists, owned by someone else
    return True


def write_atomic(path: str | PathLike, data: str | bytes) -> None:
    """Write a file so that readers see either the old or the new content, never a part."""
    path = prepare_output(path)
    raw = data.encode() if isinstance(data, str) else data
    write_through_temporary(path, lambda f: f.write(raw))


def write_through_temporary(path: Path, write: Callable[[BinaryIO], object]) -> None:
    """`write` fills 'path.tmp.PID', which is then renamed over path (path
    already checked by prepare_output); the temporary never outlives a failure."""
    tmp = temporary_name(path)
    try:
        # 0666 & ~umask, as for any file a user creates: these files are meant to be shared
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
    except OSError as exc:
        raise RankwiseError(f"{path}: cannot write: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise RankwiseError(f"{path}: cannot write: {exc.strerror or exc}") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
