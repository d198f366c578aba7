"""The MPI_T section of a job log (format 1.2, docs/log-format.md "MPI_T"):
rank 0's status, flags, control variables in force and pvar descriptions,
then one record of performance-variable readings per rank block.  Checked
field by field like the rank records; problems raise ValueError."""

from __future__ import annotations

import math
import struct
from typing import TYPE_CHECKING

from scalewise.logfile import layout as L
from scalewise.logfile.cursor import Cursor
from scalewise.model.mpit import (PVAR_CLASSES, PVAR_COLUMNS, STATUS_OFF, STATUS_READ, STATUS_UNAVAILABLE, MpitInfo,
                                  reduce_values)

if TYPE_CHECKING:
    import pandas as pd

STATUSES = {L.MPIT_READ: STATUS_READ, L.MPIT_OFF: STATUS_OFF, L.MPIT_UNAVAILABLE: STATUS_UNAVAILABLE}
BINDINGS = {L.MPIT_BIND_NONE: "none", L.MPIT_BIND_WORLD: "comm_world"}


class _Cursor(Cursor):
    def text(self, cap: int, what: str, *, name: bool = False) -> str:
        (n,) = self.take("H")
        if n > cap or self.pos + n > len(self.raw):
            raise ValueError(f"{what} of {n} bytes is too long or runs past the section")
        raw = self.raw[self.pos:self.pos + n]
        self.pos += n
        if name:
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise ValueError(f"{what} is not valid UTF-8") from None
            if not text or not text.isprintable():
                raise ValueError(f"{what} is empty or holds control characters")
            return text
        # Descriptions and values are the library's free text: shown, never parsed.
        return "".join(c if c.isprintable() else " " for c in raw.decode("utf-8", errors="replace"))


def _named_texts(c: _Cursor, cap: int, what: str) -> dict[str, str]:
    """A u32 count, then that many (name, text) pairs: cvar values or pvar descriptions."""
    (n,) = c.take("I")
    if n * 4 > c.left():
        raise ValueError(f"{n} {what}s do not fit the section")
    out = {}
    for _ in range(n):
        key = c.text(L.MPIT_MAX_NAME, f"a {what}'s name", name=True)
        out[key] = c.text(cap, f"{what} {key}'s text")
    return out


def _head(c: _Cursor) -> MpitInfo:
    status, flags = c.take("II")
    if status not in STATUSES or flags & ~(L.MPIT_PVARS_CAPPED | L.MPIT_CVARS_CAPPED):
        raise ValueError(f"unknown status {status} or flags {flags:#x}")
    cvars = _named_texts(c, L.MPIT_MAX_VALUE, "control variable")
    descriptions = _named_texts(c, L.MPIT_MAX_DESC, "performance variable")
    return MpitInfo(status=STATUSES[status], pvars_capped=bool(flags & L.MPIT_PVARS_CAPPED),
                    cvars_capped=bool(flags & L.MPIT_CVARS_CAPPED),
                    cvars=cvars, descriptions=descriptions)


def _values(c: _Cursor, kind: int, count: int, where: str) -> tuple:
    if kind == L.MPIT_U64:
        values = c.take(f"{count}Q")
        if any(v >> 63 for v in values):
            raise ValueError(f"{where}: a value of 2^63 or more")
        return values
    values = c.take(f"{count}d")
    if not all(math.isfinite(v) for v in values):
        raise ValueError(f"{where}: a value that is not a finite number")
    return values


def parse_mpit(order: str, raw: bytes, blocks: set[int]) -> tuple[MpitInfo, pd.DataFrame]:
    """The section's head and its pvar rows (PVAR_COLUMNS) as a frame; raises ValueError."""
    import pandas as pd  # here: the summary's lean path takes the rows (parse_mpit_rows)

    info, rows = parse_mpit_rows(order, raw, blocks)
    return info, pd.DataFrame(rows, columns=PVAR_COLUMNS)


def parse_mpit_rows(order: str, raw: bytes, blocks: set[int]) -> tuple[MpitInfo, list[tuple]]:
    """The section's head and its pvar rows (PVAR_COLUMNS' order); raises ValueError."""
    c, rows, seen = _Cursor(order, raw), [], set()
    try:
        info = _head(c)
        while c.pos < len(raw):
            rank, flags, npvars = c.take("III")
            if rank not in blocks or rank in seen or flags & ~L.MPIT_PVARS_CAPPED:
                raise ValueError(f"rank {rank} listed twice, without a rank block, or with unknown flags")
            seen.add(rank)
            names = set()
            for _ in range(npvars):
                name = c.text(L.MPIT_MAX_NAME, f"rank {rank}: a variable's name", name=True)
                cls, kind, bind, reserved, count = c.take("BBBBI")
                where = f"rank {rank}, variable {name}"
                if name in names or cls >= len(PVAR_CLASSES) or kind not in (L.MPIT_U64, L.MPIT_F64) \
                        or bind not in BINDINGS or reserved or not 1 <= count <= L.MPIT_MAX_VALUES:
                    raise ValueError(f"{where}: listed twice, or class, kind, binding or count out of range")
                names.add(name)
                values = _values(c, kind, count, where)
                pclass = PVAR_CLASSES[cls]
                rows.append((rank, name, pclass, BINDINGS[bind], reduce_values(pclass, values), values))
    except struct.error:
        raise ValueError("a record ends early") from None
    return info, rows
