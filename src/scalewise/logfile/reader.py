"""Read a scalewise job log (docs/log-format.md) into a Profile.

Every problem with the file (foreign, truncated, corrupt, newer major
version) raises LogFormatError with one line naming the file and the problem.
Unknown sections (a newer minor version) are skipped.
"""

from __future__ import annotations

import json
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from scalewise.errors import LogFormatError
from scalewise.logfile import layout as L
from scalewise.model.profile import FUNCTION_COLUMNS, HIST_COLUMNS, P2P_COLUMNS, RANK_COLUMNS, Profile, bin_bounds


@dataclass
class _Section:
    ident: int
    version: int
    flags: int
    data: bytes


class _Reader:
    def __init__(self, path: Path, data: bytes):
        self.path, self.data = path, data

    def fail(self, problem: str) -> LogFormatError:
        return LogFormatError(f"{self.path}: {problem}")

    def header(self) -> tuple[str, tuple]:
        d = self.data
        if len(d) < len(L.MAGIC) or d[:len(L.MAGIC)] != L.MAGIC:
            raise self.fail("not a scalewise log (bad magic number)")
        if len(d) < L.HEADER_SIZE:
            raise self.fail(f"truncated: {len(d)} bytes, shorter than the {L.HEADER_SIZE}-byte header")
        for order in "<>":
            if struct.unpack_from(order + "I", d, 8)[0] == L.BYTE_ORDER_MARK:
                break
        else:
            raise self.fail("corrupt header (unknown byte-order mark)")
        h = struct.unpack_from(order + L.HEADER, d, 0)
        major, minor, size = h[2], h[3], h[8]
        if major > L.FORMAT_MAJOR:
            raise self.fail(f"format {major}.{minor} is newer than this scalewise reads "
                            f"({L.FORMAT_MAJOR}.x); upgrade scalewise")
        if major < 1:
            raise self.fail(f"format {major}.{minor} is not supported")
        if len(d) < size:
            raise self.fail(f"truncated: {len(d)} of {size} bytes present")
        if len(d) > size:
            raise self.fail(f"corrupt: {len(d) - size} unexpected bytes after the end of the log")
        return order, h

    def sections(self, order: str, h: tuple) -> dict[int, _Section]:
        nsec, crc = h[7], h[9]
        table_end = L.HEADER_SIZE + nsec * L.SECTION_ENTRY_SIZE
        if table_end > len(self.data):
            raise self.fail("corrupt header (section table runs past the end of the file)")
        table = self.data[L.HEADER_SIZE:table_end]
        if zlib.crc32(table, zlib.crc32(self.data[:40])) != crc:
            raise self.fail("corrupt header (checksum mismatch)")
        out = {}
        for i in range(nsec):
            ident, version, flags, off, size, scrc, _ = struct.unpack_from(order + L.SECTION_ENTRY, table, i * L.SECTION_ENTRY_SIZE)
            name = L.SECTION_NAMES.get(ident, f"#{ident}")
            if off + size > len(self.data):
                raise self.fail(f"corrupt section '{name}' (runs past the end of the file)")
            raw = self.data[off:off + size]
            if zlib.crc32(raw) != scrc:
                raise self.fail(f"corrupt section '{name}' (checksum mismatch)")
            if flags & L.SECTION_COMPRESSED:
                raw = self.inflate(raw, f"section '{name}'")
            out[ident] = _Section(ident, version, flags, raw)
        for ident in (L.SEC_META, L.SEC_FUNCTIONS, L.SEC_RANK_INDEX, L.SEC_RANKS):
            if ident not in out:
                raise self.fail(f"corrupt: section '{L.SECTION_NAMES[ident]}' is missing")
        return out

    def inflate(self, raw: bytes, what: str) -> bytes:
        try:
            return zlib.decompress(raw)
        except zlib.error as exc:
            raise self.fail(f"corrupt {what} ({exc})") from None


def _functions(r: _Reader, raw: bytes) -> list[tuple[str, str]]:
    parts = raw.split(b"\0")
    if parts and parts[-1] == b"":
        parts.pop()
    if len(parts) % 2:
        raise r.fail("corrupt section 'functions' (odd number of strings)")
    return [(parts[i].decode(), parts[i + 1].decode()) for i in range(0, len(parts), 2)]


