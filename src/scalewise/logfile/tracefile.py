"""Read and write trace files, ``.swtrace`` (docs/trace-format.md is the normative description),
and find the trace a command is pointed at."""

from __future__ import annotations

import mmap
import os
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from scalewise.errors import ScalewiseError
from scalewise.logfile import varint
from scalewise.logfile.layout import MAGIC as LOG_MAGIC
from scalewise.model.trace import COLUMNS, RankEvents, Trace

MAGIC = b"SWTRACE\0"
VERSION = 1
CAPPED = 1  # file and rank flag: recording stopped at the memory cap
_HEADER = struct.Struct("<8sHHIII")  # magic, version, flags, nranks, nfuncs, ncomms
_RANK = struct.Struct("<IIQQQ")  # rank, flags, nevents, nwaitreqs, compressed length


def _encode_rank(rank: int, ev: RankEvents) -> bytes:
    c = ev.columns
    req = c["req"].astype(np.int64)
    created = req >= 0
    prev = np.concatenate(([-1], req[created][:-1]))
    req_code = np.zeros(len(req), dtype=np.uint64)
    req_code[created] = varint.zigzag(req[created] - prev - 1) + np.uint64(1)
    peer = c["peer"].astype(np.int64)
    peer_code = np.where(peer >= 0, varint.zigzag(peer - rank) + np.uint64(1), np.uint64(0))
    waits = ev.wait_reqs.astype(np.int64)
    parts = [
        c["kind"].astype(np.uint8).tobytes(),
        varint.encode(c["func"]),
        varint.encode(peer_code),
        varint.encode(c["bytes"]),
        varint.encode(varint.zigzag(c["tag"])),
        varint.encode(c["comm"]),
        varint.encode(req_code),
        varint.encode(c["root"].astype(np.int64) + 1),
        c["flags"].astype(np.uint8).tobytes(),
        varint.encode(c["nreq"]),
        varint.encode(np.rint(c["compute"] * 1e9).astype(np.uint64)),
        varint.encode(varint.zigzag(np.diff(np.concatenate(([-1], waits))))),
    ]
    return zlib.compress(b"".join(parts), 6)


def _decode_rank(rank: int, n: int, nwait: int, raw: bytes, where: str) -> RankEvents:
    try:
        buf = np.frombuffer(zlib.decompress(raw), dtype=np.uint8)
    except zlib.error as err:
        raise ScalewiseError(f"{where}: rank {rank}: compressed events are damaged ({err})") from None
    pos = 0

    def raw_bytes(name):
        nonlocal pos
        if pos + n > len(buf):
            raise ScalewiseError(f"{where}: rank {rank}: column '{name}' is cut short")
        out = buf[pos:pos + n].copy()
        pos += n
        return out

    def column(name, count=n):
        nonlocal pos
        values, pos = varint.decode(buf, pos, count, f"{where}: rank {rank}: column '{name}'")
        return values

    cols = {"kind": raw_bytes("kind"), "func": column("func"), "peer": column("peer"), "bytes": column("bytes"),
            "tag": varint.unzigzag(column("tag")), "comm": column("comm"), "req": column("req"),
            "root": column("root").astype(np.int64) - 1, "flags": raw_bytes("flags"), "nreq": column("nreq"),
            "compute": column("compute").astype(np.float64) * 1e-9}
    waits = np.cumsum(varint.unzigzag(column("wait requests", nwait))) - 1
    peer = cols["peer"]
    cols["peer"] = np.where(peer > 0, varint.unzigzag(peer - np.uint64(1)) + rank, -1)
    code = cols["req"]
    created = code > 0
    deltas = varint.unzigzag(code[created] - np.uint64(1)) + 1
    req = np.full(n, -1, dtype=np.int64)
    req[created] = np.cumsum(deltas) - 1
    cols["req"] = req
    if pos != len(buf):
        raise ScalewiseError(f"{where}: rank {rank}: {len(buf) - pos} bytes after the last column")
    return RankEvents({k: np.asarray(cols[k]).astype(t) for k, t in COLUMNS.items()}, waits.astype(np.int64))


