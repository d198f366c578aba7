"""Names for call sites: (object, offset) to function, file and line with
binutils' addr2line where the object is on this machine and has debug
information; otherwise the object and offset themselves (docs/runtime.md,
"Call sites").  One addr2line process per object, all its offsets at once."""

from __future__ import annotations

import shutil
import subprocess
from functools import cache
from pathlib import Path

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile

ADDR2LINE_TIMEOUT = 60


@cache
def _link_base(path: str) -> int:
    """Lowest PT_LOAD address: 0 for shared objects and PIE programs, the link
    address for fixed-address programs.  Offsets in the log are from the load
    base, addr2line wants link-time addresses."""
    with open(path, "rb") as fh:
        loads = [s["p_vaddr"] & ~(s["p_align"] - 1 if s["p_align"] else 0)
                 for s in ELFFile(fh).iter_segments() if s["p_type"] == "PT_LOAD"]
    return min(loads, default=0)


def _fallback(obj: str, offset: int) -> str:
    if not obj:
        return "(other call sites)" if offset == 0 else f"(unknown object)+{offset:#x}"
    return f"{Path(obj).name}+{offset:#x}"


def resolve(sites: list[tuple[str, int]]) -> dict[tuple[str, int], tuple[str, str]]:
    """(object, offset) -> (function, "file:line" or "object+offset")."""
    out: dict[tuple[str, int], tuple[str, str]] = {}
    by_object: dict[str, list[int]] = {}
    for obj, offset in sites:
        by_object.setdefault(obj, []).append(offset)
    tool = shutil.which("addr2line")
    for obj, offsets in by_object.items():
        names = _addr2line(tool, obj, offsets) if tool and obj else None
        for k, offset in enumerate(offsets):
            func, where = names[k] if names else ("??", "??:0")
            if where.startswith("??") or where.endswith(":0") or where.endswith(":?"):
                where = _fallback(obj, offset)
            out[(obj, offset)] = ("" if func == "??" else func, where)
    return out


def _addr2line(tool: str, obj: str, offsets: list[int]) -> list[tuple[str, str]] | None:
    try:
        base = _link_base(obj)
    except (OSError, ELFError):
        return None
    # A return address is the instruction after the call: look one byte back.
    addrs = [f"{base + max(off - 1, 0):#x}" for off in offsets]
    try:
        res = subprocess.run([tool, "-f", "-C", "-e", obj, *addrs], capture_output=True, text=True,
                             timeout=ADDR2LINE_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = res.stdout.splitlines()
    if res.returncode != 0 or len(lines) != 2 * len(offsets):
        return None
    # addr2line prints discriminators after the line: keep file:line only.
    return [(lines[2 * k], lines[2 * k + 1].split(" ")[0]) for k in range(len(offsets))]
