"""Write a Profile as a job log (docs/log-format.md), byte-compatible with
the C runtime.  Used for synthetic logs (benchmarks, tests of large jobs)
and for golden files; the runtime itself never goes through Python."""

from __future__ import annotations

import json
import os
import struct
import zlib
from pathlib import Path
from typing import Callable

import numpy as np

from scalewise.logfile import layout as L
from scalewise.logfile.blockpack import dtypes, pack_records
from scalewise.logfile.timeline import pack_timeline
from scalewise.model.profile import LIFECYCLE_COLUMNS, PROFILER_COLUMNS, SETUP_COLUMNS, Profile

_ORDER = "<"


def write_profile(profile: Profile, path, aborted: bool = False) -> Path:
    """Write ``profile`` to ``path`` atomically; returns the path."""
    path = Path(path)
    functions = profile.functions
    # Functions called only inside phases of a synthetic profile still need an id.
    names = list(dict.fromkeys([*functions["function"], *profile.phase_functions["function"]]))
    classes = {n: "other" for n in names} | dict(zip(functions["function"], functions["fclass"]))
    fn_ids = {n: i for i, n in enumerate(names)}
    ranks = profile.ranks.sort_values("rank", kind="stable").reset_index(drop=True)
    raw, start = pack_records(ranks, functions, profile.hist, profile.p2p, fn_ids)
    view = memoryview(raw)
    blocks = [zlib.compress(view[a:b], 6) for a, b in zip(start[:-1].tolist(), start[1:].tolist())]
    stored = np.array([len(z) for z in blocks], dtype=np.int64)
    partial = ranks["partial"].to_numpy(bool)
    any_partial = bool(partial.any())
    index = np.zeros(len(ranks), dtypes("<")["index"])
    index["rank"], index["flags"] = ranks["rank"].to_numpy(np.int64), np.where(partial, L.RANK_PARTIAL, 0)
    index["offset"], index["size"], index["raw_size"] = np.cumsum(stored) - stored, stored, np.diff(start)
    life, setup = [], []
    has_life, has_setup = set(LIFECYCLE_COLUMNS) <= set(ranks.columns), set(SETUP_COLUMNS) <= set(ranks.columns)
    if has_life:
        life = [struct.pack(_ORDER + L.RANK_LIFECYCLE_ENTRY, int(r.rank), 0, int(r.rss_init_start),
                            int(r.rss_init_end), int(r.rss_finalize), int(round(r.finalize_time * 1e9)))
                for r in ranks.itertuples(index=False)]
    if has_setup:
        setup = [_setup_entry(int(r.rank), r) for r in ranks.itertuples(index=False)]
    own = []
    if set(PROFILER_COLUMNS) <= set(ranks.columns):  # the reader takes profiler_time out of compute_time again
        own = [struct.pack(_ORDER + L.PROFILER_ENTRY, int(r.rank), 0,
                           *(int(round(getattr(r, c) * 1e9)) for c in PROFILER_COLUMNS))
               for r in ranks.itertuples(index=False)]

    meta = dict(profile.meta)
    meta.setdefault("format", f"{L.FORMAT_MAJOR}.{L.FORMAT_MINOR}")
    meta.pop("ranks_present", None)
    meta.pop("hosts", None)
    nranks = int(meta.get("nranks", len(profile.ranks)))
    meta["nranks"] = nranks
    names_blob = b"".join(n.encode() + b"\0" + classes[n].encode() + b"\0" for n in names)
    sections = [
        (L.SEC_META, L.SECTION_COMPRESSED, zlib.compress(json.dumps(meta, default=_json_default).encode())),
        (L.SEC_FUNCTIONS, L.SECTION_COMPRESSED, zlib.compress(names_blob)),
        (L.SEC_RANK_INDEX, 0, index.tobytes()),
        (L.SEC_RANKS, 0, b"".join(blocks)),
    ] + ([(L.SEC_RANK_LIFECYCLE, 0, b"".join(life))] if has_life else [])
    if has_setup:
        sections.append((L.SEC_RANK_SETUP, 0, b"".join(setup)))
    if own:
        sections.append((L.SEC_PROFILER, 0, b"".join(own)))
    timeline = _timeline(profile, fn_ids)
    if timeline:
        sections.append((L.SEC_TIMELINE, L.SECTION_COMPRESSED, zlib.compress(timeline)))
    flags = (L.LOG_PARTIAL if any_partial or len(index) < nranks or "partial" in profile.flags else 0)
    flags |= L.LOG_ABORTED if aborted or "aborted" in profile.flags else 0
    data = encode_container([[ident, L.SECTION_VERSION, sflags, raw] for ident, sflags, raw in sections],
                            flags, nranks, len(index))
    tmp = path.with_name(f"{path.name}.tmp.{os.getpid()}")
    tmp.write_bytes(data)
    os.replace(tmp, path)
    return path


