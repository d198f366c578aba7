"""Findings about the profile across scale (P1, P2, P6, P7 of a study), each with its numbers and runs."""

from __future__ import annotations

import pandas as pd

from scalewise.analysis.bound import bound_kind
from scalewise.analysis.finding import Finding
from scalewise.analysis.run.findings import DOMINANT_PCT_MPI
from scalewise.analysis.study.noise import MIN_REPS
from scalewise.analysis.study.scaling import settings_label
from scalewise.analysis.study.study_analysis import StudyAnalysis, at, ids, trusted
from scalewise.formatting import human_bytes, seconds

# A function's time per rank growing by at least this factor over the scales is reported (P7).
GROWTH_WORTH_REPORTING = 1.5
# MPI share moving by at least this many percentage points across scale is reported (P1).
SHARE_MOVE_POINTS = 5.0
# Data per rank "shrinks" when it falls by this fraction; the total "stays flat" within this fraction (P6).
PER_RANK_SHRINKS = 0.25
TOTAL_FLAT_WITHIN = 0.25


def _series(a: StudyAnalysis, frame: pd.DataFrame):
    """(label, rows sorted by scale) for every series with at least two scales."""
    keys = [k for k in a.scale.series if k in a.swept] or ["app"]
    groups = frame.groupby(a.scale.series, sort=False, dropna=False) if a.scale.series else [((), frame)]
    for _, g in groups:
        g = g.sort_values(a.scale.axis)
        if g[a.scale.axis].nunique() >= 2:
            yield settings_label(g.iloc[0], keys), g


def _timed(a: StudyAnalysis) -> pd.DataFrame:
    """Profile rows whose times findings may quote: not oversubscribed (unless asked), enough repetitions."""
    p = trusted(a, a.profile[a.profile["mpi_share"].notna()])
    return p[p["n_profiles"] >= MIN_REPS]


def mpi_share(a: StudyAnalysis) -> list[Finding]:
    """P1: "MPI time rises from 5% at 32 ranks to 50% at 128"."""
    out = []
    p = _timed(a)
    for label, g in _series(a, p):
        first, last = g.iloc[0], g.iloc[-1]
        move = 100 * (last["mpi_share"] - first["mpi_share"])
        verb = "rises" if move >= SHARE_MOVE_POINTS else "falls" if move <= -SHARE_MOVE_POINTS else "stays near"
        span = (f"from {100 * first['mpi_share']:.1f}% at {at(a.scale, first[a.scale.axis])} to "
                f"{100 * last['mpi_share']:.1f}% at {at(a.scale, last[a.scale.axis])}")
        if verb == "stays near":
            span = f"{100 * g['mpi_share'].median():.1f}% ({span})"
        text = f"{label}: MPI time {verb} {span} of the wall time."
        out.append(Finding("mpi-share", text, {"first": float(first["mpi_share"]),
                                                    "last": float(last["mpi_share"]),
                                                    "first_scale": first[a.scale.axis],
                                                    "last_scale": last[a.scale.axis]}, ids(*g["run_ids"])))
    return out


