"""Reports as JSON: dataclasses, numpy values and tuples made plain, and
NaN or infinity (which JSON has not) made null."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np


def jsonable(value):
    """value with every dataclass a dict, every tuple or array a list, every
    numpy scalar a Python one, and every non-finite float None."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.generic):
        return jsonable(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def dumps(kind: str, payload) -> str:
    """One JSON document: {"format": "rankwise-<kind>/1", ...payload}."""
    return json.dumps({"format": f"rankwise-{kind}/1", **jsonable(payload)}, indent=2, allow_nan=False)
