"""Rank records (docs/log-format.md, "Rank record") as numpy arrays, both ways.

A million-rank log holds tens of millions of function, bin and peer entries;
packing or parsing them one struct at a time in Python takes minutes.  Here
every kind of entry is one structured array, and its place in the rank
records is computed with cumulative sums, so the work is a handful of numpy
passes whatever the rank count.  ``pack_records`` is used by the writer;
``unpack_records`` by the reader, which falls back to its field-by-field
parser (records.py) on anything this one does not vouch for, so every
error message stays the one that parser gives.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from scalewise.logfile import layout as L

# Pieces copied per scatter pass: bounds the index array's memory (pieces x entry size x 8 bytes).
_CHUNK = 1 << 18
_EXACT = 2.0**53  # every integer below this is exact as a float64


def dtypes(order: str) -> dict[str, np.dtype]:
    """The packed entry layouts of layout.py as numpy dtypes in byte order ``order``."""
    o = "<" if order == "<" else ">"
    return {
        "fixed": np.dtype([("rank", o + "u4"), ("flags", o + "u4"), ("pid", o + "u4"), ("nthreads", o + "u4"),
                           ("wall", o + "u8"), ("mpi", o + "u8"), ("init", o + "u8"), ("rss", o + "u8")]),
        "function": np.dtype([("fn", o + "u2"), ("nbins", o + "u2"), ("calls", o + "u8"), ("time", o + "u8"),
                              ("tmin", o + "u8"), ("tmax", o + "u8"), ("bytes", o + "u8")]),
        "bin": np.dtype([("bin", "u1"), ("count", o + "u8")]),
        "peer": np.dtype([("dst", o + "u4"), ("messages", o + "u8"), ("bytes", o + "u8")]),
        "index": np.dtype([("rank", o + "u4"), ("flags", o + "u4"), ("offset", o + "u8"), ("size", o + "u4"),
                           ("raw_size", o + "u4")]),
    }


def _scatter(out: np.ndarray, at: np.ndarray, entries: np.ndarray) -> None:
    """Copy each entry's bytes to ``out[at[i]:]``."""
    size = entries.dtype.itemsize
    raw = entries.view(np.uint8).reshape(len(entries), size)
    step = np.arange(size)
    for lo in range(0, len(entries), _CHUNK):
        out[at[lo:lo + _CHUNK, None] + step] = raw[lo:lo + _CHUNK]


def _rank_within(sorted_owner: np.ndarray, nowners: int) -> tuple[np.ndarray, np.ndarray]:
    """For rows sorted by owner index: each row's position within its owner, and the rows per owner."""
    counts = np.bincount(sorted_owner, minlength=nowners)
    first = np.cumsum(counts) - counts
    return np.arange(len(sorted_owner)) - first[sorted_owner], counts


def _ns(seconds) -> np.ndarray:
    """Seconds to whole nanoseconds, rounded half to even as Python's round() does."""
    return np.rint(np.asarray(seconds, dtype=np.float64) * 1e9).astype(np.int64)


