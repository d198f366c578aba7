"""Where the time went in one run: MPI vs compute per rank, time and calls per function.

Answers figures P1 (MPI vs compute per rank and overall), P2 (time per MPI
function as % of wall and % of MPI time) and P3 (calls per function and % of
calls).  Percentages of wall follow IPM's convention: a function's time summed
over all ranks divided by the wall time summed over all ranks, so that
"MPI_Waitall 63% of wall" means 63% of all rank-seconds of the job.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from scalewise.analysis.run.distribution import RankDistribution, rank_distribution
from scalewise.model.profile import Profile

# The percentiles shown for a per-rank quantity when there are too many ranks
# to draw one bar each.
PERCENTILES = (0, 5, 25, 50, 75, 95, 100)


@dataclass(frozen=True)
class Spread:
    """How one per-rank quantity varies across ranks."""

    total: float
    mean: float
    min: float
    max: float
    max_over_mean: float  # 1.0 = perfectly balanced; NaN when the mean is 0
    cv: float  # coefficient of variation (population std / mean); NaN when the mean is 0
    min_rank: int
    max_rank: int
    percentiles: dict[int, float]


@dataclass(frozen=True)
class TimeBreakdown:
    """P1: MPI vs compute time, per rank and overall; from format 1.4 also
    the profiler's own time, neither MPI nor compute (wall = MPI + profiler
    + compute per rank)."""

    per_rank: pd.DataFrame  # rank, host, wall, mpi_time, profiler_time, compute_time, mpi_pct; ordered by rank
    sorted_by_mpi: pd.DataFrame  # the same rows ordered by mpi_pct (ascending), position in `order`
    nranks_present: int
    total_wall: float  # rank-seconds
    total_mpi: float
    total_compute: float
    mpi_share: float  # total_mpi / total_wall, 0..1; NaN without wall time
    wall: Spread
    mpi: Spread
    compute: Spread
    mpi_pct: Spread  # per-rank MPI share of that rank's wall, in %
    mpi_pct_distribution: RankDistribution  # of mpi_pct, with compute, profiler and MPI time of the named ranks
    # The profiler's own time (docs/runtime.md), None before format 1.4: in
    # the window (out of compute), and outside it at MPI_Init and MPI_Finalize.
    profiler: Spread | None = None
    total_profiler: float = 0.0
    profiler_init: Spread | None = None
    profiler_finalize: Spread | None = None


def spread(values: pd.Series, ranks: pd.Series) -> Spread:
    """Summary of one per-rank quantity; empty input gives NaNs and rank -1."""
    v = np.asarray(values, dtype=float)
    if v.size == 0:
        nan = float("nan")
        return Spread(0.0, nan, nan, nan, nan, nan, -1, -1, {p: nan for p in PERCENTILES})
    mean = float(v.mean())
    std = float(v.std())  # population std: the ranks are the whole job, not a sample
    r = np.asarray(ranks)
    return Spread(
        total=float(v.sum()),
        mean=mean,
        min=float(v.min()),
        max=float(v.max()),
        max_over_mean=float(v.max() / mean) if mean > 0 else float("nan"),
        cv=std / mean if mean > 0 else float("nan"),
        min_rank=int(r[int(v.argmin())]),
        max_rank=int(r[int(v.argmax())]),
        percentiles={p: float(x) for p, x in zip(PERCENTILES, np.percentile(v, PERCENTILES))},
    )


def time_breakdown(profile: Profile) -> TimeBreakdown:
    """MPI vs compute time of every rank present, and the job-wide MPI share."""
    r = profile.ranks.sort_values("rank")
    per_rank = pd.DataFrame({
        "rank": r["rank"].astype(int).to_numpy(),
        "host": r["host"].astype(str).to_numpy(),
        "wall": r["wall"].astype(float).to_numpy(),
        "mpi_time": r["mpi_time"].astype(float).to_numpy(),
        # not measured (before format 1.4): 0 here, the profiler None below
        "profiler_time": (r["profiler_time"].astype(float).fillna(0.0).to_numpy() if "profiler_time" in r
                          else np.zeros(len(r))),
        "compute_time": r["compute_time"].astype(float).to_numpy(),
    })
    wall = per_rank["wall"].to_numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        per_rank["mpi_pct"] = np.where(wall > 0, 100.0 * per_rank["mpi_time"].to_numpy() / wall, np.nan)
    sorted_by_mpi = per_rank.sort_values(["mpi_pct", "rank"], kind="stable").reset_index(drop=True)
    sorted_by_mpi.insert(0, "order", np.arange(len(sorted_by_mpi)))
    total_wall = float(per_rank["wall"].sum())
    total_mpi = float(per_rank["mpi_time"].sum())
    ranks = per_rank["rank"]
    measured = "profiler_time" in r
    outside = {c: spread(r[c].astype(float), ranks) if measured and c in r else None
               for c in ("profiler_init", "profiler_finalize")}
    return TimeBreakdown(
        per_rank=per_rank,
        sorted_by_mpi=sorted_by_mpi,
        nranks_present=len(per_rank),
        total_wall=total_wall,
        total_mpi=total_mpi,
        total_compute=float(per_rank["compute_time"].sum()),
        mpi_share=total_mpi / total_wall if total_wall > 0 else float("nan"),
        wall=spread(per_rank["wall"], ranks),
        mpi=spread(per_rank["mpi_time"], ranks),
        compute=spread(per_rank["compute_time"], ranks),
        mpi_pct=spread(per_rank["mpi_pct"].fillna(0.0), ranks),
        mpi_pct_distribution=rank_distribution(sorted_by_mpi, "mpi_pct", ["compute_time", "profiler_time", "mpi_time"]),
        profiler=spread(per_rank["profiler_time"], ranks) if measured else None,
        total_profiler=float(per_rank["profiler_time"].sum()),
        **outside,
    )


FUNCTION_TABLE_COLUMNS = [
    "function", "fclass", "calls", "time", "bytes", "pct_wall", "pct_mpi", "pct_calls",
    "time_rank_min", "time_rank_max", "time_rank_mean", "ranks_calling", "tmin", "tmax",
]


def function_table(profile: Profile) -> pd.DataFrame:
    """P2 and P3: one row per MPI function over all ranks, ordered by time
    (MPI_Init/Init_thread/Finalize left out: they are outside the window).

    ``pct_wall`` is time / (wall summed over ranks) in %, ``pct_mpi`` is time
    / (all MPI time) in %, ``pct_calls`` is calls / (all MPI calls) in %.
    ``time_rank_*`` describe how the function's time is spread over ranks
    (ranks that never called it count as 0 s).
    """
    # MPI_Init, MPI_Init_thread and MPI_Finalize (class "init") run outside the
    # measured window (docs/runtime.md): they are not part of wall or MPI time.
    f = profile.functions
    f = f[f["fclass"] != "init"]
    if f.empty:
        return pd.DataFrame(columns=FUNCTION_TABLE_COLUMNS)
    totals = profile.function_totals()
    totals = totals[totals["fclass"] != "init"].reset_index()
    total_wall = float(profile.ranks["wall"].sum())
    total_time = float(totals["time"].sum())
    total_calls = float(totals["calls"].sum())
    nranks = max(len(profile.ranks), 1)
    per_rank = f.groupby("function", sort=False)["time"].agg(["min", "max", "sum", "count"])
    per_rank = per_rank.reindex(totals["function"])
    called_everywhere = per_rank["count"].to_numpy() >= nranks
    out = pd.DataFrame({
        "function": totals["function"].astype(str).to_numpy(),
        "fclass": totals["fclass"].astype(str).to_numpy(),
        "calls": totals["calls"].astype(np.int64).to_numpy(),
        "time": totals["time"].astype(float).to_numpy(),
        "bytes": totals["bytes"].astype(np.int64).to_numpy(),
    })
    out["pct_wall"] = 100.0 * out["time"] / total_wall if total_wall > 0 else np.nan
    out["pct_mpi"] = 100.0 * out["time"] / total_time if total_time > 0 else np.nan
    out["pct_calls"] = 100.0 * out["calls"] / total_calls if total_calls > 0 else np.nan
    out["time_rank_min"] = np.where(called_everywhere, per_rank["min"].to_numpy(), 0.0)
    out["time_rank_max"] = per_rank["max"].to_numpy()
    out["time_rank_mean"] = per_rank["sum"].to_numpy() / nranks
    out["ranks_calling"] = per_rank["count"].astype(np.int64).to_numpy()
    out["tmin"] = totals["tmin"].astype(float).to_numpy()
    out["tmax"] = totals["tmax"].astype(float).to_numpy()
    return out.sort_values(["time", "calls"], ascending=False, kind="stable").reset_index(drop=True)


def calls_table(functions: pd.DataFrame) -> pd.DataFrame:
    """P3: the function table re-ordered by number of calls."""
    cols = ["function", "fclass", "calls", "pct_calls"]
    return functions[cols].sort_values(["calls", "function"], ascending=[False, True], kind="stable").reset_index(drop=True)


def class_table(functions: pd.DataFrame) -> pd.DataFrame:
    """Time, calls and bytes per function class (p2p, collective, wait, ...)."""
    if functions.empty:
        return pd.DataFrame(columns=["fclass", "calls", "time", "bytes", "pct_wall", "pct_mpi"])
    g = functions.groupby("fclass", sort=False)[["calls", "time", "bytes", "pct_wall", "pct_mpi"]].sum()
    return g.sort_values("time", ascending=False).reset_index()
