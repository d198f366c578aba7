"""The study figure registry: which figures a study report shows, where, with what caption.

Most entries are fixed; the performance figures (B1-B7) are one per swept
setting, so :func:`figures_for` builds that part of the list from the
analysis.  ``missing`` says in words why a figure cannot be drawn for this
study; the page shows that sentence in its place.
"""

from __future__ import annotations

import dataclasses

import pandas as pd

from scalewise.analysis.study.scaling import SCALE_AXES
from scalewise.analysis.study.study_analysis import StudyAnalysis
from scalewise.report.figure import FigureSpec
from scalewise.report.study import figures as sf

# Reference figure per kind of swept setting (figures.md, B1-B7).
AXIS_REFS = {"transport": "B1", "interconnect": "B1", "mpi": "B2", "params": "B3", "variant": "B4", "threads": "B5"}
SECTIONS = {
    "performance": "Performance per setting (B1-B7)",
    "scalability": "Scalability (B8)",
    "profile": "The profile across scale (P1, P2, P6, P7, P8)",
    "comparisons": "Comparisons at equal scale, and energy (B9)",
    "tuning": "MPI parameter sets against the default (B3)",
}


def series_keys(a: StudyAnalysis) -> list[str]:
    """Swept settings that are not the scale: what tells one curve from another."""
    return [k for k in a.swept if k not in SCALE_AXES]


def panel_keys(a: StudyAnalysis) -> list[str]:
    """Panels split by application when there are several, so curves of different units never share axes."""
    return ["app"] if "app" in a.swept else []


def _curve_keys(a: StudyAnalysis) -> list[str]:
    return [k for k in series_keys(a) if k not in panel_keys(a)]


def _no_perf(a: StudyAnalysis) -> str | None:
    return "No run succeeded, so there is no performance to plot." if a.summary.empty else None


def _no_scaling(a: StudyAnalysis) -> str | None:
    if a.summary.empty:
        return "No run succeeded."
    if a.summary[a.scale.axis].nunique() < 2:
        return f"The study runs at a single {a.scale.axis.rstrip('s')} count: there is no scaling to show."
    return None


def _no_profile(a: StudyAnalysis) -> str | None:
    return "No successful run has a readable profile (set profile: true in the study)." if a.profile.empty else None


def _no_functions(a: StudyAnalysis) -> str | None:
    return _no_profile(a) or ("No MPI calls were recorded." if a.functions.empty else None)


def _no_comm(a: StudyAnalysis) -> str | None:
    return _no_functions(a) or ("No setting other than the scale is swept, so there is nothing to set side by side."
                                if a.comm.empty else None)


def _no_energy(a: StudyAnalysis) -> str | None:
    if not a.power_given:
        return ("No node power was given (--watts-per-node, or report: watts_per_node: in the study file): a cost "
                "chart from an assumed power would look like a measurement, so B9 is drawn only from the power you "
                "give. The table below shows the assumption.")
    if a.energy.empty and not a.summary.empty:
        return "Every configuration was oversubscribed: their times measure the sharing of cores, not the settings."
    return _no_perf(a) or ("No run has a wall time." if a.energy["yearly_cost"].isna().all() else None)


def _performance_spec(axis: str) -> FigureSpec:
    def arguments(a: StudyAnalysis) -> tuple:
        others = [k for k in a.swept if k not in SCALE_AXES and k != axis]
        return (a.summary, axis, a.scale.axis, others)

    return FigureSpec(
        f"perf-{axis}", AXIS_REFS.get(axis, "B6"), "performance", f"Performance by {axis}",
        sf.performance_by_axis, arguments,
        f"Median performance of each configuration against the scale, one curve per value of {axis}; bars "
        "span the slowest and fastest repetition. One panel per combination of the other swept settings.", _no_perf)