def _table(data: bytes) -> bytes:
    body = zlib.compress(data, 6)
    return struct.pack("<I", len(body)) + body


def encode_trace(trace: Trace) -> bytes:
    """The file image of ``trace``."""
    comm_ids = sorted(trace.comms)
    comm_codes = []
    for cid in comm_ids:
        m = trace.comms[cid].astype(np.int64)
        comm_codes += [varint.encode([cid, len(m)]), varint.encode(varint.zigzag(np.diff(np.concatenate(([-1], m)))))]
    out = [_HEADER.pack(MAGIC, VERSION, CAPPED if trace.capped else 0, trace.nranks, len(trace.functions),
                        len(comm_ids)),
           _table("\n".join(trace.functions).encode()), _table(b"".join(comm_codes))]
    for rank, ev in enumerate(trace.ranks):
        body = _encode_rank(rank, ev)
        out += [_RANK.pack(rank, 0, len(ev), len(ev.wait_reqs), len(body)), body]
    return b"".join(out)


def write_trace(trace: Trace, path: str | Path) -> int:
    """Write ``trace``; returns the file's size in bytes."""
    data = trace.image if isinstance(trace, FileTrace) else encode_trace(trace)
    Path(path).write_bytes(data)
    return len(data)


@dataclass
class Directory:
    """Where each rank's block sits in a trace file's image (read from the block headers)."""

    payload: np.ndarray  # offset of the compressed payload
    payload_len: np.ndarray
    nevents: np.ndarray
    nwait: np.ndarray


class FileTrace(Trace):
    """A trace read from a file.  Its rank blocks stay compressed in ``image``
    (``directory`` says where each one is): the replay engine decodes them
    itself, and ``ranks`` decodes them into columns only when asked."""

    def __init__(self, functions: list[str], comms: dict[int, np.ndarray], capped: bool, image: bytes | mmap.mmap,
                 directory: Directory, where: str):
        self.functions, self.comms, self.capped = functions, comms, capped
        self.image, self.directory, self.where = image, directory, where
        self._ranks: list[RankEvents] | None = None

    @property
    def ranks(self) -> list[RankEvents]:  # type: ignore[override]
        if self._ranks is None:
            d = self.directory
            self._ranks = [_decode_rank(r, int(d.nevents[r]), int(d.nwait[r]),
                                        self.image[int(d.payload[r]):int(d.payload[r] + d.payload_len[r])],
                                        self.where) for r in range(len(d.nevents))]
        return self._ranks

    @property
    def nranks(self) -> int:
        return len(self.directory.nevents)

    @property
    def nevents(self) -> int:
        return int(self.directory.nevents.sum())


# A trace file at least this large is mapped rather than read: its pages are then the page cache's own, not a
# copy in fresh memory (which the kernel zeroes first).  The file must not be rewritten while its trace is in use.
MAP_FROM = 64 << 20


def _file_bytes(path: Path) -> bytes | mmap.mmap:
    with open(path, "rb") as f:
        if os.fstat(f.fileno()).st_size < max(MAP_FROM, 1):  # an empty file cannot be mapped
            return f.read()
        return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)


def read_trace(path: str | Path) -> FileTrace:
    """A Trace from a file; damage or a foreign file is a one-line ScalewiseError."""
    path = Path(path)
    try:
        data = _file_bytes(path)
    except OSError as err:
        raise ScalewiseError(f"{path}: cannot read: {err.strerror}") from None
    where = str(path)
    if data[:len(LOG_MAGIC)] == LOG_MAGIC:
        beside = path.with_suffix(".swtrace")
        found = beside != path and beside.is_file()
        hint = f"its trace is {beside}" if found else "record a trace with scalewise run --trace"
        raise ScalewiseError(f"{where}: a scalewise job log, not a trace; {hint}")
    return _parse(data, where)


