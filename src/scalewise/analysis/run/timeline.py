"""MPI share over time and per MPI_Pcontrol phase, for one run (format 1.2).

Time bins: every rank's bins are as wide and start as the ranks leave
MPI_Init together, so bin k is the same span of time on every rank
(docs/runtime.md, "Time bins").  Phases: per phase over ranks, and per
function inside each phase.

Phase marks on the timeline: the log keeps each phase's totals, not when it
was entered, so a phase can be placed in time only when the phases ran one
after another in the order first entered.  :func:`phase_marks` lays each
rank's phases out that way and keeps the layout only when, at every
boundary of every rank, the MPI and compute time the rank's own bins hold up
to that moment agree with the phases' totals within ``MARK_TOLERANCE_BINS``
bins; a phase entered again later, or time outside phases between two of
them, breaks the agreement, a run that looks the same throughout leaves the
layout's start open, and either way the timeline says why the phases are not
marked."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from scalewise.model.profile import Profile

PHASE_COLUMNS = ["phase", "ranks", "wall_max", "wall_mean", "mpi_mean", "compute_mean", "mpi_pct", "calls",
                 "top_function"]
PHASE_FUNCTION_COLUMNS = ["phase", "function", "calls", "time", "bytes", "pct_phase_mpi"]
# A phase boundary agrees with the bins when the time they hold up to it is within this many bin widths of the
# phases' totals: interpolating inside one bin can be a whole bin off, plus rounding.
MARK_TOLERANCE_BINS = 1.5
# Starts of the first phase that agree with the bins may spread over this many tolerances (9 bins) before the
# bins are said not to tell where the phases were.
AMBIGUOUS_FROM = 6.0
OUTSIDE = "(outside phases)"
OTHER = "(other phases)"


@dataclass(frozen=True)
class PhaseMarks:
    """Where each phase ran (``marks``: phase, start, end in seconds after MPI_Init, medians over ranks), or why
    the phases cannot be placed (``why``); ``marks`` is empty then."""

    marks: pd.DataFrame
    why: str = ""


@dataclass(frozen=True)
class Timeline:
    """``share``: MPI share (0-1) of each rank (rows) in each bin (columns),
    NaN past a rank's end.  ``over_time``: per bin, its start, the share of
    all ranks together (MPI time over wall time) and the lowest and highest
    rank's share."""

    width: float
    share: pd.DataFrame
    over_time: pd.DataFrame
    phases: PhaseMarks | None = None  # None when the run marked no phase


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
    return Timeline(width=float(b["width"].max()), share=per_rank, over_time=over.reset_index(),
                    phases=phase_marks(profile))


def _rank_errors(phases: pd.DataFrame, bins: pd.DataFrame, heads: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each candidate start of the first phase, how far one rank's bins are from its named phases laid out
    one after another from there (the worst boundary, MPI or compute, seconds); and the layout's steps."""
    ph = phases.sort_values("order", kind="stable")
    named = ph[ph["phase"] != OUTSIDE]
    b = bins.sort_values("bin")
    edges = np.concatenate([[0.0], (b["start"] + b["mpi_time"] + b["compute_time"]).to_numpy(float)])
    steps = np.concatenate([[0.0], np.cumsum(named["wall"].to_numpy(float))])
    worst = np.zeros(len(heads))
    for c in ("mpi_time", "compute_time"):
        held = np.concatenate([[0.0], np.cumsum(b[c].to_numpy(float))])
        want = np.concatenate([[0.0], np.cumsum(named[c].to_numpy(float))])
        at = np.interp(heads[:, None] + steps[None, :], edges, held) - np.interp(heads, edges, held)[:, None]
        worst = np.maximum(worst, np.max(np.abs(at - want[None, :]), axis=1))
    return worst, steps


def _layout(p: pd.DataFrame, bins: pd.DataFrame, tolerance: float) -> tuple[list[np.ndarray] | None, str]:
    """Every rank's phase boundaries from one start of the first phase, or None and why.

    The ranks leave MPI_Init together, and a phase switch usually follows a collective, so the first phase
    is taken to start at the same moment on every rank; how long after MPI_Init is unknown (time outside
    phases may come before the phases, after them or both), so every bin edge up to the least time any rank
    spent outside phases is tried, and the starts at which every rank's bins agree are kept.  They must lie
    within ``AMBIGUOUS_FROM`` tolerances of each other; the one that agrees best is taken."""
    spare = p[p["phase"] == OUTSIDE].groupby("rank")["wall"].sum().reindex(p["rank"].unique(), fill_value=0.0)
    limit = float(spare.min())
    edges = (bins["start"] + bins["mpi_time"] + bins["compute_time"]).to_numpy(float)
    heads = np.unique(np.concatenate([[0.0, limit], edges[(edges > 0) & (edges < limit)]]))
    worst, steps = np.zeros(len(heads)), {}
    for rank, mine in p.groupby("rank"):
        err, steps[rank] = _rank_errors(mine, bins[bins["rank"] == rank], heads)
        worst = np.maximum(worst, err)
    agree = heads[worst <= tolerance]
    if not len(agree):
        return None, ("the phases did not run once each, one after another (a phase entered again, or time "
                      "outside phases between them): the log keeps their totals, not when they ran")
    if agree.max() - agree.min() > AMBIGUOUS_FROM * tolerance:
        return None, ("the time bins cannot tell how much of the time outside phases came before them (the run "
                      "looks the same throughout)")
    head = float(heads[np.argmin(worst)])
    return [head + s for s in steps.values()], ""


def phase_marks(profile: Profile) -> PhaseMarks | None:
    """The phases placed in time (see the module docstring), or None when the run marked no phase."""
    p, bins = profile.phases, profile.bins
    if p.empty or bins.empty or set(p["phase"]) <= {OUTSIDE, OTHER}:
        return None
    none = pd.DataFrame(columns=["phase", "start", "end"])
    if OTHER in set(p["phase"]):
        return PhaseMarks(none, "more phases than SCALEWISE_MAX_PHASES: the rest are summed in one row")
    order = _ordered(p)
    for rank, mine in p.groupby("rank"):
        if list(mine.sort_values("order", kind="stable")["phase"]) != order:
            return PhaseMarks(none, f"rank {rank} entered the phases in another order than the others")
    layouts, why = _layout(p, bins, MARK_TOLERANCE_BINS * float(bins["width"].max()))
    if layouts is None:
        return PhaseMarks(none, why)
    mid = np.median(np.vstack(layouts), axis=0)
    named = [ph for ph in order if ph != OUTSIDE]
    marks = pd.DataFrame({"phase": named, "start": mid[:-1], "end": mid[1:]})
    return PhaseMarks(marks[marks["end"] > marks["start"]].reset_index(drop=True))


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
