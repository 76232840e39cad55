"""Whole numbers as users write them, read only when they can be in range.

Python's int() refuses strings of more than 4,300 digits (a guard against
quadratic conversion), and numbers even of 20 digits mean nothing to
rankwise: every caller names the largest value it takes, and a longer
number is refused by its length before any conversion."""

from __future__ import annotations

import math
import re

_DECIMAL = re.compile(r"[+-]?[0-9]+")  # int() alone would also take '1_0' and non-ASCII digits


class OutOfRange(ValueError):
    """A well-formed whole number whose magnitude is beyond the caller's maximum."""


def bounded_int(text: str, maximum: int) -> int:
    """int(text) for ASCII decimal digits with an optional sign, whose
    magnitude is at most `maximum`; OutOfRange when it is larger,
    ValueError when it is not a whole number."""
    if not _DECIMAL.fullmatch(text):
        raise ValueError("not a whole number")
    digits = text.lstrip("+-").lstrip("0") or "0"
    if len(digits) > len(str(maximum)) or int(digits) > maximum:
        raise OutOfRange(f"beyond {maximum}")
    return int(text[0] + digits) if text[0] == "-" else int(digits)


def shown(text: str, width: int = 24) -> str:
    """A user's value for a one-line message: cut (a 4,000-digit number is
    not), and with line breaks, control characters and undecodable bytes
    escaped as Python would write them (a CR would rewrite the line)."""
    cut = text if len(text) <= width else f"{text[:width]}... ({len(text)} characters)"
    if cut.isprintable():
        return cut
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in cut)


_FLOAT = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]{1,4})?")  # no nan, inf, 1_0, 0x1p3


def finite_float(text: str) -> float:
    """float(text) for a finite decimal number (as users write them: 3.2e-9, .5);
    ValueError 'not a finite number' for nan, inf, 1e999 and anything else.
    The one reader of real numbers from users' text (options, specs, files)."""
    t = text.strip()
    if not _FLOAT.fullmatch(t):
        raise ValueError("not a finite number")
    value = float(t)
    if not math.isfinite(value):
        raise ValueError("not a finite number")
    return value


def check_finite(value: float) -> float:
    """`value` itself when finite (an option typer parsed, a number from a file's
    JSON); ValueError 'not a finite number' for NaN and infinities."""
    if not math.isfinite(value):
        raise ValueError("not a finite number")
    return value
