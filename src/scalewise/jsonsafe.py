"""Plain JSON values out of analysis results: the one cleaning rule every JSON output uses."""

from __future__ import annotations

import math
from typing import Any


def json_safe(x: Any) -> Any:
    """A JSON-ready copy: numpy scalars become Python numbers, NaN and infinities become null,
    tuples and sets become lists, bytes become text."""
    if isinstance(x, dict):
        return {str(k): json_safe(v) for k, v in x.items()}
    if isinstance(x, (list, tuple, set, frozenset)):
        return [json_safe(v) for v in x]
    if hasattr(x, "item") and not isinstance(x, (str, bytes)):
        x = x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, bytes):
        return x.decode("utf-8", "replace")
    return x
