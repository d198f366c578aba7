"""Numbers in, strings out: the one set of formatters for sizes, times, shares and counts.

Finding sentences, the terminal summary and both HTML pages all print through
these, so a value reads the same everywhere.  A missing or non-finite value
prints as ``n/a``.
"""

from __future__ import annotations

import math
from datetime import datetime, timezone
from typing import Any

_UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"]


def _bad(x: Any) -> bool:
    return x is None or (isinstance(x, float) and not math.isfinite(x))


def human_bytes(n: float) -> str:
    """Bytes in binary units with at most 3 significant digits: 65536 -> '64 KiB'."""
    n = float(n)
    if not math.isfinite(n):
        return "n/a"
    unit = 0
    while abs(n) >= 1024 and unit < len(_UNITS) - 1:
        n /= 1024.0
        unit += 1
    if unit == 0:
        return f"{int(round(n))} B"
    text = f"{n:.3g}"
    if "e" in text:  # 3 significant digits of e.g. 1000 KiB print as 1e+03
        text = f"{n:.0f}"
    return f"{text} {_UNITS[unit]}"


def seconds(x: float | None) -> str:
    if _bad(x):
        return "n/a"
    if x == 0:
        return "0 s"
    if abs(x) < 1e-3:
        return f"{x * 1e6:.3g} us"
    if abs(x) < 1:
        return f"{x * 1e3:.3g} ms"
    return f"{x:,.3f} s" if abs(x) < 1000 else f"{x:,.0f} s"


def pct(x: float | None, digits: int = 1) -> str:
    return "n/a" if _bad(x) else f"{x:.{digits}f}%"


def short_pct(x: float) -> str:
    """A share in a sentence: whole percent from 10% up, one decimal below."""
    return f"{x:.0f}%" if abs(x) >= 10 or x == 0 else f"{x:.1f}%"


def ratio(x: float | None) -> str:
    return "n/a" if _bad(x) else f"{x:.2f}"


def count(x: float | None) -> str:
    return "n/a" if _bad(x) else f"{int(x):,}"


def num(x: float | None) -> str:
    """A value of any unit: 4 significant digits, thousands grouped, no decimals from 10,000 up."""
    if _bad(x):
        return "n/a"
    return f"{x:,.4g}" if abs(x) < 1e4 else f"{x:,.0f}"


def when(epoch: float | None) -> str:
    """Epoch seconds as a UTC date and time; the log stores no time zone of its own."""
    if _bad(epoch) or not epoch:
        return "unknown"
    return datetime.fromtimestamp(float(epoch), tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def plural(n: float, word: str, many: str | None = None) -> str:
    """'1 run', '2 runs', '1.5 peers': the count with the word in the right number."""
    return f"{n:g} {word if n == 1 else (many or word + 's')}"


# C0 and C1 controls, DEL, and the bidirectional overrides that can make a
# terminal line read differently from what it contains.
_CONTROLS = {c for c in range(0x20)} | set(range(0x7F, 0xA0)) | set(range(0x202A, 0x202F)) | set(range(0x2066, 0x206A))
_VISIBLE = {c: (f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}") for c in _CONTROLS}
_VISIBLE.update({ord("\t"): "\\t", ord("\n"): "\\n", ord("\r"): "\\r"})


def terminal_text(value: object, limit: int = 2000) -> str:
    """A value from an application, safe to print: control characters (escape sequences
    included) shown as ``\\x1b``, and at most ``limit`` characters, the rest counted."""
    text = str(value)
    cut = len(text) - limit
    text = text[:limit].translate(_VISIBLE)
    return text + (f"... ({cut:,} more characters)" if cut > 0 else "")
