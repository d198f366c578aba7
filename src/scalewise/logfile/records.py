"""The decompressed contents of a job log: the function table and the rank
records (docs/log-format.md), checked field by field.

Checksums only prove that bytes were not damaged on the way; a log written
by a buggy or hostile program passes them.  So every count is checked
against what the header allows (ranks and peers below nranks, ids in the
function table, histogram bins below NBINS), every u64 must fit int64, text
must be valid UTF-8 without control characters, and values that cannot
happen (MPI time above wall time) are refused.  Problems raise ValueError
with a short description; the reader adds the file name.
"""

from __future__ import annotations

import re
import struct
from functools import cache

from scalewise.logfile import layout as L
from scalewise.model.bins import bin_bounds

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _text(raw: bytes, what: str) -> str:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{what} is not valid UTF-8 (byte {exc.start})") from None
    if not text.isprintable():
        raise ValueError(f"{what} holds control characters")
    return text


def parse_functions(raw: bytes) -> list[tuple[str, str]]:
    """(name, class) per function id."""
    parts = raw.split(b"\0")
    if parts[-1] != b"":
        raise ValueError("last string is not NUL-terminated")
    parts.pop()
    if len(parts) % 2:
        raise ValueError("odd number of strings")
    if len(parts) // 2 > L.MAX_FUNCTIONS:
        raise ValueError(f"{len(parts) // 2} functions, more than {L.MAX_FUNCTIONS}")
    out, seen = [], set()
    for i in range(0, len(parts), 2):
        name, fclass = (_text(p, f"function {i // 2}'s {what}") for p, what in zip(parts[i:i + 2], ("name", "class")))
        for what, text in (("name", name), ("class", fclass)):
            if len(text) > L.MAX_NAME or not _NAME.fullmatch(text):
                raise ValueError(f"function {i // 2} has an invalid {what} ({len(text)} characters; "
                                 f"expected up to {L.MAX_NAME} letters, digits and _)")
        if name in seen:
            raise ValueError(f"function {name} is listed twice")
        seen.add(name)
        out.append((name, fclass))
    return out


def max_block_size(nfunctions: int, nranks: int) -> int:
    """The largest rank record a log with these counts can hold."""
    most = (L.RANK_FIXED_SIZE + 2 + L.MAX_HOST + 4 + nfunctions * (L.FUNCTION_FIXED_SIZE + L.NBINS * L.BIN_ENTRY_SIZE)
            + 4 + nranks * L.PEER_ENTRY_SIZE)
    return min(most, L.MAX_BLOCK_BYTES)


@cache
def _structs(order: str) -> tuple[struct.Struct, ...]:
    return tuple(struct.Struct(order + f) for f in (L.RANK_FIXED, L.FUNCTION_FIXED, L.BIN_ENTRY, L.PEER_ENTRY, "H", "I"))


# (lo, hi) of every histogram bin, looked up rather than computed per entry.
_BIN_BOUNDS = [bin_bounds(b) for b in range(L.NBINS)]


def _bad_function(name: str, nbins: int, calls: int, t: int, tmin: int, tmax: int, nbytes: int,
                  wall: int, nthreads: int) -> str:
    if (calls | t | tmin | tmax | nbytes) >> 63:
        return f"{name}: a count, time or size of 2^63 or more"
    if tmin > tmax:
        return f"{name}: shortest call {tmin} ns is longer than the longest {tmax} ns"
    if nbins > L.NBINS:
        return f"{name}: {nbins} histogram bins, more than {L.NBINS}"
    return f"{name}: {t / 1e9:.6g} s in calls, more than the wall time {wall / 1e9:.6g} s times {nthreads} threads"


