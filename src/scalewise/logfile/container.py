"""The log's container (docs/log-format.md): header, section table and each
section's checksum, version and flags, checked without parsing any section.

Its one decoder, used by the reader (reader.py) before it parses sections,
and alone where only the header's counts are needed (``scalewise run
--quiet``): it imports nothing of the analysis stack (numpy, pandas).
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

from scalewise.errors import LogFormatError
from scalewise.logfile import layout as L


class ContainerReader:
    """The bytes of one log, named ``path`` in every message; each check raises LogFormatError."""

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
        if h[7] > L.MAX_SECTIONS:
            raise self.fail(f"corrupt header ({h[7]} sections, more than {L.MAX_SECTIONS})")
        return order, h

    def check_counts(self, h: tuple) -> None:
        """Header fields the checksum cannot vouch for (call after it matched)."""
        flags, nranks, nblocks = h[4], h[5], h[6]
        if flags & ~(L.LOG_PARTIAL | L.LOG_ABORTED):
            raise self.fail(f"corrupt header (unknown flags {flags:#x})")
        if not 1 <= nranks <= L.MAX_RANKS:
            raise self.fail(f"corrupt header (nranks {nranks} out of range 1..{L.MAX_RANKS})")
        if nblocks > nranks:
            raise self.fail(f"corrupt header ({nblocks} rank blocks for {nranks} ranks)")
        if nblocks < nranks and not flags & L.LOG_PARTIAL:
            raise self.fail(f"corrupt header ({nblocks} rank blocks for {nranks} ranks, "
                            "but the log is not marked partial)")

    def sections(self, order: str, h: tuple) -> dict[int, bytes]:
        """Stored bytes of each known section, checked against its checksum, version and flags."""
        nsec, crc = h[7], h[9]
        table_end = L.HEADER_SIZE + nsec * L.SECTION_ENTRY_SIZE
        if table_end > len(self.data):
            raise self.fail("corrupt header (section table runs past the end of the file)")
        table = self.data[L.HEADER_SIZE:table_end]
        if zlib.crc32(table, zlib.crc32(self.data[:40])) != crc:
            raise self.fail("corrupt header (checksum mismatch)")
        self.check_counts(h)
        out = {}
        for i in range(nsec):
            ident, version, flags, off, size, scrc, _ = struct.unpack_from(order + L.SECTION_ENTRY, table, i * L.SECTION_ENTRY_SIZE)
            name = L.SECTION_NAMES.get(ident, f"#{ident}")
            if off < table_end or off + size > len(self.data):
                raise self.fail(f"corrupt section '{name}' (lies outside the file's data)")
            if ident not in L.SECTION_NAMES:
                continue  # a newer minor version's section: skipped unread
            if ident in out:
                raise self.fail(f"corrupt section table (section '{name}' listed twice)")
            # The rank records are the bulk of the file: a view, not a second copy of them.
            raw = memoryview(self.data)[off:off + size] if ident == L.SEC_RANKS else self.data[off:off + size]
            if zlib.crc32(raw) != scrc:
                raise self.fail(f"corrupt section '{name}' (checksum mismatch)")
            if version != L.SECTION_VERSION:
                raise self.fail(f"section '{name}' has layout version {version}; this scalewise reads "
                                f"version {L.SECTION_VERSION}")
            if flags != L.SECTION_FLAGS[ident]:
                raise self.fail(f"corrupt section '{name}' (flags {flags:#x}, expected {L.SECTION_FLAGS[ident]:#x})")
            out[ident] = raw
        for ident in L.REQUIRED_SECTIONS:
            if ident not in out:
                raise self.fail(f"corrupt: section '{L.SECTION_NAMES[ident]}' is missing")
        return out

    def inflate(self, raw: bytes, limit: int, what: str) -> bytes:
        """One zlib stream that fills ``raw`` exactly, inflated to at most ``limit`` bytes."""
        z = zlib.decompressobj()
        try:
            out = z.decompress(raw, limit + 1)
        except zlib.error as exc:
            raise self.fail(f"corrupt {what} ({exc})") from None
        if len(out) > limit:
            raise self.fail(f"corrupt {what} (inflates to more than {limit:,} bytes)")
        if not z.eof:
            raise self.fail(f"corrupt {what} (compressed data ends early)")
        if z.unused_data:
            raise self.fail(f"corrupt {what} ({len(z.unused_data)} bytes after the compressed data)")
        return out

    def section_text(self, secs: dict[int, bytes], ident: int, limit: int, parse):
        name = L.SECTION_NAMES[ident]
        try:
            return parse(self.inflate(secs[ident], limit, f"section '{name}'"))
        except ValueError as exc:
            raise self.fail(f"corrupt section '{name}' ({exc})") from None


def open_log(path, data: bytes | None = None) -> ContainerReader:
    """A reader of the log at ``path`` (or of ``data``, named ``path``); an unreadable file is a LogFormatError."""
    p = Path(path)
    try:
        return ContainerReader(p, p.read_bytes() if data is None else data)
    except OSError as exc:
        raise LogFormatError(f"{p}: cannot read ({exc.strerror})") from None


def read_container(path, data: bytes | None = None) -> tuple[str, tuple, dict[int, bytes]]:
    """The byte order, the header fields (layout.HEADER order) and the stored bytes of each known
    section of the log at ``path`` (or of ``data``, named ``path``), all checked; no section is parsed."""
    r = open_log(path, data)
    order, h = r.header()
    return order, h, {k: bytes(v) for k, v in r.sections(order, h).items()}


def log_counts(path) -> tuple[int, bool]:
    """The world size and whether the log is partial (as a Profile's ``nranks`` and
    ``partial``), from the header and the rank index of the log at ``path`` once its
    whole container is checked (every section's checksum); no rank record is inflated."""
    r = open_log(path)
    order, h = r.header()
    index = r.sections(order, h)[L.SEC_RANK_INDEX]
    if len(index) != h[6] * L.RANK_INDEX_ENTRY_SIZE:
        raise r.fail("corrupt section 'rank index' (size does not match the number of ranks)")
    ranks_partial = any(flags & L.RANK_PARTIAL for _, flags, *_ in struct.iter_unpack(order + L.RANK_INDEX_ENTRY, index))
    return h[5], bool(h[4] & L.LOG_PARTIAL) or ranks_partial