Hook = Callable[[str, list], None]
_MASKS = (2**32 - 1, 2**16 - 1, 2**16 - 1, 2**64 - 1, 2**64 - 1, 2**32 - 1, 2**32 - 1)  # section entry field widths


def encode_container(sections: list[list], flags: int, nranks: int, nblocks: int, order: str = _ORDER,
                     minor: int = L.FORMAT_MINOR, hook: Hook | None = None) -> bytes:
    """A log's bytes: the header, the section table and each section's stored bytes, with every offset,
    size and checksum computed here (the one encoder of the container).  ``sections``: [id, version,
    flags, stored bytes] lists, in file order.  ``hook(stage, values)`` (fuzzing) may change the
    "table" entries [id, version, flags, offset, size, crc32, reserved] or the "header" fields (in
    layout.HEADER order) before the checksums are computed over the result: each entry's checksum
    covers whatever it then points at, and its fields are cut to their widths."""
    pos = L.HEADER_SIZE + len(sections) * L.SECTION_ENTRY_SIZE
    table = []
    for ident, version, sflags, data in sections:
        table.append([ident, version, sflags, pos, len(data), 0, 0])
        pos += len(data)
    header = [L.MAGIC, L.BYTE_ORDER_MARK, L.FORMAT_MAJOR, minor, flags, nranks, nblocks, len(table), pos, 0, 0]
    if hook:
        hook("table", table)
        hook("header", header)
    body = b"".join(s[3] for s in sections)
    whole = bytes(L.HEADER_SIZE + len(table) * L.SECTION_ENTRY_SIZE) + body
    for entry in table:
        if entry[3] + entry[4] <= len(whole):
            entry[5] = zlib.crc32(whole[entry[3]:entry[3] + entry[4]])
    packed = b"".join(struct.pack(order + L.SECTION_ENTRY, *(v & m for v, m in zip(e, _MASKS))) for e in table)
    head = struct.pack(order + L.HEADER[:-2], *header[:9])
    head += struct.pack(order + "II", zlib.crc32(packed, zlib.crc32(head)), 0)
    return head + packed + body


def _setup_entry(rank: int, row) -> bytes:
    """The rank setup entry (format 1.3) of a ranks row; NaN values clear their flag."""
    v = {c: getattr(row, c) for c in SETUP_COLUMNS}
    flags = (L.SETUP_NODE if not np.isnan(v["node_cpus"]) else 0) | \
        (L.SETUP_PROC_STAT if not np.isnan(v["node_total"]) else 0)
    out = []
    for c in SETUP_COLUMNS:
        x = v[c]
        if np.isnan(x):
            out.append(2**64 - 1 if c.startswith("load1") else 0)
        elif c.startswith("load1"):
            out.append(int(round(x * 1e3)))
        elif c in ("setup_window", "cpu_user", "cpu_sys", "node_busy", "node_total", "node_steal"):
            out.append(int(round(x * 1e9)))
        else:
            out.append(int(x))
    return struct.pack(_ORDER + L.RANK_SETUP_ENTRY, rank, flags, *out)


def _timeline(profile: Profile, fn_ids: dict[str, int]) -> bytes:
    """The timeline section's records (format 1.2), for ranks with bins or phases."""
    b, ph, pf = profile.bins, profile.phases, profile.phase_functions
    ranks = sorted({int(r) for r in b["rank"]} | {int(r) for r in ph["rank"]})
    capped = "phases_capped" in profile.flags
    return b"".join(pack_timeline(_ORDER, r, capped, b[b["rank"] == r].sort_values("bin"), ph[ph["rank"] == r],
                                  pf[pf["rank"] == r], fn_ids) for r in ranks)


def _json_default(value):
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"cannot store {type(value).__name__} in log metadata")
