"""Structure-aware mutants of a valid job log, for fuzzing the reader.

A seed log is decoded into its fields (header, section table, rank index,
the meta JSON, the function table and every rank record as typed fields);
one mutation changes a field, a record or a compressed stream, and the log
is encoded again with every offset, size and checksum recomputed, so the
mutant passes the CRCs and tests the checks behind them.  The container is
read by the reader and written by the writer (logfile/writer.py), the one
codec.  Used by tests/logfile/test_fuzz.py and bench/fuzz_reader.py.
"""

from __future__ import annotations

import copy
import json
import random
import struct
import zlib
from dataclasses import dataclass, field
from functools import cache
from typing import Iterator

from scalewise.logfile import layout as L
from scalewise.logfile.reader import read_container
from scalewise.logfile.writer import Hook, encode_container

Field = list  # [struct code, value, group]: one typed field of a rank record


@dataclass
class Log:
    order: str
    flags: int
    nranks: int
    meta: bytes
    functions: bytes
    records: list[list[Field]]
    minor: int = L.FORMAT_MINOR
    lifecycle: list[tuple] | None = None  # rank lifecycle entries (format 1.1), None when absent
    stored: dict[str, bytes] = field(default_factory=dict)  # replaces compressed bytes: "meta", "functions", "rank 0"


# Hooks are called with "index", "sections", "table" or "header" and that list.


def _record_fields(order: str, blob: bytes) -> list[Field]:
    out: list[Field] = []
    pos = 0

    def take(codes: str, group: str) -> tuple:
        nonlocal pos
        values = struct.unpack_from(order + codes, blob, pos)
        pos += struct.calcsize(order + codes)
        out.extend([c, v, group] for c, v in zip(codes, values))
        return values

    take(L.RANK_FIXED, "fixed")
    (hlen,) = take("H", "host")
    out.append(["s", blob[pos:pos + hlen], "host"])
    pos += hlen
    (nfn,) = take("I", "nfunctions")
    for i in range(nfn):
        nbins = take(L.FUNCTION_FIXED, f"function {i}")[1]
        for k in range(nbins):
            take(L.BIN_ENTRY, f"function {i} bin {k}")
    (npeer,) = take("I", "npeers")
    for i in range(npeer):
        take(L.PEER_ENTRY, f"peer {i}")
    return out


def decode(data: bytes) -> Log:
    """The fields of a valid log."""
    order, h, secs = read_container("(seed log)", data)
    secs = {k: zlib.decompress(v) if L.SECTION_FLAGS[k] & L.SECTION_COMPRESSED else v for k, v in secs.items()}
    records = []
    for rank, _, off, size, _ in struct.iter_unpack(order + L.RANK_INDEX_ENTRY, secs[L.SEC_RANK_INDEX]):
        records.append(_record_fields(order, zlib.decompress(secs[L.SEC_RANKS][off:off + size])))
    life = secs.get(L.SEC_RANK_LIFECYCLE)
    lifecycle = None if life is None else list(struct.iter_unpack(order + L.RANK_LIFECYCLE_ENTRY, life))
    return Log(order, h[4], h[5], secs[L.SEC_META], secs[L.SEC_FUNCTIONS], records, h[3], lifecycle)


def _pack_record(order: str, fields: list[Field]) -> bytes:
    return b"".join(v if c == "s" else struct.pack(order + c, v) for c, v, _ in fields)


def encode(log: Log, hook: Hook | None = None) -> bytes:
    """The log's bytes; ``hook`` may change the index, sections, table or header
    before checksums are computed over the result."""
    hook = hook or (lambda stage, values: None)
    o = log.order
    index, blocks, off = [], [], 0
    for i, rec in enumerate(log.records):
        raw = _pack_record(o, rec)
        z = log.stored.get(f"rank {i}", zlib.compress(raw, 6))
        rank = rec[0][1] if rec and rec[0][0] == "I" else i
        rflags = rec[1][1] if len(rec) > 1 and rec[1][0] == "I" else 0
        index.append([rank, rflags, off, len(z), len(raw)])
        blocks.append(z)
        off += len(z)
    hook("index", index)
    sections = [
        [L.SEC_META, 1, L.SECTION_COMPRESSED, log.stored.get("meta", zlib.compress(log.meta))],
        [L.SEC_FUNCTIONS, 1, L.SECTION_COMPRESSED, log.stored.get("functions", zlib.compress(log.functions))],
        [L.SEC_RANK_INDEX, 1, 0, b"".join(struct.pack(o + L.RANK_INDEX_ENTRY, *e) for e in index)],
        [L.SEC_RANKS, 1, 0, b"".join(blocks)],
    ]
    if log.lifecycle is not None:
        sections.append([L.SEC_RANK_LIFECYCLE, 1, 0,
                         b"".join(struct.pack(o + L.RANK_LIFECYCLE_ENTRY, *e) for e in log.lifecycle)])
    hook("sections", sections)
    return encode_container(sections, log.flags, log.nranks, len(index), o, log.minor, hook)