def pack_records(ranks, functions, hist, p2p, fn_ids: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
    """The uncompressed rank records of ``ranks`` (sorted by rank), concatenated, and each one's start
    (one more entry: the end).  Rows of the other frames whose rank has no row in ``ranks`` are left out,
    as are histogram rows of a function the rank has no row for."""
    dt = dtypes("<")
    rank_ids = ranks["rank"].to_numpy(np.int64)
    n = len(rank_ids)
    host_codes, hosts = _factorize(ranks["host"].astype(str))
    host_bytes = [h.encode() for h in hosts]
    hlen = np.array([len(h) for h in host_bytes], dtype=np.int64)[host_codes]

    f = functions[functions["rank"].isin(rank_ids)]
    f_owner = np.searchsorted(rank_ids, f["rank"].to_numpy(np.int64))
    f_fid = f["function"].map(fn_ids).to_numpy(np.int64)
    f_order = np.lexsort((f_fid, f_owner))
    f, f_owner, f_fid = f.iloc[f_order], f_owner[f_order], f_fid[f_order]

    h = hist[hist["rank"].isin(rank_ids)]
    h_owner = np.searchsorted(rank_ids, h["rank"].to_numpy(np.int64))
    h_fid = h["function"].map(fn_ids).to_numpy(np.int64)
    # Which function row each bin belongs to: (owner, fid) keys of both, matched by searchsorted.
    f_key = f_owner * (1 << 16) + f_fid
    h_key = h_owner * (1 << 16) + h_fid
    h_row = np.searchsorted(f_key, h_key)
    found = (h_row < len(f_key)) & (f_key[np.minimum(h_row, max(len(f_key) - 1, 0))] == h_key) if len(f_key) else \
        np.zeros(len(h_key), bool)
    h, h_row, h_bin = h[found], h_row[found], h["bin"].to_numpy(np.int64)[found]
    h_order = np.lexsort((h_bin, h_row))
    h, h_row, h_bin = h.iloc[h_order], h_row[h_order], h_bin[h_order]
    bin_pos, nbins = _rank_within(h_row, len(f))

    p = p2p[p2p["src"].isin(rank_ids)]
    p_owner = np.searchsorted(rank_ids, p["src"].to_numpy(np.int64))
    p_order = np.lexsort((p["bytes"].to_numpy(np.int64), p["messages"].to_numpy(np.int64),
                          p["dst"].to_numpy(np.int64), p_owner))
    p, p_owner = p.iloc[p_order], p_owner[p_order]
    peer_pos, npeer = _rank_within(p_owner, n)

    f_size = L.FUNCTION_FIXED_SIZE + L.BIN_ENTRY_SIZE * nbins
    f_pos, nfn = _rank_within(f_owner, n)
    f_end = np.cumsum(f_size)
    f_first = np.cumsum(nfn) - nfn
    fn_bytes = np.bincount(f_owner, weights=f_size, minlength=n).astype(np.int64)
    head = L.RANK_FIXED_SIZE + 2 + hlen + 4  # up to the first function record
    size = head + fn_bytes + 4 + L.PEER_ENTRY_SIZE * npeer
    start = np.concatenate([[0], np.cumsum(size)])
    out = np.zeros(int(start[-1]), dtype=np.uint8)

    wall, mpi = _ns(ranks["wall"]), _ns(ranks["mpi_time"])
    partial = ranks["partial"].to_numpy(bool)
    fixed = np.zeros(n, dt["fixed"])
    fixed["rank"], fixed["flags"], fixed["pid"] = rank_ids, np.where(partial, L.RANK_PARTIAL, 0), ranks["pid"]
    fixed["nthreads"], fixed["wall"], fixed["mpi"] = ranks["nthreads"], wall, np.minimum(mpi, wall)
    fixed["rss"] = ranks["maxrss"].to_numpy(np.int64)
    _scatter(out, start[:-1], fixed)
    _scatter(out, start[:-1] + L.RANK_FIXED_SIZE, hlen.astype("<u2"))
    lengths = np.array([len(t) for t in host_bytes], dtype=np.int64)
    for length in set(lengths.tolist()) - {0}:
        mine = lengths[host_codes] == length  # hosts of one length form one fixed-size array
        names = np.array(host_bytes, dtype=f"S{max(lengths)}").astype(f"S{length}")
        _scatter(out, start[:-1][mine] + L.RANK_FIXED_SIZE + 2, names[host_codes[mine]])
    _scatter(out, start[:-1] + head - 4, nfn.astype("<u4"))

    f_at = start[f_owner] + head[f_owner] + (f_end - f_size) - (f_end - f_size)[f_first[f_owner]] \
        if len(f) else np.zeros(0, np.int64)
    frec = np.zeros(len(f), dt["function"])
    frec["fn"], frec["nbins"], frec["calls"] = f_fid, nbins, f["calls"].to_numpy(np.int64)
    for col in ("time", "tmin", "tmax"):
        frec[col] = _ns(f[col])
    frec["bytes"] = f["bytes"].to_numpy(np.int64)
    _scatter(out, f_at, frec)
    brec = np.zeros(len(h), dt["bin"])
    brec["bin"], brec["count"] = h_bin, h["count"].to_numpy(np.int64)
    _scatter(out, f_at[h_row] + L.FUNCTION_FIXED_SIZE + L.BIN_ENTRY_SIZE * bin_pos if len(h) else np.zeros(0, np.int64),
             brec)

    peers_at = start[:-1] + head + fn_bytes
    _scatter(out, peers_at, npeer.astype("<u4"))
    prec = np.zeros(len(p), dt["peer"])
    prec["dst"], prec["messages"], prec["bytes"] = (p[c].to_numpy(np.int64) for c in ("dst", "messages", "bytes"))
    _scatter(out, peers_at[p_owner] + 4 + L.PEER_ENTRY_SIZE * peer_pos, prec)
    return out, start


def _factorize(values) -> tuple[np.ndarray, list[str]]:
    codes, uniques = pd.factorize(values, sort=False)
    return codes.astype(np.int64), [str(u) for u in uniques]


class Unvouched(Exception):
    """The vectorised parser met something it does not check itself; the field-by-field one must say what."""


def _words(buf: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Element i: the integer of ``dtype`` stored at byte offset i of ``buf`` (an unaligned view, no copy)."""
    count = max(len(buf) - dtype.itemsize + 1, 0)
    return np.ndarray((count,), dtype=dtype, buffer=buf, offset=0, strides=(1,))


def _gather(buf: np.ndarray, at: np.ndarray, dtype: np.dtype):
    """The entries of ``dtype`` that start at each offset ``at`` of ``buf``: an array for a plain dtype, a dict
    of field arrays for a record one (one gather per field, not one per byte)."""
    if dtype.names is None:
        return _words(buf, dtype)[at]
    return {name: _words(buf, ftype)[at + off] for name, (ftype, off) in dtype.fields.items()}


def _fits(values: np.ndarray) -> bool:
    """No u64 of the array has its top bit set (every one fits int64)."""
    return not np.any(values >> np.uint64(63))


def _runs_increase(values: np.ndarray, first: np.ndarray) -> bool:
    """Within each run (``first`` marks run starts) the values strictly increase."""
    return bool(np.all((np.diff(values.astype(np.int64)) > 0) | first[1:])) if len(values) > 1 else True


def _entries(buf, at, count, end, owner, dtype):
    """Runs of ``count`` consecutive entries starting at ``at`` (one run per row): the entries, the run of each,
    its place in its run, and the offset after each run."""
    total = int(count.sum())
    after = at + dtype.itemsize * count
    if np.any(after > end[owner]):
        raise Unvouched
    run = np.repeat(np.arange(len(count)), count)
    within = np.arange(total) - np.repeat(np.cumsum(count) - count, count)
    got = _gather(buf, np.repeat(at, count) + dtype.itemsize * within, dtype)
    return got, run, within, after


def unpack_records(order: str, buf: np.ndarray, start: np.ndarray, expect_rank: np.ndarray,
                   expect_flags: np.ndarray, names: list[tuple[str, str]], nranks: int) -> dict[str, dict]:
    """Columns of the ranks, functions, hist and p2p rows of the records ``buf[start[i]:start[i + 1]]``,
    checked as records.parse_rank checks them; raises Unvouched where it cannot vouch for a record."""
    dt = dtypes(order)
    n = len(start) - 1
    end = start[1:]
    at = start[:-1]
    if np.any(end - at < L.RANK_FIXED_SIZE + 2 + 4 + 4):
        raise Unvouched
    fx = _gather(buf, at, dt["fixed"])
    wall, mpi, rss = fx["wall"], fx["mpi"], fx["rss"]
    if np.any(fx["rank"] != expect_rank) or np.any(fx["flags"] != expect_flags) or not _fits(wall | mpi | rss) \
            or np.any(mpi > wall + np.uint64(L.CLOCK_TOLERANCE_NS)):
        raise Unvouched
    hlen = _gather(buf, at + L.RANK_FIXED_SIZE, np.dtype(order + "u2")).astype(np.int64)
    if np.any(hlen > L.MAX_HOST) or np.any(at + L.RANK_FIXED_SIZE + 2 + hlen + 4 > end):
        raise Unvouched
    pos = at + L.RANK_FIXED_SIZE + 2 + hlen
    data = buf.tobytes() if n else b""
    host_raw = [data[a:a + k] for a, k in zip((at + L.RANK_FIXED_SIZE + 2).tolist(), hlen.tolist())]
    nfn = _gather(buf, pos, np.dtype(order + "u4")).astype(np.int64)
    pos = pos + 4
    nnames = len(names)
    if np.any(nfn > nnames):
        raise Unvouched
    fn_class_init = np.array([c == "init" for _, c in names] + [False], bool)
    busiest = wall.astype(np.float64) * np.maximum(fx["nthreads"], 1) + L.CLOCK_TOLERANCE_NS
    if np.any(busiest >= _EXACT):  # compared as floats below, exact only under 2^53
        raise Unvouched
    fns, bins, last_fn = [], [], np.full(n, -1, np.int64)
    for j in range(int(nfn.max()) if n else 0):
        act = np.flatnonzero(nfn > j)
        if np.any(pos[act] + L.FUNCTION_FIXED_SIZE > end[act]):
            raise Unvouched
        rec = _gather(buf, pos[act], dt["function"])
        if np.any(rec["time"] >= np.uint64(_EXACT)):
            raise Unvouched
        fid = rec["fn"].astype(np.int64)
        if np.any(fid <= last_fn[act]) or np.any(fid >= nnames) or \
                not _fits(rec["calls"] | rec["time"] | rec["tmin"] | rec["tmax"] | rec["bytes"]) or \
                np.any(rec["tmin"] > rec["tmax"]) or np.any(rec["nbins"] > L.NBINS) or \
                np.any((rec["time"].astype(np.float64) > busiest[act]) & ~fn_class_init[fid]):
            raise Unvouched
        last_fn[act] = fid
        nb = rec["nbins"].astype(np.int64)
        got, run, within, after = _entries(buf, pos[act] + L.FUNCTION_FIXED_SIZE, nb, end, act, dt["bin"])
        if not _runs_increase(got["bin"], within == 0) or np.any(got["bin"] >= L.NBINS) or np.any(got["count"] == 0) \
                or not _fits(got["count"]):
            raise Unvouched
        pos[act] = after
        fns.append((act, j, rec, nb))
        bins.append((run, within, got))
    if np.any(pos + 4 > end):
        raise Unvouched
    npeer = _gather(buf, pos, np.dtype(order + "u4")).astype(np.int64)
    if np.any(npeer > nranks):
        raise Unvouched
    peers, owner, within, after = _entries(buf, pos + 4, npeer, end, np.arange(n), dt["peer"])
    if np.any(after != end) or np.any(peers["dst"] >= nranks) or not _runs_increase(peers["dst"], within == 0) \
            or not _fits(peers["messages"] | peers["bytes"]):
        raise Unvouched
    functions, bins = _rank_major(nfn, fns, bins)
    return {"fixed": fx, "host_raw": host_raw, "functions": functions, "bins": bins, "peers": (owner, peers)}


def _rank_major(nfn: np.ndarray, fns: list, bins: list):
    """Function and bin entries gathered slot by slot (the j-th function of every record at once), put in
    record order (by rank record, then slot) by placing each at its computed row: no sort."""
    if not fns:
        return None, None
    first = np.cumsum(nfn) - nfn  # each record's first function row
    total = int(nfn.sum())
    owner = np.empty(total, np.int64)
    recs = {k: np.empty(total, v.dtype) for k, v in fns[0][2].items()}
    nbins = np.empty(total, np.int64)
    rows = []
    for act, j, rec, nb in fns:
        row = first[act] + j
        owner[row] = act
        for k, col in recs.items():
            col[row] = rec[k]
        nbins[row] = nb
        rows.append(row)
    bin_first = np.cumsum(nbins) - nbins
    nb_total = int(nbins.sum())
    b_owner, b_fid = np.empty(nb_total, np.int64), np.empty(nb_total, np.int64)
    got = {k: np.empty(nb_total, v.dtype) for k, v in bins[0][2].items()}
    for row, (run, within, entries) in zip(rows, bins):
        of = row[run]
        at = bin_first[of] + within
        b_owner[at], b_fid[at] = owner[of], recs["fn"][of]
        for k, col in got.items():
            col[at] = entries[k]
    return (owner, recs), (b_owner, b_fid, got)
