"""The noise rule: when a difference between two configurations is claimed (docs/study-report.md).

Two medians of a few repetitions differ by chance; a benchmark slower once
in three makes a "482% better" out of nothing.  A difference is claimed only
when all of these hold:

* each side has at least ``MIN_REPS`` successful repetitions (with fewer the
  report says how many it would need);
* the bootstrap ``LEVEL`` interval of the ratio of the two medians (each side
  resampled on its own, ``RESAMPLES`` times, fixed seed) lies wholly above
  ``1 + margin``;
* the margin is ``MARGIN`` or the larger relative interquartile range of the
  two sides, ``(q75 - q25) / median``, whichever is larger: a difference
  smaller than the scatter of one side's own repetitions is not told apart
  from it (for 3 repetitions that is half their range; unlike the range it
  does not grow with more repetitions, nor with one slow outlier among five).

The bootstrap itself is `analysis/ratio.py`, shared with `scalewise tune`.
The ratio is oriented so that above 1 means the first side performs better
(its performance over the other's, or the inverse for a lower-is-better figure
of merit).  ``tests/study/test_noise_rule.py`` measures the rule's false-claim
rate on noise-only data over many seeds and its power on a planted effect.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from scalewise.analysis.ratio import ratio_interval as shared_ratio_interval

MIN_REPS = 3
MARGIN = 0.05
RESAMPLES = 4000
LEVEL = 0.95
SEED = 0


@dataclass(frozen=True)
class Verdict:
    ratio: float  # ratio of the medians, > 1: side a performs better
    lo: float  # the bootstrap interval of the ratio
    hi: float
    margin: float  # what the interval must clear, as a fraction above 1
    claimed: bool
    rule: str  # "bootstrap" (decided), "too-few" (fewer than MIN_REPS on a side)


def scatter(values: np.ndarray) -> float:
    """``(q75 - q25) / median`` of one side's repetitions (linear interpolation between them)."""
    med = float(np.median(values))
    q25, q75 = np.percentile(values, [25, 75])
    return float((q75 - q25) / med) if med else float("inf")


def ratio_interval(a: np.ndarray, b: np.ndarray, higher_is_better: bool,
                   rng: np.random.Generator | None = None) -> tuple[float, float, float]:
    """(ratio of medians, interval low, interval high), a over b oriented to "a is better"."""
    base, other = (b, a) if higher_is_better else (a, b)
    r = shared_ratio_interval(base, other, level=LEVEL, resamples=RESAMPLES, seed=SEED, rng=rng)
    return r.ratio, r.low, r.high


def efficiency(point, base, ideal: float, higher_is_better: bool) -> Verdict:
    """The scaling efficiency of ``point`` against ``base`` with its bootstrap interval.

    ``claimed`` when the interval lies wholly outside ``1 +- margin``: a loss
    (or a superlinear gain) the repetitions can tell from noise.
    """
    p, b = np.asarray(point, dtype=float), np.asarray(base, dtype=float)
    margin = max(MARGIN, scatter(p), scatter(b))
    top, bottom = (p, b * ideal) if higher_is_better else (b, p * ideal)
    eff = float(np.median(top) / np.median(bottom))
    if min(len(p), len(b)) < MIN_REPS:
        return Verdict(eff, np.nan, np.nan, margin, False, "too-few")
    ratio, lo, hi = ratio_interval(top, bottom, True)
    return Verdict(ratio, lo, hi, margin, bool(hi < 1 - margin or lo > 1 + margin), "bootstrap")


def judge(a, b, higher_is_better: bool, rng: np.random.Generator | None = None) -> Verdict:
    """Whether side ``a`` is claimed better than side ``b`` (call it with the better median first)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    margin = max(MARGIN, scatter(a), scatter(b))
    if min(len(a), len(b)) < MIN_REPS:
        ratio = (np.median(a) / np.median(b)) if higher_is_better else (np.median(b) / np.median(a))
        return Verdict(float(ratio), np.nan, np.nan, margin, False, "too-few")
    ratio, lo, hi = ratio_interval(a, b, higher_is_better, rng)
    return Verdict(ratio, lo, hi, margin, bool(lo > 1 + margin), "bootstrap")
