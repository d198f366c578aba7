"""Does one setting beat another beyond noise: the ratio of medians with a bootstrap interval.

Both samples are resampled independently (percentile bootstrap, fixed seed so
that a report reads the same every time it is written) and the ratio of their
medians taken each time.  With three repetitions a side the 95% interval runs
from about min(other)/max(base) to max(other)/min(base), so a setting "beats"
the base only when every one of its runs beat every run of the base: the guard
asks a lot of few repetitions and less of many.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MIN_REPETITIONS = 3  # fewer than this per side and no verdict is given
RESAMPLES = 4000
SEED = 20240601


@dataclass(frozen=True)
class RatioInterval:
    """median(other) / median(base) and its bootstrap interval."""

    ratio: float
    low: float
    high: float
    n_base: int
    n_other: int
    level: float

    def verdict(self, higher_is_better: bool) -> str:
        """``better``, ``worse``, ``same`` (the interval holds 1: no difference beyond noise) or ``too few``."""
        if min(self.n_base, self.n_other) < MIN_REPETITIONS or not np.isfinite(self.ratio):
            return "too few"
        if self.low > 1.0:
            return "better" if higher_is_better else "worse"
        if self.high < 1.0:
            return "worse" if higher_is_better else "better"
        return "same"

    def gain(self, higher_is_better: bool) -> float:
        """How much better ``other`` is than ``base``, as a fraction (0.22 = 22% better; negative = worse).

        Lower-is-better figures (times) are compared as speed: base/other - 1."""
        if not np.isfinite(self.ratio) or self.ratio <= 0:
            return float("nan")
        return self.ratio - 1.0 if higher_is_better else 1.0 / self.ratio - 1.0


def ratio_interval(base, other, level: float = 0.95, resamples: int = RESAMPLES, seed: int = SEED,
                   rng: np.random.Generator | None = None) -> RatioInterval:
    """Ratio of the median of ``other`` to the median of ``base``, with its ``level`` bootstrap interval.

    ``rng`` replaces the seeded generator (a many-seed test passes its own)."""
    b = np.asarray(base, dtype=float)
    o = np.asarray(other, dtype=float)
    b, o = b[np.isfinite(b)], o[np.isfinite(o)]
    if b.size == 0 or o.size == 0 or np.median(b) == 0:
        nan = float("nan")
        return RatioInterval(nan, nan, nan, int(b.size), int(o.size), level)
    rng = rng if rng is not None else np.random.default_rng(seed)
    mb = np.median(rng.choice(b, size=(resamples, b.size), replace=True), axis=1)
    mo = np.median(rng.choice(o, size=(resamples, o.size), replace=True), axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = mo / mb
    tail = 100.0 * (1.0 - level) / 2.0
    low, high = np.nanpercentile(ratios, [tail, 100.0 - tail])
    return RatioInterval(float(np.median(o) / np.median(b)), float(low), float(high), int(b.size), int(o.size), level)