def _parse_rank(r: _Reader, order: str, blob: bytes, names: list[tuple[str, str]], rows: dict[str, list]) -> None:
    fixed = struct.Struct(order + L.RANK_FIXED)
    fn_fixed = struct.Struct(order + L.FUNCTION_FIXED)
    bin_entry = struct.Struct(order + L.BIN_ENTRY)
    peer = struct.Struct(order + L.PEER_ENTRY)
    u16, u32 = struct.Struct(order + "H"), struct.Struct(order + "I")
    rank, flags, pid, nthreads, wall, mpi, _init, rss = fixed.unpack_from(blob, 0)
    pos = fixed.size
    (hlen,) = u16.unpack_from(blob, pos)
    host = blob[pos + 2:pos + 2 + hlen].decode(errors="replace")
    pos += 2 + hlen
    (nfn,) = u32.unpack_from(blob, pos)
    pos += 4
    rows["ranks"].append((rank, host, pid, wall / 1e9, mpi / 1e9, (wall - mpi) / 1e9, rss, nthreads,
                          bool(flags & L.RANK_PARTIAL)))
    for _ in range(nfn):
        fn, nbins, calls, t, tmin, tmax, nbytes = fn_fixed.unpack_from(blob, pos)
        pos += fn_fixed.size
        if fn >= len(names):
            raise r.fail(f"corrupt rank {rank} record (function id {fn} not in the function table)")
        name, fclass = names[fn]
        rows["functions"].append((rank, name, fclass, calls, t / 1e9, tmin / 1e9, tmax / 1e9, nbytes))
        for _ in range(nbins):
            b, count = bin_entry.unpack_from(blob, pos)
            pos += bin_entry.size
            lo, hi = bin_bounds(b)
            rows["hist"].append((rank, name, b, lo, hi, count))
    (npeer,) = u32.unpack_from(blob, pos)
    pos += 4
    for _ in range(npeer):
        dst, msgs, nbytes = peer.unpack_from(blob, pos)
        pos += peer.size
        rows["p2p"].append((rank, dst, msgs, nbytes))
    if pos != len(blob):
        raise r.fail(f"corrupt rank {rank} record ({len(blob) - pos} bytes left over)")


def read_profile(path) -> Profile:
    """Parse the log at ``path``; raise LogFormatError on any problem."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise LogFormatError(f"{p}: cannot read ({exc.strerror})") from None
    r = _Reader(p, data)
    order, h = r.header()
    secs = r.sections(order, h)
    try:
        meta = json.loads(secs[L.SEC_META].data.decode("utf-8", errors="replace"))
    except json.JSONDecodeError as exc:
        raise r.fail(f"corrupt section 'meta' ({exc.msg})") from None
    names = _functions(r, secs[L.SEC_FUNCTIONS].data)
    index, blocks = secs[L.SEC_RANK_INDEX].data, secs[L.SEC_RANKS].data
    nblocks = h[6]
    if len(index) != nblocks * L.RANK_INDEX_ENTRY_SIZE:
        raise r.fail("corrupt section 'rank index' (size does not match the number of ranks)")
    rows: dict[str, list] = {"ranks": [], "functions": [], "hist": [], "p2p": []}
    entry = struct.Struct(order + L.RANK_INDEX_ENTRY)
    for i in range(nblocks):
        rank, _flags, off, size, raw_size = entry.unpack_from(index, i * entry.size)
        if off + size > len(blocks):
            raise r.fail(f"corrupt rank {rank} block (outside the ranks section)")
        blob = r.inflate(blocks[off:off + size], f"rank {rank} block")
        if len(blob) != raw_size:
            raise r.fail(f"corrupt rank {rank} block (size mismatch)")
        try:
            _parse_rank(r, order, blob, names, rows)
        except struct.error:
            raise r.fail(f"corrupt rank {rank} record (ends early)") from None
    flags = set()
    if h[4] & L.LOG_PARTIAL:
        flags.add("partial")
    if h[4] & L.LOG_ABORTED:
        flags.add("aborted")
    meta.setdefault("nranks", h[5])
    meta["ranks_present"] = nblocks
    meta["hosts"] = sorted({row[1] for row in rows["ranks"]})
    return Profile(
        meta=meta,
        ranks=pd.DataFrame(rows["ranks"], columns=RANK_COLUMNS),
        functions=pd.DataFrame(rows["functions"], columns=FUNCTION_COLUMNS),
        hist=pd.DataFrame(rows["hist"], columns=HIST_COLUMNS),
        p2p=pd.DataFrame(rows["p2p"], columns=P2P_COLUMNS),
        path=str(p),
        flags=frozenset(flags),
    )
