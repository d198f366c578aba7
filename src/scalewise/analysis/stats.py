"""The one statistics of scalewise: when a difference between two sets of repetitions is claimed.

Every verdict (the study report's comparisons and scaling efficiencies, the
B3 table, `scalewise tune`) calls :func:`compare`; nothing else tests.

* **The test.** An exact one-sided two-sample rank test (Mann-Whitney) on the
  log values: side ``a`` is claimed better than side ``b`` by more than
  ``margin`` when U, the number of pairs (a_i / (1 + margin), b_j) in which the
  a side is better, is so large that an arrangement of the pooled runs
  chosen at random reaches it with probability at most ``alpha``.  The null
  distribution of U is counted exactly (every split of the n + m runs is
  equally likely when the two sides are the same), so ``p`` is a true
  probability at any n, with no resampling; ties count against the claim,
  which keeps it conservative.
* **Its real level.** With n and m runs the smallest p there is, is
  1 / C(n + m, n): 1/20 = 0.05 at 3 against 3 (every run must beat every
  run), 1/70 at 4, 1/252 at 5 (:func:`smallest_p`, tabulated in
  docs/study-report.md).
* **The interval** of the ratio is the test inverted: the ratios r for which
  neither one-sided test at ``alpha`` rejects "a / r equals b", read off the
  sorted pairwise ratios a_i / b_j.  Its level is what the counting gives at
  that n (90% at 3 against 3, 94.3% at 4), never a nominal 95%; with too few
  runs for any interval at that ``alpha`` there is none.
* **The margin.** A claim needs the ratio beyond ``1 + margin``:
  :func:`effect_margin` is ``MARGIN`` (5%) or the larger relative
  interquartile range of the two sides, whichever is larger: a difference
  smaller than a side's own scatter is not told from it.
* **Minimum repetitions.** ``MIN_REPS`` a side, below which no test is made
  (at 2 against 2 the smallest p is 1/6).
* **Many comparisons.** A report or a tuner makes many comparisons;
  :func:`holm` (family-wise error) and :func:`benjamini_hochberg` (false
  discovery rate) decide which of their p-values still stand.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

MIN_REPS = 3  # a side, for any test
MARGIN = 0.05  # smallest effect claimed
ALPHA = 0.05  # one-sided level of one comparison before any multiplicity control
EXACT = "rank test"  # the rule of a decided comparison
TOO_FEW = "too-few"


@lru_cache(maxsize=512)
def _u_counts(n: int, m: int) -> tuple[float, ...]:
    """How many of the C(n + m, n) splits give U = 0, 1, ..., n * m (no ties)."""
    # f(i, j) = f(i - 1, j) shifted by j (the largest value is an x: it beats the j y's) + f(i, j - 1).
    row = [np.ones(1)] * (m + 1)  # i = 0: U is 0 whatever j
    for i in range(1, n + 1):
        new = [np.ones(1)]  # j = 0: U is 0
        for j in range(1, m + 1):
            size = i * j + 1
            c = np.zeros(size)
            up = row[j]
            c[j:j + up.size] += up
            left = new[j - 1]
            c[:left.size] += left
            new.append(c)
        row = new
    return tuple(row[m].tolist())


def _upper_tail(n: int, m: int) -> np.ndarray:
    """P(U >= u) for u = 0 .. n * m under the null, and 0 past it."""
    counts = np.asarray(_u_counts(n, m))
    tail = np.cumsum(counts[::-1])[::-1] / counts.sum()
    return np.append(tail, 0.0)


def smallest_p(n: int, m: int) -> float:
    """The smallest p-value the test can give with n and m runs: 1 / C(n + m, n)."""
    return 1.0 / math.comb(n + m, n) if n > 0 and m > 0 else 1.0


def critical_u(n: int, m: int, alpha: float = ALPHA) -> int:
    """The smallest U that the one-sided test rejects at ``alpha`` (n * m + 1 when none does)."""
    tail = _upper_tail(n, m)
    ok = np.nonzero(tail <= alpha + 1e-12)[0]
    return int(ok[0]) if ok.size else n * m + 1


def interval_level(n: int, m: int, alpha: float = ALPHA) -> float:
    """The true coverage of the interval of :func:`compare` with n and m runs (nan when there is none)."""
    c = critical_u(n, m, alpha)
    return float("nan") if c > n * m else float(1.0 - 2.0 * _upper_tail(n, m)[c])


def rank_p(a, b, shift: float = 0.0) -> float:
    """One-sided exact p that ``a`` exceeds ``b`` by more than ``shift`` (logs: ``log(1 + margin)``)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    u = int(np.sum((a[:, None] - shift) > b[None, :]))
    return float(_upper_tail(a.size, b.size)[u])


def scatter(values) -> float:
    """``(q75 - q25) / median`` of one side's repetitions (linear interpolation between them)."""
    v = np.asarray(values, dtype=float)
    med = float(np.median(v))
    q25, q75 = np.percentile(v, [25, 75])
    return float((q75 - q25) / abs(med)) if med else float("inf")


def effect_margin(a, b, floor: float = MARGIN) -> float:
    """What a claim must clear: ``floor`` or the larger relative interquartile range of the two sides."""
    return float(max(floor, scatter(a), scatter(b)))


