"""What a study says, as sentences that carry their numbers and the run IDs they came from.

``analyse_study(study)`` computes every study-level result once (performance,
scalability, comparisons, the profile across scale, energy) and derives the
findings from them, so the page, the tables and the findings quote the same
numbers.  Benchmark rules live here; rules about the profile across scale
live in ``profile_findings``.  Thresholds sit next to the rule using them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from scalewise.analysis.finding import Finding
from scalewise.analysis.overhead import launch_overhead
from scalewise.analysis.run.findings import IMBALANCE_MAX_OVER_MEAN
from scalewise.analysis.study import compare, energy, noise, scaling
from scalewise.analysis.study.comparison_findings import COMPARISON_RULES
from scalewise.analysis.study.noise import MIN_REPS
from scalewise.analysis.study.pop_table import pop_table
from scalewise.analysis.study.profile import comm_share, function_scaling, growth, profile_scaling, top_functions
from scalewise.analysis.study.profile_findings import PROFILE_RULES
from scalewise.analysis.study.scaling import settings_label
from scalewise.analysis.study.setup import axes_rows, setup_rows
from scalewise.analysis.study.study_analysis import StudyAnalysis, at, ids, trusted
from scalewise.analysis.study.tuning import tuning_table
from scalewise.model.runset import StudyResults

# Scaling efficiency called "good" from this fraction (the studies quote ">90%").
GOOD_EFFICIENCY = 0.90
# Energy savings below this share of the dearest configuration's cost are not worth a sentence.
ENERGY_SAVING_WORTH_REPORTING = 0.05


def analyse_study(study: StudyResults, base: dict | None = None, metric: str = "auto",
                  watts_per_node: float | None = None, price_per_kwh: float = energy.DEFAULT_PRICE_PER_KWH,
                  scaling_mode: str = "strong", include_oversubscribed: bool = False) -> StudyAnalysis:
    """Every study-level result and the findings drawn from them.

    ``watts_per_node``: the node power the user gave; without it the energy
    table uses the default assumption and no energy finding is written.
    ``include_oversubscribed``: draw findings from oversubscribed runs too
    (each such finding then says so); by default they stay in the tables only.
    """
    keys = scaling.config_keys(study)
    swept = study.swept
    perf = scaling.performance(study, metric)
    summary = scaling.summarise(perf, keys)
    scale = scaling.scale_of(summary if not summary.empty else study.runs, keys)
    comparisons = compare.compare_all(summary, scale, swept, include_oversubscribed)
    scalability = scaling.scalability(summary, scale, base, scaling_mode)
    watts = watts_per_node if watts_per_node is not None else energy.DEFAULT_WATTS_PER_NODE
    costs = energy.energy_costs(summary, scale, watts, price_per_kwh, include_oversubscribed=include_oversubscribed)
    comparisons, scalability, costs = controlled(comparisons, scalability, costs, scale.axis,
                                                 include_oversubscribed)
    functions = function_scaling(study)
    profile = profile_scaling(study)
    a = StudyAnalysis(
        study=study, metric=metric, base=base, swept=swept, scale=scale, perf=perf, summary=summary,
        scalability=scalability, comparisons=comparisons,
        averages=compare.average_gains(comparisons[~comparisons["oversubscribed"] | include_oversubscribed]),
        profile=profile, pop=pop_table(profile, scale, base, scaling_mode), functions=functions, comm=comm_share(functions, scale, swept),
        growth=growth(functions, scale, include_oversubscribed),
        energy=costs,
        failed=study.failed().runs, watts_per_node=watts, price_per_kwh=price_per_kwh,
        top_functions=top_functions(functions), setup=setup_rows(study), axes=axes_rows(study),
        scaling_mode=scaling_mode, include_oversubscribed=include_oversubscribed,
        power_given=watts_per_node is not None, tuning=tuning_table(perf, keys))
    for rule in BENCHMARK_RULES + PROFILE_RULES:
        a.findings.extend(rule(a))
    if include_oversubscribed:
        a.findings[:] = [with_caveat(a, f) for f in a.findings]
    return a


def controlled(comparisons, scalability, costs, axis: str, include_oversubscribed: bool):
    """The report's claims held to the noise rule's false discovery rate over all its tests at once.

    The family is every comparison the rank test decided, every scaling
    efficiency with enough repetitions at both ends, other than the base
    against itself (not oversubscribed unless asked), and every energy saving
    tested against the dearest configuration: the claims that survive
    Benjamini-Hochberg over all of them stay ``claimed`` /
    ``efficiency_decided`` / ``saving_claimed``; the rest are "within the noise"."""
    comparisons, s, costs = comparisons.copy(), scalability.copy(), costs.copy()
    decided, tested = noise.family(comparisons, s, axis, include_oversubscribed)
    saved = (costs["saving_rule"] == noise.RULE).to_numpy(dtype=bool) if not costs.empty else np.zeros(0, bool)
    saving_p = costs["saving_p"].to_numpy(dtype=float) if not costs.empty else np.zeros(0)
    p = np.concatenate([comparisons["p"].to_numpy(dtype=float), s["efficiency_p"].to_numpy(dtype=float), saving_p])
    stand = noise.control(p, np.concatenate([decided, tested, saved]))
    n, m = len(comparisons), len(comparisons) + len(s)
    comparisons["claimed"] = comparisons["claimed"].astype(bool) & stand[:n]
    s["efficiency_decided"] = s["efficiency_decided"].astype(bool) & stand[n:m]
    if not costs.empty:
        costs["saving_claimed"] = costs["saving_claimed"].astype(bool) & stand[m:]
    return comparisons, s, costs


def launch_share(a: StudyAnalysis) -> list[Finding]:
    """Said once when the figure compared is the launcher's wall and launch and teardown are most of it
    (the profiled runs' own runtime against their walls, analysis/overhead.py)."""
    if a.perf.empty or "runtime" not in a.study.runs:
        return []
    timed = a.perf[a.perf["metric"] == scaling.JOBS_PER_DAY]
    runs = a.study.runs.set_index("run_id")
    pairs = [(float(runs.at[r, "wall"]), float(runs.at[r, "runtime"])) for r in timed["run_id"]
             if r in runs.index and pd.notna(runs.at[r, "runtime"]) and pd.notna(runs.at[r, "wall"])]
    o = launch_overhead(pairs)
    if o is None or not o.warn:
        return []
    return [Finding("note", f"The figure compared is the wall of the launch: {o.text}.", o.to_json_dict(),
                    tuple(timed["run_id"]))]


def failed_runs(a: StudyAnalysis) -> list[Finding]:
    f, total = a.failed, len(a.study.runs)
    if f.empty:
        return []
    counts = f["status"].value_counts()
    parts = ", ".join(f"{n} {s}" for s, n in counts.items())
    reasons = f["reason"].fillna("no reason recorded").value_counts()
    top = reasons.index[0]
    text = (f"{len(f)} of {total} runs did not succeed ({parts}); they are left out of every number below. "
            f"Most common reason: {top} ({reasons.iloc[0]} runs).")
    return [Finding("failed", text, {"not_ok": len(f), "total": total,
                                            "by_status": {str(k): int(v) for k, v in counts.items()}},
                         tuple(f["run_id"]))]


def oversubscribed_runs(a: StudyAnalysis) -> list[Finding]:
    """Said once: how many runs shared cores, and that no finding comes from them (unless asked)."""
    ok = a.study.ok().runs
    over = ok[ok["oversubscribed"].astype(bool)]
    if over.empty:
        return []
    worst = over.loc[(over["placed_per_node"] * over["threads"] / over["cores_per_node"]).idxmax()]
    shared = f"up to {worst['placed_per_node']} ranks on a node of {worst['cores_per_node']} cores"
    drawn = ("findings drawn from them say so" if a.include_oversubscribed else
             "no finding is drawn from them (--include-oversubscribed draws them, each with this caveat)")
    text = (f"{len(over)} of {len(ok)} successful runs were oversubscribed ({shared}): their ranks shared cores, "
            f"so their times measure the sharing, not the settings. Their numbers stay in the tables, marked; "
            f"{drawn}.")
    return [Finding("note", text, {"oversubscribed": len(over), "ok": len(ok),
                                   "placed_per_node": int(worst["placed_per_node"]),
                                   "cores_per_node": int(worst["cores_per_node"])}, tuple(over["run_id"]))]


def with_caveat(a: StudyAnalysis, f: Finding) -> Finding:
    """The finding with a caveat when some of its runs were oversubscribed."""
    if f.kind in ("failed", "note"):
        return f
    runs = a.study.runs
    over = runs[runs["run_id"].isin(f.runs) & runs["oversubscribed"].astype(bool)]
    if over.empty:
        return f
    text = (f"{f.text} Caveat: {len(over)} of its runs were oversubscribed (up to "
            f"{over['placed_per_node'].max()} ranks on {over['cores_per_node'].min()} cores).")
    return Finding(f.kind, text, f.numbers | {"oversubscribed_runs": len(over)}, f.runs)


def scalability(a: StudyAnalysis) -> list[Finding]:
    """B8: how far each series scales at or above GOOD_EFFICIENCY, and where it ends."""
    out = []
    s = trusted(a, a.scalability[~a.scalability["base_missing"].astype(bool)])
    # An efficiency is a ratio of two medians: both need the repetitions a comparison needs, and the
    # last scale's efficiency is said only when the noise rule tells it from perfect scaling or it is good.
    s = s[(s["n"] >= MIN_REPS) & (s["base_run_ids"].str.count(",") + 1 >= MIN_REPS)]
    keys = [k for k in a.scale.series if k in a.swept] or ["app"]
    for _, g in s.groupby(a.scale.series, sort=False, dropna=False) if a.scale.series else [((), s)]:
        g = g.sort_values(a.scale.axis)
        if len(g) < 2:
            continue
        last, base_at = g.iloc[-1], g.iloc[0]["base_scale"]
        if not last["efficiency_decided"] and last["efficiency"] < GOOD_EFFICIENCY:
            continue  # a loss the repetitions cannot tell from noise
        good = g[g["efficiency"] >= GOOD_EFFICIENCY]
        label = settings_label(last, keys)
        if last["efficiency"] >= GOOD_EFFICIENCY:
            text = (f"{label}: {a.scaling_mode} scaling efficiency stays at or above {GOOD_EFFICIENCY:.0%} up to "
                    f"{at(a.scale, last[a.scale.axis])} ({last['efficiency']:.0%}, speedup {last['speedup']:.2f} "
                    f"of an ideal {last['ideal']:.2f}, against {at(a.scale, base_at)}).")
        else:
            reach = (f"stays at or above {GOOD_EFFICIENCY:.0%} up to {at(a.scale, good[a.scale.axis].max())} and "
                     if good[a.scale.axis].max() > base_at else "")
            text = (f"{label}: {a.scaling_mode} scaling efficiency {reach}falls to {last['efficiency']:.0%} at "
                    f"{at(a.scale, last[a.scale.axis])} ({last['efficiency_level']:.0%} interval "
                    f"{last['efficiency_lo']:.0%}-{last['efficiency_hi']:.0%}; speedup {last['speedup']:.2f} of an ideal "
                    f"{last['ideal']:.2f}, against {at(a.scale, base_at)}).")
        out.append(Finding("scaling", text, {"efficiency": float(last["efficiency"]),
                                                  "scale": last[a.scale.axis], "base": base_at,
                                                  "speedup": float(last["speedup"])},
                                ids(*g["run_ids"], *g["base_run_ids"])))
    return out


def energy_savings(a: StudyAnalysis) -> list[Finding]:
    """B9: at the largest scale of each application, what the cheapest configuration saves per year,
    only where the noise rule claims the performance difference behind the saving."""
    out = []
    e = trusted(a, a.energy)
    if not a.power_given or e.empty or e["yearly_cost"].isna().all():
        return out
    keys = [k for k in a.swept if k not in scaling.SCALE_AXES and k != "app"]
    for app, g in e.groupby("app", sort=False):
        top = g[g[a.scale.axis] == g[a.scale.axis].max()]
        if len(top) < 2 or not keys:
            continue
        best, worst = top.loc[top["yearly_cost"].idxmin()], top.loc[top["yearly_cost"].idxmax()]
        if not best["saving_claimed"] or best["saving"] < ENERGY_SAVING_WORTH_REPORTING * worst["yearly_cost"]:
            continue  # within noise of the dearest, or too small to be worth a sentence
        text = (f"app={app} at {at(a.scale, best[a.scale.axis])}: {settings_label(best, keys)} saves "
                f"{best['saving']:,.2f} per year in electricity over {settings_label(worst, keys)} for the same "
                f"{best['jobs_per_year']:,.0f} jobs ({best['yearly_kwh']:,.1f} vs {worst['yearly_kwh']:,.1f} kWh at "
                f"{a.watts_per_node:g} W per node and {a.price_per_kwh:g} per kWh), from their {best['metric']} "
                f"({best['median']:.4g} vs {worst['median']:.4g} {best['unit']}, a difference the noise rule "
                f"claims).")
        out.append(Finding("energy", text, {"saving": float(best["saving"]), "app": app,
                                                 "yearly_cost_best": float(best["yearly_cost"]),
                                                 "yearly_cost_worst": float(worst["yearly_cost"])},
                                ids(best["run_ids"], worst["run_ids"])))
    return out


def imbalance(a: StudyAnalysis) -> list[Finding]:
    """POP load balance per series: compute time imbalanced at the one-run finding's threshold.

    POP's load balance is mean / max compute time, so the busiest rank computes
    1 / load balance times the mean: the one-run rule's "max over mean" exactly,
    read from each configuration's representative run.
    """
    out = []
    p = trusted(a, a.pop[a.pop["load_balance"].notna()]) if not a.pop.empty else a.pop
    if p.empty:
        return out
    keys = [k for k in a.scale.series if k in a.swept] or ["app"]
    for _, g in p.groupby(a.scale.series, sort=False, dropna=False) if a.scale.series else [((), p)]:
        g = g.sort_values(a.scale.axis)
        g = g[g["ranks"] > 1]  # one rank has nothing to balance
        bad = g[1.0 / g["load_balance"] >= IMBALANCE_MAX_OVER_MEAN]
        if bad.empty:
            continue
        worst = bad.loc[bad["load_balance"].idxmin()]
        where = ", ".join(f"{100 * r['load_balance']:.0f}% at {at(a.scale, r[a.scale.axis])}"
                          for _, r in bad.iterrows())
        text = (f"{settings_label(worst, keys)}: compute time is imbalanced: POP load balance {where} (the busiest "
                f"rank computes up to {1 / worst['load_balance']:.2f}x the mean; the others wait for it inside MPI).")
        out.append(Finding("imbalance", text, {"load_balance": float(worst["load_balance"]),
                                               "max_over_mean": float(1 / worst["load_balance"]),
                                               "scale": worst[a.scale.axis],
                                               "scales": [s for s in bad[a.scale.axis]]},
                           ids(*bad["pop_run"])))
    return out


BENCHMARK_RULES = [failed_runs, oversubscribed_runs, launch_share, *COMPARISON_RULES, scalability, energy_savings, imbalance]