_CODES = {"index": L.RANK_INDEX_ENTRY, "table": L.SECTION_ENTRY, "header": "s" + L.HEADER[2:]}
_WIDTH = {"B": 8, "H": 16, "I": 32, "Q": 64}


def interesting(rng: random.Random, code: str, nranks: int) -> int:
    """A value likely to break a field of this width: bounds, nranks, powers of two, random."""
    top = 2 ** _WIDTH[code] - 1
    picks = [0, 1, top, top - 1, top // 2, top // 2 + 1, nranks - 1, nranks, nranks + 1, 2**31, L.NBINS,
             rng.randrange(top + 1), 1 << rng.randrange(_WIDTH[code])]
    return min(max(rng.choice(picks), 0), top)


def _set_field(rng, log):
    rec = rng.choice(log.records)
    f = rng.choice([f for f in rec if f[0] != "s"])
    f[1] = interesting(rng, f[0], log.nranks)
    return f"rank record {f[2]} field = {f[1]}", None


def _host(rng, log):
    rec = rng.choice(log.records)
    i = next(i for i, f in enumerate(rec) if f[0] == "s")
    host = rng.choice([b"\xff\xfe", b"a\x1b[31mred", b"x" * 300, "h\u00f6st".encode(), b""])
    rec[i][1], rec[i - 1][1] = host, len(host)  # the u16 length field comes just before
    return "host name", None


def _groups(rng, log):
    rec = rng.choice(log.records)
    groups = list(dict.fromkeys(f[2] for f in rec))
    g = rng.choice(groups)
    span = [i for i, f in enumerate(rec) if f[2] == g]
    a, b = span[0], span[-1] + 1
    how = rng.choice(["drop", "repeat", "truncate", "append"])
    if how == "drop":
        del rec[a:b]
    elif how == "repeat":
        rec[b:b] = copy.deepcopy(rec[a:b])
    elif how == "truncate":
        del rec[rng.randrange(len(rec)):]
    else:
        rec.append(["s", bytes(rng.randrange(1, 64)), "junk"])
    return f"rank record {how} {g}", None


def _duplicate_rank(rng, log):
    log.records.append(copy.deepcopy(rng.choice(log.records)))
    return "rank record repeated", None


_HOSTILE_JSON = [1e308, -1, 2**64, "x" * 20000, None, True, [], {}, "1.0", 3.5, [1, "a"], {"a": 1}]


def _meta(rng, log):
    try:
        meta = json.loads(log.meta)
    except (ValueError, RecursionError):
        meta = None
    how = rng.randrange(6)
    if how == 0 or not isinstance(meta, dict):  # an earlier mutation may have replaced the document
        log.meta = rng.choice([b"[1, 2]", b"42", b'"text"', b"null", b"[" * 1000 + b"]" * 1000,
                               b'{"a":' * 1000 + b"1" + b"}" * 1000, b"{", b"", b'{"cwd": "\xff"}',
                               b'{"end_time": NaN}', b'{"nranks": 1} trailing'])
        return "meta document", None
    key = rng.choice(list(meta) + ["unknown_key", "aborted_by_rank", "abort_errorcode"])
    if how == 1:
        meta.pop(key, None)
    else:
        meta[key] = rng.choice(_HOSTILE_JSON + [log.nranks + 1, 0, 2**31])
    log.meta = json.dumps(meta).encode()
    return f"meta {key}", None


