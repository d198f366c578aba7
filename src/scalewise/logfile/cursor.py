"""Reading a decompressed section field after field, in the writer's byte
order (the timeline and MPI_T sections); a short read raises struct.error,
which each parser turns into its "ends early" message."""

from __future__ import annotations

import struct


class Cursor:
    def __init__(self, order: str, raw: bytes):
        self.order, self.raw, self.pos = order, raw, 0

    def take(self, fmt: str) -> tuple:
        s = struct.Struct(self.order + fmt)
        out = s.unpack_from(self.raw, self.pos)
        self.pos += s.size
        return out

    def left(self) -> int:
        return len(self.raw) - self.pos
