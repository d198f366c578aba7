"""What a study says, as sentences that carry their numbers and the run IDs they came from.

``analyse_study(study)`` computes every study-level result once (performance,
scalability, comparisons, the profile across scale, energy) and derives the
findings from them, so the page, the tables and the findings quote the same
numbers.  Benchmark rules live here; rules about the profile across scale
live in ``profile_findings``.  Thresholds sit next to the rule using them.
"""

from __future__ import annotations

from scalewise.analysis.finding import Finding
from scalewise.analysis.study import compare, energy, scaling
from scalewise.analysis.study.profile import comm_share, function_scaling, growth, profile_scaling, top_functions
from scalewise.analysis.study.profile_findings import PROFILE_RULES
from scalewise.analysis.study.results import StudyAnalysis, at, ids
from scalewise.analysis.study.scaling import settings_label
from scalewise.analysis.study.setup import axes_rows, setup_rows
from scalewise.analysis.study.tuning import tuning_table
from scalewise.formatting import num
from scalewise.model.runset import StudyResults

# Scaling efficiency called "good" from this fraction (the studies quote ">90%").
GOOD_EFFICIENCY = 0.90
# Energy savings below this share of the dearest configuration's cost are not worth a sentence.
ENERGY_SAVING_WORTH_REPORTING = 0.05


def analyse_study(study: StudyResults, base: dict | None = None, metric: str = "auto",
                  watts_per_node: float = energy.DEFAULT_WATTS_PER_NODE,
                  price_per_kwh: float = energy.DEFAULT_PRICE_PER_KWH) -> StudyAnalysis:
    """Every study-level result and the findings drawn from them."""
    keys = scaling.config_keys(study)
    swept = study.swept
    perf = scaling.performance(study, metric)
    summary = scaling.summarise(perf, keys)
    scale = scaling.scale_of(summary if not summary.empty else study.runs, keys)
    comparisons = compare.compare_all(summary, scale, swept)
    functions = function_scaling(study)
    a = StudyAnalysis(
        study=study, metric=metric, base=base, swept=swept, scale=scale, perf=perf, summary=summary,
        scalability=scaling.scalability(summary, scale, base), comparisons=comparisons,
        averages=compare.average_gains(comparisons), profile=profile_scaling(study),
        functions=functions, comm=comm_share(functions, scale, swept),
        growth=growth(functions, scale),
        energy=energy.energy_costs(summary, scale, watts_per_node, price_per_kwh),
        failed=study.failed().runs, watts_per_node=watts_per_node, price_per_kwh=price_per_kwh,
        top_functions=top_functions(functions), setup=setup_rows(study), axes=axes_rows(study),
        tuning=tuning_table(perf, keys))
    for rule in BENCHMARK_RULES + PROFILE_RULES:
        a.findings.extend(rule(a))
    return a


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


def _better_word(unit: str) -> str:
    return "faster" if unit == scaling.JOBS_PER_DAY else "better"


def _gain(pct: float) -> str:
    """"20.0%"; past +1000% a factor reads better: "284x"."""
    return f"{pct:.1f}%" if pct < 1000 else f"{1 + pct / 100:.0f}x"


def faster(a: StudyAnalysis) -> list[Finding]:
    """Claimed differences at equal scale, biggest first."""
    out = []
    c = a.comparisons[a.comparisons["claimed"].astype(bool)].sort_values("gain_pct", ascending=False)
    for r in c.to_dict("records"):
        where = f" ({r['context']})" if r["context"] else ""
        single = "; single runs, no spread known" if r["rule"] == "single" else ""
        text = (f"{r['axis']} {r['winner']} is {_gain(r['gain_pct'])} {_better_word(r['unit'])} than {r['loser']} at "
                f"{at(a.scale, r['scale'])}{where}: median {num(r['winner_median'])} vs {num(r['loser_median'])} "
                f"{r['unit']} over {r['n_winner']} and {r['n_loser']} runs{single}.")
        out.append(Finding("faster", text, {k: r[k] for k in ("axis", "winner", "loser", "gain_pct", "scale",
                                                                   "winner_median", "loser_median", "rule")},
                                ids(r["winner_run_ids"], r["loser_run_ids"])))
    return out


def within_noise(a: StudyAnalysis) -> list[Finding]:
    """One sentence per axis on the differences the repetitions cannot separate from noise."""
    out = []
    c = a.comparisons[~a.comparisons["claimed"].astype(bool)]
    for axis, g in c.groupby("axis", sort=False):
        big = g.loc[g["gain_pct"].idxmax()]
        text = (f"{len(g)} of {int((a.comparisons['axis'] == axis).sum())} comparisons along {axis} are within the "
                f"noise of the repetitions and are not claimed (largest: {big['gain_pct']:.1f}% between "
                f"{big['winner']} and {big['loser']} at {at(a.scale, big['scale'])}).")
        out.append(Finding("noise", text, {"axis": axis, "count": len(g), "largest_pct": float(big["gain_pct"])},
                                ids(*g["winner_run_ids"], *g["loser_run_ids"])))
    return out