def _parse(data: bytes | mmap.mmap, where: str) -> FileTrace:
    """Header, tables and the rank blocks' places; the blocks stay compressed."""
    if len(data) < _HEADER.size or data[:8] != MAGIC:
        raise ScalewiseError(f"{where}: not a scalewise trace (bad magic)")
    _, version, flags, nranks, nfuncs, ncomms = _HEADER.unpack_from(data)
    if version != VERSION:
        raise ScalewiseError(f"{where}: trace format version {version} is not supported (this reader: {VERSION})")
    pos = _HEADER.size

    def table() -> bytes:
        nonlocal pos
        if pos + 4 > len(data):
            raise ScalewiseError(f"{where}: truncated at byte {pos} (table header)")
        (size,) = struct.unpack_from("<I", data, pos)
        try:
            body = zlib.decompress(data[pos + 4:pos + 4 + size])
        except zlib.error:
            raise ScalewiseError(f"{where}: damaged table at byte {pos}") from None
        pos += 4 + size
        return body

    names = table().decode().split("\n") if nfuncs else []
    if len(names) != nfuncs:
        raise ScalewiseError(f"{where}: {nfuncs} function names announced, {len(names)} found")
    comm_buf = np.frombuffer(table(), dtype=np.uint8)
    comms, cpos = {}, 0
    for _ in range(ncomms):
        (cid, size), cpos = varint.decode(comm_buf, cpos, 2, f"{where}: communicator table")
        deltas, cpos = varint.decode(comm_buf, cpos, int(size), f"{where}: communicator {int(cid)}")
        comms[int(cid)] = np.cumsum(varint.unzigzag(deltas)) - 1
    fields = np.zeros((nranks, 4), dtype=np.int64)  # payload offset, length, events, wait requests
    for expect in range(nranks):
        if pos + _RANK.size > len(data):
            raise ScalewiseError(f"{where}: truncated at byte {pos}: rank {expect} of {nranks} is missing")
        rank, rflags, n, nwait, size = _RANK.unpack_from(data, pos)
        if rank != expect:
            raise ScalewiseError(f"{where}: byte {pos}: rank {rank} found where rank {expect} belongs")
        pos += _RANK.size
        if pos + size > len(data):
            raise ScalewiseError(f"{where}: truncated at byte {len(data)} inside rank {rank}'s events")
        fields[expect] = (pos, size, n, nwait)
        flags |= rflags & CAPPED
        pos += size
    directory = Directory(*(np.ascontiguousarray(fields[:, i]) for i in range(4)))
    return FileTrace(names, comms, bool(flags & CAPPED), data, directory, where)


def image_of(trace: Trace) -> FileTrace:
    """``trace`` as its file image would read back (the form the replay engine takes)."""
    if isinstance(trace, FileTrace):
        return trace
    return _parse(encode_trace(trace), "trace")


def find_trace(source: Path) -> Path:
    """The trace named, the trace beside a job log named, or the one trace in a run directory
    (``scalewise run --trace -o DIR``)."""
    if not source.exists():
        raise ScalewiseError(f"{source}: no such file or directory")
    if source.is_file() and source.suffix == ".swlog":
        beside = source.with_suffix(".swtrace")
        if not beside.is_file():
            raise ScalewiseError(f"{source}: a job log with no trace {beside.name} beside it "
                                 "(record with scalewise run --trace)")
        return beside
    if source.is_file():
        return source
    traces = sorted(source.glob("*.swtrace"))
    if len(traces) != 1:
        found = "no trace" if not traces else f"{len(traces)} traces ({', '.join(t.name for t in traces)})"
        raise ScalewiseError(f"{source}: {found}; name one .swtrace (record with scalewise run --trace)")
    return traces[0]
