"""MPI share over time and per MPI_Pcontrol phase, for one run (format 1.2).

Time bins: every rank's bins are as wide and start as the ranks leave
MPI_Init together, so bin k is the same span of time on every rank
(docs/runtime.md, "Time bins").  Phases: per phase over ranks, and per
function inside each phase."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from scalewise.model.profile import Profile

PHASE_COLUMNS = ["phase", "ranks", "wall_max", "wall_mean", "mpi_mean", "compute_mean", "mpi_pct", "calls",
                 "top_function"]
PHASE_FUNCTION_COLUMNS = ["phase", "function", "calls", "time", "bytes", "pct_phase_mpi"]


@dataclass(frozen=True)
class Timeline:
    """``share``: MPI share (0-1) of each rank (rows) in each bin (columns),
    NaN past a rank's end.  ``over_time``: per bin, its start, the share of
    all ranks together (MPI time over wall time) and the lowest and highest
    rank's share."""

    width: float
    share: pd.DataFrame
    over_time: pd.DataFrame


def _share(mpi, wall):
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(wall > 0, mpi / np.where(wall > 0, wall, 1), np.nan)


def timeline(profile: Profile) -> Timeline | None:
    """The run's time bins as shares, or None when the log has none."""
    b = profile.bins
    if b.empty:
        return None
    b = b.assign(wall=b["mpi_time"] + b["compute_time"])
    share = b.assign(share=_share(b["mpi_time"].to_numpy(float), b["wall"].to_numpy(float)))
    per_rank = share.pivot(index="rank", columns="bin", values="share").sort_index()
    g = b.groupby("bin")
    over = pd.DataFrame({"start": g["start"].first(), "mpi_share": _share(g["mpi_time"].sum(), g["wall"].sum())})
    over["share_min"] = per_rank.min(axis=0)
    over["share_max"] = per_rank.max(axis=0)
    return Timeline(width=float(b["width"].max()), share=per_rank, over_time=over.reset_index())


def _ordered(phases: pd.DataFrame) -> list[str]:
    """Phases in the order ranks first entered them, "(outside phases)" first."""
    return list(phases.groupby("phase", sort=False)["order"].min().sort_values(kind="stable").index)


def phase_table(profile: Profile) -> pd.DataFrame:
    """Per phase over ranks: how many ranks entered it, the longest and mean
    wall time, mean MPI and compute time, MPI share of the wall time, calls,
    and the function with the most time in it."""
    p, pf = profile.phases, profile.phase_functions
    if p.empty:
        return pd.DataFrame(columns=PHASE_COLUMNS)
    g = p.groupby("phase")
    out = pd.DataFrame({"ranks": g["rank"].nunique(), "wall_max": g["wall"].max(), "wall_mean": g["wall"].mean(),
                        "mpi_mean": g["mpi_time"].mean(), "compute_mean": g["compute_time"].mean()})
    out["mpi_pct"] = 100 * _share(g["mpi_time"].sum(), g["wall"].sum())
    fsum = pf.groupby(["phase", "function"])[["calls", "time"]].sum()
    out["calls"] = fsum["calls"].groupby(level="phase").sum().reindex(out.index).fillna(0).astype(int)
    timed = fsum[fsum["time"] > 0].reset_index().sort_values("time", ascending=False, kind="stable")
    out["top_function"] = timed.drop_duplicates("phase").set_index("phase")["function"].reindex(out.index)
    out = out.reindex(_ordered(p)).reset_index(names="phase")
    # Phases no rank spent time in (entered and left at once) are noise.
    return out[(out["wall_max"] > 0) | (out["calls"] > 0)][PHASE_COLUMNS].reset_index(drop=True)


def phase_function_table(profile: Profile) -> pd.DataFrame:
    """Per (phase, function) over ranks: calls, time, bytes and the share of
    the phase's MPI time; phases in order, functions by time."""
    pf = profile.phase_functions
    if pf.empty:
        return pd.DataFrame(columns=PHASE_FUNCTION_COLUMNS)
    out = pf.groupby(["phase", "function"])[["calls", "time", "bytes"]].sum().reset_index()
    mpi = profile.phases.groupby("phase")["mpi_time"].sum()
    out["pct_phase_mpi"] = 100 * _share(out["time"].to_numpy(float), out["phase"].map(mpi).to_numpy(float))
    order = {name: i for i, name in enumerate(_ordered(profile.phases))}
    out = out.assign(_o=out["phase"].map(order)).sort_values(["_o", "time", "calls"], ascending=[True, False, False],
                                                             kind="stable")
    return out[PHASE_FUNCTION_COLUMNS].reset_index(drop=True)
