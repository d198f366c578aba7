"""The noise rule of a study report: which differences are claimed (docs/study-report.md).

One comparison is :func:`scalewise.analysis.stats.compare`: an exact rank test
on the log values, at least ``MIN_REPS`` repetitions a side, a margin of 5% or
the larger relative interquartile range of the two sides.  A report makes many
comparisons, so the claims it states are those that survive the
Benjamini-Hochberg procedure over all of them at a false discovery rate of
``FDR`` (:func:`control`): of the differences a report claims, at most that
share is expected to be noise, and on a study where nothing differs the chance
of any claim at all is at most ``FDR``.  ``tests/study/test_noise_rule.py``
measures both over many seeds.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from scalewise.analysis import stats

MIN_REPS = stats.MIN_REPS
MARGIN = stats.MARGIN
FDR = 0.05  # the false discovery rate a report's claims are held to
RULE = stats.EXACT
scatter = stats.scatter


def judge(a, b, higher_is_better: bool) -> stats.Comparison:
    """Side ``a`` against side ``b`` (call it with the better median first), before multiplicity control."""
    return stats.compare(a, b, higher_is_better)


def efficiency(point, base, ideal: float, higher_is_better: bool) -> stats.Comparison:
    """The scaling efficiency of ``point`` against ``base``: performance over ``ideal`` times the base's.

    Two-sided: a loss, or a superlinear gain, beyond the margin."""
    p, b = stats.oriented(point, base, higher_is_better)
    return stats.compare(p, b * ideal, True, two_sided=True)


def control(pvalues, decided) -> np.ndarray:
    """Which of the decided comparisons stand after Benjamini-Hochberg at ``FDR`` over all of them."""
    p = np.asarray(pd.Series(pvalues, dtype=float).fillna(1.0))
    decided = np.asarray(decided, dtype=bool)
    out = np.zeros(p.size, dtype=bool)
    out[decided] = stats.benjamini_hochberg(p[decided], FDR)
    return out


def family(comparisons: pd.DataFrame, scalability: pd.DataFrame, axis: str,
           include_oversubscribed: bool) -> tuple[np.ndarray, np.ndarray]:
    """The report's tests: the comparisons the rank test decided, and the scaling efficiencies tested (enough
    repetitions at both ends, not the base against itself, not oversubscribed unless asked)."""
    decided = (comparisons["rule"] == RULE).to_numpy(dtype=bool) if not comparisons.empty else np.zeros(0, bool)
    s = scalability
    if s.empty:
        return decided, np.zeros(0, dtype=bool)
    tested = (s["efficiency_p"].notna() & (s["n"] >= MIN_REPS) & (s[axis] != s["base_scale"])
              & (s["base_run_ids"].str.count(",") + 1 >= MIN_REPS)).to_numpy(dtype=bool)
    if not include_oversubscribed:
        tested = tested & ~s["oversubscribed"].astype(bool).to_numpy()
    return decided, tested