def gain(ratio: float) -> float:
    """How much better, as a fraction, for a ratio oriented so that above 1 is better (1.22 -> 0.22)."""
    return ratio - 1.0 if np.isfinite(ratio) and ratio > 0 else float("nan")


def oriented(a, b, higher_is_better: bool) -> tuple[np.ndarray, np.ndarray]:
    """``a`` and ``b`` as performance (higher is better): the inverse of a lower-is-better figure."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    a, b = a[np.isfinite(a) & (a > 0)], b[np.isfinite(b) & (b > 0)]
    return (a, b) if higher_is_better else (1.0 / a, 1.0 / b)


@dataclass(frozen=True)
class Comparison:
    """Side a against side b, oriented so that a ratio above 1 means a performs better."""

    ratio: float  # median(a) / median(b), as performance
    lo: float  # the interval of the ratio (the test inverted), nan when the runs are too few for one
    hi: float
    level: float  # the interval's true coverage at these n (nan without one)
    p: float  # one-sided exact p of "a better than b by more than margin" (two-sided: either way)
    margin: float  # the effect a claim must clear, as a fraction above 1
    claimed: bool  # p <= alpha (before any multiplicity control)
    rule: str  # EXACT, or TOO_FEW (fewer than MIN_REPS a side: no test)
    n_a: int
    n_b: int

    @property
    def gain(self) -> float:
        return gain(self.ratio)


def compare(a, b, higher_is_better: bool, margin: float | None = None, alpha: float = ALPHA,
            two_sided: bool = False, min_reps: int = MIN_REPS) -> Comparison:
    """Whether ``a`` performs better than ``b`` beyond ``margin`` (default :func:`effect_margin`).

    ``two_sided``: a claim either way (a better, or a worse, by more than the
    margin); ``p`` is then twice the smaller one-sided p."""
    x, y = oriented(a, b, higher_is_better)
    nan = float("nan")
    if x.size == 0 or y.size == 0:
        return Comparison(nan, nan, nan, nan, 1.0, nan, False, TOO_FEW, int(x.size), int(y.size))
    margin = effect_margin(x, y) if margin is None else float(margin)
    ratio = float(np.median(x) / np.median(y))
    if min(x.size, y.size) < min_reps:
        return Comparison(ratio, nan, nan, nan, 1.0, margin, False, TOO_FEW, int(x.size), int(y.size))
    lx, ly = np.log(x), np.log(y)
    shift = math.log1p(margin)
    p = rank_p(lx, ly, shift)
    if two_sided:
        p = min(1.0, 2.0 * min(p, rank_p(ly, lx, shift)))
    c = critical_u(x.size, y.size, alpha)
    lo = hi = nan
    if c <= x.size * y.size:
        d = np.sort((lx[:, None] - ly[None, :]).ravel())
        lo, hi = float(np.exp(d[d.size - c])), float(np.exp(d[c - 1]))
    return Comparison(ratio, lo, hi, interval_level(x.size, y.size, alpha), p, margin, bool(p <= alpha), EXACT,
                      int(x.size), int(y.size))


def holm(pvalues, alpha: float = ALPHA) -> np.ndarray:
    """Which p-values stand with the family-wise error held at ``alpha`` (Holm's step-down)."""
    p = np.asarray(pvalues, dtype=float)
    out = np.zeros(p.size, dtype=bool)
    for rank, i in enumerate(np.argsort(p, kind="stable")):
        if p[i] > alpha / (p.size - rank):
            break
        out[i] = True
    return out


def benjamini_hochberg(pvalues, q: float = ALPHA) -> np.ndarray:
    """Which p-values stand with the false discovery rate held at ``q`` (Benjamini-Hochberg step-up)."""
    p = np.asarray(pvalues, dtype=float)
    out = np.zeros(p.size, dtype=bool)
    if p.size == 0:
        return out
    order = np.argsort(p, kind="stable")
    passed = np.nonzero(p[order] <= q * np.arange(1, p.size + 1) / p.size)[0]
    if passed.size:
        out[order[:passed[-1] + 1]] = True
    return out


def median_interval(values, level: float = 0.95) -> tuple[float, float, float]:
    """A distribution-free interval of the median from order statistics: (lo, hi, its true coverage).

    The narrowest pair (x_(k), x_(n+1-k)) whose binomial coverage still reaches
    ``level`` is taken when one does; below that n it is the min-max range with
    the coverage it really has (75% for 3 runs, 87.5% for 4, 93.75% for 5)."""
    v = np.sort(np.asarray(values, dtype=float))
    n = v.size
    if n == 0:
        return float("nan"), float("nan"), float("nan")
    if n == 1:
        return float(v[0]), float(v[0]), 0.0
    cdf = np.cumsum([math.comb(n, i) for i in range(n + 1)]) / 2.0 ** n  # P(Bin(n, 1/2) <= i)
    k = 1
    while k + 1 <= n // 2 and 1.0 - 2.0 * cdf[k] >= level:
        k += 1
    return float(v[k - 1]), float(v[n - k]), float(1.0 - 2.0 * cdf[k - 1])


def level_table(ns=range(2, 11), alpha: float = ALPHA) -> list[tuple[int, float, float]]:
    """(n per side, smallest p, interval level at ``alpha``) as docs/study-report.md prints it."""
    return [(n, smallest_p(n, n), interval_level(n, n, alpha)) for n in ns]
