"""LEB128 varints and zigzag, encoded and decoded a whole column at a time with numpy."""

from __future__ import annotations

import numpy as np

from scalewise.errors import ScalewiseError


def zigzag(v: np.ndarray) -> np.ndarray:
    v = v.astype(np.int64)
    return ((v << 1) ^ (v >> 63)).astype(np.uint64)


def unzigzag(u: np.ndarray) -> np.ndarray:
    u = u.astype(np.uint64)
    return ((u >> np.uint64(1)).astype(np.int64)) ^ -((u & np.uint64(1)).astype(np.int64))


def encode(values: np.ndarray) -> bytes:
    """Unsigned LEB128 of every value, back to back."""
    v = np.asarray(values, dtype=np.uint64)
    if not v.size:
        return b""
    nbytes = np.ones(v.size, dtype=np.int64)
    for k in range(1, 10):
        nbytes += v >= (np.uint64(1) << np.uint64(7 * k))
    first = np.cumsum(nbytes) - nbytes
    out = np.zeros(int(nbytes.sum()), dtype=np.uint8)
    for k in range(10):
        has = nbytes > k
        if not has.any():
            break
        byte = (v[has] >> np.uint64(7 * k)) & np.uint64(0x7F)
        more = (nbytes[has] > k + 1).astype(np.uint64) << np.uint64(7)
        out[first[has] + k] = (byte | more).astype(np.uint8)
    return out.tobytes()


def decode(buf: np.ndarray, pos: int, count: int, what: str) -> tuple[np.ndarray, int]:
    """``count`` varints from ``buf[pos:]``; returns them and the position after."""
    if count == 0:
        return np.zeros(0, dtype=np.uint64), pos
    rest = buf[pos:]
    ends = np.flatnonzero(rest < 0x80)
    if len(ends) < count:
        raise ScalewiseError(f"{what}: {count} values expected, the data ends after {len(ends)}")
    ends = ends[:count]
    stop = int(ends[-1]) + 1
    chunk = rest[:stop].astype(np.uint64)
    starts = np.concatenate(([0], ends[:-1] + 1))
    if (ends - starts).max() > 9:
        raise ScalewiseError(f"{what}: a value is longer than 10 bytes")
    group = np.repeat(np.arange(count), ends - starts + 1)
    shift = (np.arange(stop) - starts[group]).astype(np.uint64) * np.uint64(7)
    parts = (chunk & np.uint64(0x7F)) << shift
    return np.bitwise_or.reduceat(parts, starts), pos + stop