def bound(a: StudyAnalysis) -> list[Finding]:
    """What bounds each series at its largest scale, and the dominant MPI call there."""
    out = []
    p = _timed(a)
    keys = [k for k in a.scale.series if k in a.swept] or ["app"]
    groups = p.groupby(a.scale.series, sort=False, dropna=False) if a.scale.series else [((), p)]
    for _, g in groups:
        last = g.sort_values(a.scale.axis).iloc[-1]
        share = float(last["mpi_share"])
        kind = bound_kind(share, float(last["imbalance_share"]), float(last["transfer_share"]))
        f = a.functions
        mine = f[f["run_ids"] == last["run_ids"]].sort_values("time_per_rank", ascending=False)
        top = ""
        numbers = {"mpi_share": share, "scale": last[a.scale.axis], "kind": kind,
                   "load_balance": float(last["load_balance"]), "imbalance_share": float(last["imbalance_share"]),
                   "transfer_share": float(last["transfer_share"])}
        if not mine.empty and mine.iloc[0]["pct_mpi"] >= DOMINANT_PCT_MPI:
            d = mine.iloc[0]
            top = f"; {d['function']} takes {d['pct_mpi']:.0f}% of the MPI time ({d['pct_wall']:.1f}% of wall)"
            numbers |= {"function": d["function"], "pct_mpi": float(d["pct_mpi"])}
        why = ""
        if "imbalance" in kind:
            why = (f" (load balance {100 * last['load_balance']:.0f}%: waiting for the slowest rank is "
                   f"{100 * last['imbalance_share']:.0f}% of the run time, moving data "
                   f"{100 * max(last['transfer_share'], 0):.0f}%)")
        text = (f"{settings_label(last, keys)} at {at(a.scale, last[a.scale.axis])} is {kind}: MPI is "
                f"{100 * share:.1f}% of the wall time{why}{top}.")
        out.append(Finding("bound", text, numbers, ids(last["run_ids"])))
    return out


def growth(a: StudyAnalysis) -> list[Finding]:
    """P7: the function whose time per rank grows the most with scale, per series."""
    out = []
    g = a.growth[a.growth["growth"] >= GROWTH_WORTH_REPORTING]
    keys = [k for k in a.scale.series if k in a.swept] or ["app"]
    f = a.functions
    for _, h in g.groupby(a.scale.series, sort=False, dropna=False) if a.scale.series else [((), g)]:
        r = h.loc[h["growth"].idxmax()]
        runs = f[(f["function"] == r["function"]) & f[a.scale.axis].isin([r["small"], r["large"]])]
        for k in a.scale.series:
            runs = runs[runs[k] == r[k]]
        text = (f"{settings_label(r, keys)}: {r['function']} time per rank grows {r['growth']:.1f}x from "
                f"{at(a.scale, r['small'])} to {at(a.scale, r['large'])} "
                f"({seconds(r['time_small'])} to {seconds(r['time_large'])}).")
        out.append(Finding("growth", text, {"function": r["function"], "growth": float(r["growth"])},
                                ids(*runs["run_ids"])))
    return out


def volume(a: StudyAnalysis) -> list[Finding]:
    """P6: data per rank against the job total across scale (a good decomposition shrinks the first).

    A one-rank job's bytes are its collectives to itself, not traffic: a change against them would read
    "+79339%", so the series start at their smallest scale of two ranks or more.
    """
    out = []
    p = trusted(a, a.profile[a.profile["bytes"].notna() & (a.profile["bytes"] > 0) & (a.profile["ranks"] > 1)])
    for label, g in _series(a, p):
        first, last = g.iloc[0], g.iloc[-1]
        per_rank = last["bytes_per_rank"] / first["bytes_per_rank"] - 1
        total = last["bytes"] / first["bytes"] - 1
        if per_rank <= -PER_RANK_SHRINKS and abs(total) <= TOTAL_FLAT_WITHIN:
            how = "while the job total stays flat"
        elif abs(total) <= TOTAL_FLAT_WITHIN:
            how = "and the job total stays flat"
        else:
            how = "and the job total changes"
        text = (f"{label}: data sent per rank goes from {human_bytes(first['bytes_per_rank'])} at "
                f"{at(a.scale, first[a.scale.axis])} to {human_bytes(last['bytes_per_rank'])} at "
                f"{at(a.scale, last[a.scale.axis])} ({100 * per_rank:+.0f}%) {how} "
                f"({human_bytes(first['bytes'])} to {human_bytes(last['bytes'])}, {100 * total:+.0f}%).")
        out.append(Finding("volume", text, {"per_rank_change": float(per_rank), "total_change": float(total)},
                                ids(*g["run_ids"])))
    return out


PROFILE_RULES = [mpi_share, bound, growth, volume]
