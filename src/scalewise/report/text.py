"""Formatting shared by the terminal summary and the HTML page: numbers in, strings out."""

from __future__ import annotations

import math
import shlex
from datetime import datetime, timezone
from typing import Any

from scalewise.analysis.sizes import human_bytes
from scalewise.model.profile import Profile

__all__ = ["human_bytes", "seconds", "pct", "ratio", "count", "when", "command_line", "app_name", "run_metadata"]


def _bad(x: Any) -> bool:
    return x is None or (isinstance(x, float) and not math.isfinite(x))


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


def ratio(x: float | None) -> str:
    return "n/a" if _bad(x) else f"{x:.2f}"


def count(x: float | None) -> str:
    return "n/a" if _bad(x) else f"{int(x):,}"


def when(epoch: float | None) -> str:
    """Epoch seconds as a UTC date and time; the log stores no time zone of its own."""
    if _bad(epoch) or not epoch:
        return "unknown"
    return datetime.fromtimestamp(float(epoch), tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def command_line(profile: Profile) -> str:
    cmd = profile.meta.get("command") or []
    if isinstance(cmd, str):
        return cmd
    return shlex.join(str(c) for c in cmd) if cmd else "(unknown)"


def app_name(profile: Profile) -> str:
    cmd = profile.meta.get("command") or []
    first = cmd if isinstance(cmd, str) else (cmd[0] if cmd else "")
    return str(first).rsplit("/", 1)[-1] or "MPI job"


def _hosts(profile: Profile) -> list[str]:
    hosts = profile.meta.get("hosts")
    if hosts:
        return [str(h) for h in hosts]
    return sorted({str(h) for h in profile.ranks["host"]}) if not profile.ranks.empty else []


def run_metadata(profile: Profile) -> list[tuple[str, str]]:
    """(label, value) rows describing the job, in display order."""
    hosts = _hosts(profile)
    shown = ", ".join(hosts[:8]) + (f", ... ({len(hosts) - 8} more)" if len(hosts) > 8 else "")
    start, end = profile.meta.get("start_time"), profile.meta.get("end_time")
    rows = [
        ("command", command_line(profile)),
        ("ranks", f"{profile.nranks:,}" + ("" if len(profile.ranks) == profile.nranks
                                         else f" ({len(profile.ranks):,} recorded)")),
        ("hosts", f"{len(hosts):,}: {shown}" if hosts else "unknown"),
        # MPICH's version string runs on with its whole configure line: its first line names it.
        ("MPI library", (str(profile.meta.get("mpi_library") or "unknown").strip().splitlines() or ["unknown"])[0]),
        *[(label, str(profile.meta[key])) for key, label in (("mpi_version", "MPI standard"),
                                                             ("thread_level", "thread level")) if profile.meta.get(key)],
        ("started", when(start)),
        ("ended", when(end)),
    ]
    if profile.meta.get("format") is not None:
        rows.append(("log format", str(profile.meta.get("format"))))
    if profile.path:
        rows.append(("log", str(profile.path)))
    return rows
