"""numpy's and pandas' sums, means and percentiles in plain Python, bit for bit.

The summary's lean path (analysis/run/plain.py) must print what the frames'
path prints, to the last rounded digit, so it adds floats in the order those
libraries do: numpy's pairwise summation (``np.sum``, ``Series.sum``), and
pandas' group sums, which add a group's values with ``np.add.reduceat`` when
the groups lie in sorted runs (the first value, then the rest pairwise) and
with Kahan's compensated sum otherwise.  tests/analysis/test_plainsum.py
holds each against the library over drawn values.
"""

from __future__ import annotations

import math
from typing import Hashable, Sequence

NAN = float("nan")


def _pairwise(a: Sequence[float], lo: int, n: int) -> float:
    """numpy's pairwise_sum (umath loops): 8 accumulators up to 128 values, halves above."""
    if n < 8:
        res = 0.0
        for i in range(lo, lo + n):
            res += a[i]
        return res
    if n <= 128:
        r = list(a[lo:lo + 8])
        whole = n - n % 8
        for i in range(lo + 8, lo + whole, 8):
            for j in range(8):
                r[j] += a[i + j]
        res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        for i in range(lo + whole, lo + n):
            res += a[i]
        return res
    half = n // 2
    half -= half % 8
    return _pairwise(a, lo, half) + _pairwise(a, lo + half, n - half)


def np_sum(values: Sequence[float]) -> float:
    """``np.sum`` of float64 values (0.0 when empty)."""
    return _pairwise([float(v) for v in values], 0, len(values))


def np_mean(values: Sequence[float]) -> float:
    return np_sum(values) / len(values) if len(values) else NAN


def np_std(values: Sequence[float]) -> float:
    """Population standard deviation as ``np.std`` computes it."""
    mean = np_mean(values)
    return math.sqrt(np_sum([(v - mean) * (v - mean) for v in values]) / len(values))


def reduceat_sum(values: Sequence[float]) -> float:
    """One segment of ``np.add.reduceat``: its first value, then the rest pairwise."""
    v = [float(x) for x in values]
    return v[0] + _pairwise(v, 1, len(v) - 1)


def kahan_sum(values: Sequence[float]) -> float:
    """pandas' Cython group sum: Kahan's compensated sum, NaN skipped."""
    total = comp = 0.0
    for v in values:
        if v != v:
            continue
        y = v - comp
        t = total + y
        comp = t - total - y
        if comp != comp:
            comp = 0.0
        total = t
    return total


def group_sums(keys: Sequence[Hashable], values: Sequence[float], sort: bool = True) -> dict:
    """``Series(values).groupby(keys, sort=sort).sum()`` as {key: sum}, in the group order pandas gives."""
    order = sorted(set(keys)) if sort else list(dict.fromkeys(keys))
    code = {k: i for i, k in enumerate(order)}
    codes = [code[k] for k in keys]
    members: dict = {k: [] for k in order}
    for k, v in zip(keys, values):
        members[k].append(float(v))
    monotonic = all(a <= b for a, b in zip(codes, codes[1:]))
    if monotonic and not any(v != v for v in values):
        return {k: reduceat_sum(members[k]) for k in order}
    return {k: kahan_sum(members[k]) for k in order}


def group_means(keys: Sequence[Hashable], values: Sequence[float], sort: bool = True) -> dict:
    """``groupby(...).mean()``: the group sum (as group_sums adds it) over the count of non-NaN values."""
    sums = group_sums(keys, values, sort)
    counts: dict = {}
    for k, v in zip(keys, values):
        counts[k] = counts.get(k, 0) + (v == v)
    return {k: (s / counts[k] if counts[k] else NAN) for k, s in sums.items()}


def median(values: Sequence[float]) -> float:
    """``Series.median()`` / ``np.median`` of the non-NaN values (NaN when none)."""
    v = sorted(float(x) for x in values if x == x)
    n = len(v)
    if not n:
        return NAN
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def percentile(values: Sequence[float], q: float) -> float:
    """``np.percentile(values, q)``, linear method, as numpy interpolates (its _lerp)."""
    v = sorted(float(x) for x in values)
    index = q / 100 * (len(v) - 1)
    lo = math.floor(index)
    hi = min(lo + 1, len(v) - 1)
    t = index - lo
    a, b = v[lo], v[hi]
    diff = b - a
    out = b - diff * (1 - t) if t >= 0.5 else a + diff * t
    return a if a == b else out


def nanmean(values: Sequence[float]) -> float:
    """``Series.mean()`` with NaN skipped: the NaNs count as 0 in numpy's sum, and not in the count."""
    count = sum(1 for v in values if v == v)
    return np_sum([v if v == v else 0.0 for v in values]) / count if count else NAN


def nanmax(values: Sequence[float]) -> float:
    v = [x for x in values if x == x]
    return max(v) if v else NAN