def _functions(rng, log):
    parts = log.functions.split(b"\0")[:-1]
    i = rng.randrange(len(parts)) if parts else 0
    how = rng.choice(["long", "utf8", "control", "duplicate", "no-nul", "odd", "empty"])
    if how == "long" and parts:
        parts[i] = b"MPI_" + b"x" * 10000
    elif how == "utf8" and parts:
        parts[i] = parts[i][:3] + b"\xc3\x28" + parts[i][3:]
    elif how == "control" and parts:
        parts[i] = b"MPI_\x1b[2J"
    elif how == "duplicate" and len(parts) >= 4:
        parts[2:4] = parts[0:2]
    elif how == "odd":
        parts.append(b"MPI_Extra")
    elif how == "empty":
        parts = []
    log.functions = b"".join(p + b"\0" for p in parts)
    if how == "no-nul":
        log.functions = log.functions[:-1]
    return f"function table {how}", None


def _deflate(first: bytes, fill: int, count: int, last: bytes) -> bytes:
    z = zlib.compressobj(9)
    chunk = bytes([fill]) * (1 << 20)
    return z.compress(first) + b"".join(z.compress(chunk) for _ in range(count)) + z.compress(last) + z.flush()


@cache
def _bombs() -> tuple[bytes, bytes]:
    """1 GiB of zeros and a 256 MiB JSON object, compressed (about 1 MiB and 256 KiB)."""
    return _deflate(b"", 0, 1024, b""), _deflate(b"{", ord(" "), 256, b"}")


def _bomb(rng, log):
    """A compressed stream that inflates far past what the log states."""
    target = rng.choice(["meta", "functions", f"rank {rng.randrange(len(log.records))}"])
    how = rng.choice(["bomb", "trailing", "cut", "raw"])
    if how == "bomb":
        log.stored[target] = _bombs()[rng.randrange(2)]
    else:
        source = log.meta if target == "meta" else log.functions if target == "functions" else \
            _pack_record(log.order, log.records[int(target.split()[1])])
        z = zlib.compress(source)
        log.stored[target] = {"trailing": z + b"\0junk", "cut": z[:-5], "raw": source}[how]
    return f"{target} stream {how}", None


def _container(stage: str, positions: tuple[int, ...] = ()):
    """A mutation of one field (one of ``positions``, else any) of the index, section table or header."""
    def mutate(rng, log):
        def hook(name, values):
            if name != stage or not values:
                return
            row = rng.choice(values) if isinstance(values[0], list) else values
            k = rng.choice(positions) if positions else rng.randrange(len(row))
            code = _CODES[stage][k]
            if code in _WIDTH:
                row[k] = interesting(rng, code, log.nranks)
        return f"{stage} field", hook
    return mutate


def _section_entry(rng, log):
    how = rng.choice(["compressed flag", "version", "duplicate", "drop", "unknown id"])

    def hook(name, sections):
        if name != "sections":
            return
        i = rng.randrange(len(sections))
        if how == "compressed flag":
            sections[i][2] ^= L.SECTION_COMPRESSED
        elif how == "version":
            sections[i][1] = rng.choice([0, 2, 0xFFFF])
        elif how == "duplicate":
            sections.append(list(sections[i]))
        elif how == "drop":
            del sections[i]
        else:
            sections.append([rng.randrange(5, 2**32), 1, L.SECTION_COMPRESSED, _bombs()[0]])
    return f"section {how}", hook


MUTATIONS = [_set_field, _set_field, _set_field, _host, _groups, _groups, _duplicate_rank, _meta, _meta, _functions,
             _bomb, _container("index"), _container("index"), _container("table"), _container("header"),
             _container("header", (4, 5, 6)), _section_entry]  # header: flags, nranks, nblocks


def mutants(seeds: list[bytes], count: int, seed: int) -> Iterator[tuple[str, bytes]]:
    """``count`` (description, bytes) mutants of the seed logs, the same for the same seed,
    made one at a time.  One mutant in four gets two mutations."""
    rng = random.Random(seed)
    decoded = [decode(s) for s in seeds]
    for _ in range(count):
        log = copy.deepcopy(rng.choice(decoded))
        what, hooks = [], []
        for _ in range(2 if rng.random() < 0.25 else 1):
            name, hook = rng.choice(MUTATIONS)(rng, log)
            what.append(name)
            if hook:
                hooks.append(hook)
        yield " + ".join(what), encode(log, lambda stage, values: [h(stage, values) for h in hooks])