def averages(a: StudyAnalysis) -> list[Finding]:
    """Gains that hold at every scale, averaged over the scales ("27% faster on average")."""
    out = []
    for r in a.averages.to_dict("records"):
        if r["scales"] < 2 or r["claimed_at"] < r["scales"]:
            continue
        rows = a.comparisons[(a.comparisons["axis"] == r["axis"]) & (a.comparisons["context"] == r["context"])]
        rows = rows[rows["winner"].astype(str).isin([r["better"], r["worse"]])
                    & rows["loser"].astype(str).isin([r["better"], r["worse"]])]
        where = f" ({r['context']})" if r["context"] else ""
        text = (f"{r['axis']} {r['better']} beats {r['worse']} at every one of {r['scales']} scales{where}, "
                f"by {_gain(r['mean_gain_pct'])} on average.")
        out.append(Finding("average", text, dict(r), ids(*rows["winner_run_ids"], *rows["loser_run_ids"])))
    return out


def scalability(a: StudyAnalysis) -> list[Finding]:
    """B8: how far each series scales at or above GOOD_EFFICIENCY, and where it ends."""
    out = []
    s = a.scalability[~a.scalability["base_missing"].astype(bool)]
    keys = [k for k in a.scale.series if k in a.swept] or ["app"]
    for _, g in s.groupby(a.scale.series, sort=False, dropna=False) if a.scale.series else [((), s)]:
        g = g.sort_values(a.scale.axis)
        if len(g) < 2:
            continue
        last, base_at = g.iloc[-1], g.iloc[0]["base_scale"]
        good = g[g["efficiency"] >= GOOD_EFFICIENCY]
        label = settings_label(last, keys)
        if last["efficiency"] >= GOOD_EFFICIENCY:
            text = (f"{label}: scaling efficiency stays at or above {GOOD_EFFICIENCY:.0%} up to "
                    f"{at(a.scale, last[a.scale.axis])} ({last['efficiency']:.0%}, speedup {last['speedup']:.2f} "
                    f"of an ideal {last['ideal']:.2f}, against {at(a.scale, base_at)}).")
        else:
            reach = (f"stays at or above {GOOD_EFFICIENCY:.0%} up to {at(a.scale, good[a.scale.axis].max())} and "
                     if good[a.scale.axis].max() > base_at else "")
            text = (f"{label}: scaling efficiency {reach}falls to {last['efficiency']:.0%} at "
                    f"{at(a.scale, last[a.scale.axis])} (speedup {last['speedup']:.2f} of an ideal "
                    f"{last['ideal']:.2f}, against {at(a.scale, base_at)}).")
        out.append(Finding("scaling", text, {"efficiency": float(last["efficiency"]),
                                                  "scale": last[a.scale.axis], "base": base_at,
                                                  "speedup": float(last["speedup"])},
                                ids(*g["run_ids"], *g["base_run_ids"])))
    return out


def energy_savings(a: StudyAnalysis) -> list[Finding]:
    """B9: at the largest scale of each application, what the cheapest configuration saves per year."""
    out = []
    e = a.energy
    if e.empty or e["yearly_cost"].isna().all():
        return out
    keys = [k for k in a.swept if k not in scaling.SCALE_AXES and k != "app"]
    for app, g in e.groupby("app", sort=False):
        top = g[g[a.scale.axis] == g[a.scale.axis].max()]
        if len(top) < 2 or not keys:
            continue
        best, worst = top.loc[top["yearly_cost"].idxmin()], top.loc[top["yearly_cost"].idxmax()]
        if best["saving"] < ENERGY_SAVING_WORTH_REPORTING * worst["yearly_cost"]:
            continue
        text = (f"app={app} at {at(a.scale, best[a.scale.axis])}: {settings_label(best, keys)} saves "
                f"{best['saving']:,.2f} per year in electricity over {settings_label(worst, keys)} for the same "
                f"{best['jobs_per_year']:,.0f} jobs ({best['yearly_kwh']:,.1f} vs {worst['yearly_kwh']:,.1f} kWh at "
                f"{a.watts_per_node:g} W per node and {a.price_per_kwh:g} per kWh).")
        out.append(Finding("energy", text, {"saving": float(best["saving"]), "app": app,
                                                 "yearly_cost_best": float(best["yearly_cost"]),
                                                 "yearly_cost_worst": float(worst["yearly_cost"])},
                                ids(best["run_ids"], worst["run_ids"])))
    return out


BENCHMARK_RULES = [failed_runs, faster, averages, within_noise, scalability, energy_savings]