FIXED: list[FigureSpec] = [
    FigureSpec("b8-efficiency", "B8", "scalability", "Scaling efficiency",
                    sf.b8_efficiency, lambda a: (a.scalability, a.scale.axis, panel_keys(a), _curve_keys(a)),
                    "Performance per rank (per node) relative to each series' base run, in %. 100% is perfect "
                    "scaling; the dotted line marks 90%.", _no_scaling),
    FigureSpec("p1-mpi-share", "P1", "profile", "MPI time across scale",
                    sf.p1_mpi_share, lambda a: (a.profile, a.scale.axis, panel_keys(a), _curve_keys(a)),
                    "MPI time summed over ranks as a share of wall time summed over ranks (median over "
                    "repetitions).", _no_profile),
    FigureSpec("p7-function-time", "P7", "profile", "Time per MPI function across scale",
                    sf.p7_function_time,
                    lambda a: (a.functions, a.scale.axis, series_keys(a) or ["app"], a.top_functions),
                    "Seconds per rank in each of the busiest MPI functions (mean over repetitions), one panel per "
                    "series: which call grows as the job grows.", _no_functions),
    FigureSpec("p6-data", "P6", "profile", "Data transferred across scale",
                    sf.p6_data, lambda a: (a.profile, a.scale.axis, series_keys(a) or ["app"]),
                    "Bytes sent per rank and by all ranks: point-to-point at the sender, plus collective and "
                    "one-sided payloads. A good decomposition shrinks the first while the second stays flat.",
                    _no_profile),
    FigureSpec("p8-comm-share", "P8", "profile", "MPI time per function, side by side",
                    sf.p8_comm_share, lambda a: (a.comm, a.top_functions, oversubscribed_runs(a)),
                    "Share of wall time in each MPI function for every value of each swept setting, at the "
                    "largest scale all its values reached.", _no_comm),
    FigureSpec("b9-energy", "B9", "comparisons", "Electricity cost of the same workload",
                    sf.b9_energy, lambda a: (a.energy, a.scale.axis, series_keys(a)),
                    "Yearly electricity cost of the jobs the fastest configuration finishes in a year, at each "
                    "application's largest scale, for the given node power and price, from the same performance "
                    "the comparisons use. Green: cheaper than the dearest configuration by a difference the noise "
                    "rule claims; grey: the dearest itself, or not told apart from it. Oversubscribed "
                    "configurations are left out.",
                    _no_energy),
]


def _no_tuning(a: StudyAnalysis) -> str | None:
    return "No parameter set ran beside params=default." if a.tuning.empty else None


TUNING = FigureSpec(
    "b3-tuning", "B3", "tuning", "Gain of each parameter set over the default",
    sf.b3_tuning, lambda a: (a.tuning,),
    "Gain of each parameter set over params=default in the figure of merit (ratio of medians over the "
    "repetitions, as speed for lower-is-better figures), with the interval of the exact rank test at the level "
    "the repetitions give it (90% at 3 a side). Green: better beyond the margin in that one test; red: worse; "
    "grey: within noise; pale: fewer than 3 repetitions a side.", _no_tuning)


def oversubscribed_runs(a: StudyAnalysis) -> frozenset:
    """IDs of the successful runs that had more ranks than cores on a node."""
    runs = a.study.runs
    return frozenset(runs.loc[runs["oversubscribed"].astype(bool), "run_id"])


def _draws_oversubscribed(spec: FigureSpec, a: StudyAnalysis, over: frozenset) -> bool:
    """Whether the figure's table holds an oversubscribed configuration (by flag, else by its run IDs)."""
    if not over or spec.missing(a):
        return False
    frame = spec.arguments(a)[0]
    if not isinstance(frame, pd.DataFrame) or frame.empty:
        return False
    if "oversubscribed" in frame:
        return bool(frame["oversubscribed"].fillna(False).astype(bool).any())
    if "run_ids" in frame:
        return any(set(str(r).split(",")) & over for r in frame["run_ids"])
    return False


def oversubscribed_note(a: StudyAnalysis) -> str:
    drawn = ("findings drawn from them say so" if a.include_oversubscribed else
             "no finding is drawn from them (--include-oversubscribed draws them)")
    return (" Hollow markers and hatched bars are oversubscribed configurations: more ranks than cores on a node, "
            f"so their times measure the sharing of cores, not the settings; {drawn}.")


def figures_for(a: StudyAnalysis) -> list[FigureSpec]:
    """The performance figures (one per swept setting, else one curve per application), the fixed ones, and
    B3's tuning section when the study compares parameter sets with a default; a figure that draws an
    oversubscribed configuration says so in its caption."""
    axes = [k for k in a.swept if k not in SCALE_AXES and k != "app"] or ["app"]
    specs = [_performance_spec(axis) for axis in axes] + FIXED + ([TUNING] if not a.tuning.empty else [])
    over = oversubscribed_runs(a)
    return [dataclasses.replace(s, caption=s.caption + oversubscribed_note(a)) if _draws_oversubscribed(s, a, over)
            else s for s in specs]
