"""The rank records of a log as frames, parsed with numpy (blockpack.py) a slice of ranks at a time.

The slices bound the memory of the inflated records (a million-rank log's
records inflate to about 700 MiB); the frames hold the same rows, in the same
order and with the same types, as the field-by-field parser gives.  Anything
unexpected (a block that does not inflate to its stated size, a check that
fails) returns None: the reader then parses field by field and names the
problem.
"""

from __future__ import annotations

import zlib

import numpy as np
import pandas as pd

from scalewise.logfile import layout as L
from scalewise.logfile.blockpack import Unvouched, unpack_records
from scalewise.logfile.records import _text
from scalewise.model.profile import FUNCTION_COLUMNS, HIST_COLUMNS, P2P_COLUMNS, RANK_COLUMNS, bin_bounds

# Rank records inflated and parsed together.
SLICE_RANKS = 1 << 16
_LO = np.array([bin_bounds(b)[0] for b in range(L.NBINS)], dtype=np.int64)
_HI = np.array([bin_bounds(b)[1] for b in range(L.NBINS)], dtype=np.int64)


def _inflated(blocks: memoryview, part: list) -> bytes | None:
    out = []
    append, inflater = out.append, zlib.decompressobj
    for _rank, _flags, off, size, raw_size in part:
        z = inflater()
        try:
            blob = z.decompress(blocks[off:off + size], raw_size + 1)
        except zlib.error:
            return None
        if len(blob) != raw_size or not z.eof or z.unused_data:
            return None
        append(blob)
    return b"".join(out)


def _slice(order: str, blocks: memoryview, part: list, names: list, nranks: int, hosts: dict) -> dict | None:
    data = _inflated(blocks, part)
    if data is None:
        return None
    sizes = np.array([e[4] for e in part], dtype=np.int64)
    start = np.concatenate([[0], np.cumsum(sizes)])
    try:
        u = unpack_records(order, np.frombuffer(data, np.uint8), start, np.array([e[0] for e in part], np.uint32),
                           np.array([e[1] for e in part], np.uint32), names, nranks)
        for raw in set(u["host_raw"]) - hosts.keys():
            hosts[raw] = _text(raw, "host name")
    except (Unvouched, ValueError):
        return None
    fx = u["fixed"]
    rank = fx["rank"].astype(np.int64)
    wall, mpi = fx["wall"].astype(np.int64), fx["mpi"].astype(np.int64)
    cols = {"ranks": {"rank": rank, "host": [hosts[h] for h in u["host_raw"]], "pid": fx["pid"].astype(np.int64),
                      "wall": wall / 1e9, "mpi_time": mpi / 1e9, "compute_time": (wall - mpi) / 1e9,
                      "maxrss": fx["rss"].astype(np.int64), "nthreads": fx["nthreads"].astype(np.int64),
                      "partial": (fx["flags"] & L.RANK_PARTIAL) != 0}}
    if u["functions"] is not None:
        owner, rec = u["functions"]
        cols["functions"] = {"rank": rank[owner], "fid": rec["fn"].astype(np.int64),
                             "calls": rec["calls"].astype(np.int64), "time": rec["time"].astype(np.int64) / 1e9,
                             "tmin": rec["tmin"].astype(np.int64) / 1e9, "tmax": rec["tmax"].astype(np.int64) / 1e9,
                             "bytes": rec["bytes"].astype(np.int64)}
        owner, fid, got = u["bins"]
        b = got["bin"].astype(np.int64)
        cols["hist"] = {"rank": rank[owner], "fid": fid, "bin": b, "lo": _LO[b], "hi": _HI[b],
                        "count": got["count"].astype(np.int64)}
    owner, peers = u["peers"]
    cols["p2p"] = {"src": rank[owner], "dst": peers["dst"].astype(np.int64),
                   "messages": peers["messages"].astype(np.int64), "bytes": peers["bytes"].astype(np.int64)}
    return cols


def _joined(parts: list[dict], key: str) -> dict[str, np.ndarray] | None:
    """The slices' columns of ``key`` end to end; each slice's arrays are let go once joined (memory)."""
    got = [p.pop(key) for p in parts if key in p]
    if not got:
        return None
    out = {}
    for c in list(got[0]):
        pieces = [g.pop(c) for g in got]
        out[c] = [x for piece in pieces for x in piece] if isinstance(pieces[0], list) else np.concatenate(pieces)
    return out


def _named(cols: dict | None, columns: list[str], names: list) -> pd.DataFrame:
    """A frame of ``columns``; function ids become names (and classes) by a take from the short table."""
    if cols is None or not len(cols[columns[0] if columns[0] in cols else "rank"]):
        return pd.DataFrame(columns=columns)  # as the field-by-field parser leaves an empty frame
    fid = cols.pop("fid", None)
    if fid is not None:
        table = pd.array([n for n, _ in names], dtype="str")
        classes = pd.array([c for _, c in names], dtype="str")
        cols["function"] = table.take(fid)
        if "fclass" in columns:
            cols["fclass"] = classes.take(fid)
    return pd.DataFrame({c: cols.pop(c) for c in columns}, copy=False)  # the arrays are this frame's own


def unpacked_frames(order: str, blocks: bytes, entries: list, names: list, nranks: int):
    """(frames, host names) of the rank records, or None where the field-by-field parser must look."""
    view = memoryview(blocks)
    parts, hosts = [], {}
    for lo in range(0, len(entries), SLICE_RANKS):
        got = _slice(order, view, entries[lo:lo + SLICE_RANKS], names, nranks, hosts)
        if got is None:
            return None
        parts.append(got)
    ranks = _joined(parts, "ranks")
    if ranks is None:
        return None  # no rank block at all: the plain parser builds the empty frames
    frames = {"ranks": pd.DataFrame({c: ranks[c] for c in RANK_COLUMNS}, copy=False),
              "functions": _named(_joined(parts, "functions"), FUNCTION_COLUMNS, names),
              "hist": _named(_joined(parts, "hist"), HIST_COLUMNS, names),
              "p2p": _named(_joined(parts, "p2p"), P2P_COLUMNS, names)}
    return frames, set(hosts.values())
