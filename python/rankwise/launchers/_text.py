"""Reading the text of a launcher file: lines without comments, with their numbers."""

from __future__ import annotations

from collections.abc import Iterator
from os import PathLike
from pathlib import Path

from rankwise.errors import file_error


def lines(path: str | PathLike, comment: str = "#") -> Iterator[tuple[int, str]]:
    """(line number, text) of the non-empty lines, comments removed."""
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise file_error(path, None, f"cannot read: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise file_error(path, None, "not a text file") from None
    for number, raw in enumerate(text.splitlines(), 1):
        body = raw.split(comment, 1)[0].strip() if comment else raw.strip()
        if body:
            yield number, body


def count(text: str, what: str, path, line: int) -> int:
    if not (text.isascii() and text.isdigit()):
        raise file_error(path, line, f"{what} '{text}' is not a non-negative integer")
    return int(text)