def parse_rank(order: str, blob: bytes, expect_rank: int, expect_flags: int, names: list[tuple[str, str]],
               nranks: int, rows: dict[str, list]) -> str:
    """Append the record's rows to ``rows``; returns its host name.  Raises
    ValueError (or struct.error when the record ends early)."""
    fixed, fn_fixed, bin_entry, peer, u16, u32 = _structs(order)
    rank, flags, pid, nthreads, wall, mpi, _init, rss = fixed.unpack_from(blob, 0)
    if rank != expect_rank or flags != expect_flags:
        raise ValueError(f"rank {rank} flags {flags:#x} differ from the index's rank {expect_rank} "
                         f"flags {expect_flags:#x}")
    if (wall | mpi | rss) >> 63:  # a u64 that does not fit int64 has its top bit set
        raise ValueError("wall time, MPI time or memory is 2^63 or more")
    if mpi > wall + L.CLOCK_TOLERANCE_NS:
        raise ValueError(f"MPI time {mpi / 1e9:.6g} s is more than the wall time {wall / 1e9:.6g} s")
    pos = fixed.size
    (hlen,) = u16.unpack_from(blob, pos)
    if hlen > L.MAX_HOST:
        raise ValueError(f"host name of {hlen} bytes, more than {L.MAX_HOST}")
    pos += 2
    host = _text(blob[pos:pos + hlen], "host name")
    pos += hlen
    (nfn,) = u32.unpack_from(blob, pos)
    pos += 4
    nnames = len(names)
    if nfn > nnames:
        raise ValueError(f"{nfn} function records, more than the {len(names)} functions in the table")
    rows["ranks"].append((rank, host, pid, wall / 1e9, mpi / 1e9, (wall - mpi) / 1e9, rss, nthreads,
                          bool(flags & L.RANK_PARTIAL)))
    fn_rows, hist_rows, p2p_rows = rows["functions"], rows["hist"], rows["p2p"]
    # MPI_Init and MPI_Finalize run outside the wall-time window; every other
    # function's time, summed over the rank's threads, lies inside it.
    busiest, nbins_max = wall * max(nthreads, 1) + L.CLOCK_TOLERANCE_NS, L.NBINS
    last_fn = -1
    for _ in range(nfn):
        fn, nbins, calls, t, tmin, tmax, nbytes = fn_fixed.unpack_from(blob, pos)
        pos += fn_fixed.size
        if not last_fn < fn < nnames:
            raise ValueError(f"function id {fn} out of order or not in the function table")
        last_fn = fn
        name, fclass = names[fn]
        # One cheap test on the common path; _bad_function says which check failed.
        if (calls | t | tmin | tmax | nbytes) >> 63 or tmin > tmax or nbins > nbins_max or \
                (t > busiest and fclass != "init"):
            raise ValueError(_bad_function(name, nbins, calls, t, tmin, tmax, nbytes, wall, nthreads))
        fn_rows.append((rank, name, fclass, calls, t / 1e9, tmin / 1e9, tmax / 1e9, nbytes))
        last_bin = -1
        for _ in range(nbins):
            b, count = bin_entry.unpack_from(blob, pos)
            pos += bin_entry.size
            if not last_bin < b < nbins_max or not 0 < count <= L.INT64_MAX:
                raise ValueError(f"{name}: histogram bin {b} out of order or out of range, or count {count}")
            last_bin = b
            hist_rows.append((rank, name, b, *_BIN_BOUNDS[b], count))
    (npeer,) = u32.unpack_from(blob, pos)
    pos += 4
    if npeer > nranks:
        raise ValueError(f"{npeer} peers, more than the {nranks} ranks of the job")
    last_dst = -1
    for _ in range(npeer):
        dst, msgs, nbytes = peer.unpack_from(blob, pos)
        pos += peer.size
        if not last_dst < dst < nranks:
            raise ValueError(f"peer {dst} out of order or not below nranks {nranks}")
        last_dst = dst
        if (msgs | nbytes) >> 63:
            raise ValueError(f"peer {dst}: a message count or size of 2^63 or more")
        p2p_rows.append((rank, dst, msgs, nbytes))
    if pos != len(blob):
        raise ValueError(f"{len(blob) - pos} bytes left over")
    return host
