"""A per-rank quantity as a distribution, for jobs too large to show one bar per rank.

Past a few ten thousand ranks a figure cannot give every rank a pixel, so
figures P1 and P6 show instead (docs/report.md, "Large jobs"): a histogram
of the quantity over all ranks (its counts add up to the number of ranks),
the ranks at fixed percentiles and the worst ranks, each named by its rank
id with its parts (compute and MPI time, or bytes by kind).  Percentile
ranks are picked by nearest rank in the ordering the analysis already made,
so each mark is a real rank, not an interpolated value.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

# Percentiles marked by name; "max" is the worst rank, listed with the other worst ones.
MARKS = (("min", 0), ("p5", 5), ("p25", 25), ("median", 50), ("p75", 75), ("p95", 95))
WORST = 5  # the highest ranks named
HIST_BINS = 40


@dataclass(frozen=True)
class RankDistribution:
    """``counts[i]`` ranks have a value in [edges[i], edges[i + 1]) (the last bin is closed);
    ``marks``: label, rank, value and the parts' columns of the percentile ranks, then of the
    ``WORST`` highest ranks (label "worst 1" is the highest)."""

    nranks: int
    edges: np.ndarray
    counts: np.ndarray
    marks: pd.DataFrame


def rank_distribution(ordered: pd.DataFrame, value: str, parts: list[str]) -> RankDistribution:
    """The distribution of column ``value`` of ``ordered`` (one row per rank, ascending by ``value``)."""
    n = len(ordered)
    v = ordered[value].to_numpy(dtype=float)
    finite = v[np.isfinite(v)]
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    if hi <= lo:  # every rank alike: one bar in the middle of a +-10% span
        lo, hi = lo - (0.1 * abs(lo) or 1.0), hi + (0.1 * abs(hi) or 1.0)
    counts, edges = np.histogram(finite, bins=HIST_BINS, range=(lo, hi))
    columns = ["label", "rank", value, *parts]
    if n == 0:
        return RankDistribution(0, edges, counts.astype(np.int64), pd.DataFrame(columns=columns))
    at = [min(int(np.ceil(p / 100 * n)) - 1 if p else 0, n - 1) for _, p in MARKS]  # nearest rank
    worst = list(range(n - 1, max(n - 1 - WORST, -1), -1))
    rows = ordered.iloc[at + worst][["rank", value, *parts]].reset_index(drop=True)
    rows.insert(0, "label", [m for m, _ in MARKS] + [f"worst {k + 1}" for k in range(len(worst))])
    return RankDistribution(n, edges, counts.astype(np.int64), rows[columns])
