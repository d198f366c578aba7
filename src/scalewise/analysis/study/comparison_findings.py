"""Findings from the comparisons at equal scale (B1-B7): merged per pair, each cell, and what stays noise.

Which differences count is the noise rule's decision (``noise``); these rules
only say it.  The opening of a report takes the merged sentences; the cell
sentences are the list they sum up.
"""

from __future__ import annotations

import pandas as pd

from scalewise.analysis import stats
from scalewise.analysis.finding import Finding
from scalewise.analysis.study import noise, scaling
from scalewise.analysis.study.study_analysis import StudyAnalysis, at, ids
from scalewise.formatting import num


def _better_word(unit: str) -> str:
    return "faster" if unit == scaling.JOBS_PER_DAY else "better"


def gain_text(pct: float) -> str:
    """"20.0%"; past +1000% a factor reads better: "284x"."""
    return f"{pct:.1f}%" if pct < 1000 else f"{1 + pct / 100:.0f}x"


def cells(a: StudyAnalysis) -> list[Finding]:
    """Each claimed difference at equal scale, biggest first (the full list; ``merged`` sums them up)."""
    out = []
    c = a.comparisons[a.comparisons["claimed"].astype(bool)].sort_values("gain_pct", ascending=False)
    for r in c.to_dict("records"):
        where = f" ({r['context']})" if r["context"] else ""
        text = (f"{r['axis']} {r['winner']} is {gain_text(r['gain_pct'])} {_better_word(r['unit'])} than {r['loser']} at "
                f"{at(a.scale, r['scale'])}{where}: median {num(r['winner_median'])} vs {num(r['loser_median'])} "
                f"{r['unit']} over {r['n_winner']} and {r['n_loser']} runs (spreads {r['winner_spread_pct']:.0f}% and "
                f"{r['loser_spread_pct']:.0f}%; {r['level']:.0%} interval of the ratio {r['ratio_lo']:.2f}-"
                f"{r['ratio_hi']:.2f}; p {r['p']:.3g} before the report's control of false claims).")
        out.append(Finding("cell", text, {k: r[k] for k in ("axis", "winner", "loser", "gain_pct", "scale",
                                                               "winner_median", "loser_median", "rule", "ratio_lo",
                                                               "ratio_hi", "p", "level")},
                           ids(r["winner_run_ids"], r["loser_run_ids"])))
    return out


def _decided(a: StudyAnalysis) -> pd.DataFrame:
    """The comparisons the noise rule could decide (enough repetitions, not oversubscribed unless asked)."""
    return a.comparisons[a.comparisons["rule"] == noise.RULE]


def _cell_label(a: StudyAnalysis, r: dict) -> str:
    return f"{r['context'] + ' ' if r['context'] else ''}at {at(a.scale, r['scale'])}"


def merged(a: StudyAnalysis) -> list[Finding]:
    """One sentence per setting and pair of values over every cell compared (B1-B7 as a slide says it).

    When every claimed cell has the same winner: "openmpi is faster than mpich
    in 11 of 12 cells, by 14-250%".  When the winner changes from cell to cell
    the pair is an interaction: which value wins depends on the other settings,
    and the sentence says where each one wins rather than stating two facts
    that contradict each other.
    """
    out = []
    c = _decided(a)
    if c.empty:
        return out
    pairs = [tuple(sorted((str(w), str(lo)))) for w, lo in zip(c["winner"], c["loser"])]
    for (axis, pair), g in c.groupby([c["axis"], pd.Series(pairs, index=c.index)], sort=False):
        won = g[g["claimed"].astype(bool)]
        if won.empty:
            continue
        runs = ids(*g["winner_run_ids"], *g["loser_run_ids"])
        winners = won["winner"].astype(str).value_counts()
        lo_g, hi_g = won["gain_pct"].min(), won["gain_pct"].max()
        by = gain_text(lo_g) if lo_g == hi_g else f"{gain_text(lo_g)}-{gain_text(hi_g)}"
        word = _better_word(won["unit"].iloc[0])
        numbers = {"axis": axis, "pair": list(pair), "cells": len(g), "claimed": len(won),
                   "min_gain_pct": float(lo_g), "max_gain_pct": float(hi_g), "winners": winners.to_dict()}
        if len(winners) == 1:
            w = winners.index[0]
            loser = pair[1] if pair[0] == w else pair[0]
            where = "; ".join(_cell_label(a, r) for r in won.to_dict("records")[:3]) + ("; ..." if len(won) > 3 else "")
            text = (f"{axis}: {w} is {word} than {loser} in {len(won)} of {len(g)} cells compared, by {by} ({where}); "
                    f"the other {len(g) - len(won)} are within the noise." if len(won) < len(g) else
                    f"{axis}: {w} is {word} than {loser} in all {len(g)} cells compared, by {by} ({where}).")
            out.append(Finding("faster", text, numbers | {"winner": w, "loser": loser}, runs))
        else:
            parts = []
            for w, n in winners.items():
                mine = won[won["winner"].astype(str) == w].to_dict("records")
                parts.append(f"{w} in {n} ({'; '.join(_cell_label(a, r) for r in mine[:2])}"
                             f"{'; ...' if n > 2 else ''})")
            text = (f"{axis}: which of {pair[0]} and {pair[1]} wins depends on the other settings: "
                    f"{', '.join(parts)}, of {len(g)} cells compared; by {by}.")
            out.append(Finding("interaction", text, numbers, runs))
    return out


def too_few(a: StudyAnalysis) -> list[Finding]:
    """What the noise rule could not decide for want of repetitions, and what it would need."""
    c = a.comparisons[a.comparisons["rule"] == "too-few"]
    if c.empty:
        return []
    have = int(min(c["n_winner"].min(), c["n_loser"].min()))
    text = (f"{len(c)} of {len(a.comparisons)} comparisons rest on fewer than {noise.MIN_REPS} successful "
            f"repetitions a side (as few as {have}) and are not claimed whatever their difference; "
            f"{noise.MIN_REPS} repetitions per configuration (repetitions: {noise.MIN_REPS}) would decide them.")
    return [Finding("note", text, {"count": len(c), "fewest": have, "needed": noise.MIN_REPS},
                    ids(*c["winner_run_ids"], *c["loser_run_ids"]))]


def within_noise(a: StudyAnalysis) -> list[Finding]:
    """One sentence per axis on the differences the repetitions cannot separate from noise."""
    out = []
    decided = _decided(a)
    c = decided[~decided["claimed"].astype(bool)]
    for axis, g in c.groupby("axis", sort=False):
        big = g.loc[g["gain_pct"].idxmax()]
        text = (f"{len(g)} of {int((decided['axis'] == axis).sum())} comparisons along {axis} are within the "
                f"noise of the repetitions and are not claimed (largest: {big['gain_pct']:.1f}% between "
                f"{big['winner']} and {big['loser']} at {at(a.scale, big['scale'])}, with spreads of "
                f"{big['winner_spread_pct']:.0f}% and {big['loser_spread_pct']:.0f}%).")
        out.append(Finding("noise", text, {"axis": axis, "count": len(g), "largest_pct": float(big["gain_pct"])},
                                ids(*g["winner_run_ids"], *g["loser_run_ids"])))
    return out



def multiplicity(a: StudyAnalysis) -> list[Finding]:
    """Said once: how many tests the report made and what its claims are held to."""
    decided = _decided(a)
    _, efficiencies = noise.family(a.comparisons, a.scalability, a.scale.axis, a.include_oversubscribed)
    savings = int((a.energy["saving_rule"] == noise.RULE).sum()) if "saving_rule" in a.energy else 0
    tests = len(decided) + int(efficiencies.sum()) + savings
    if tests == 0:
        return []
    survived = int(decided["claimed"].astype(bool).sum())
    raw = int((decided["p"] <= stats.ALPHA).sum())
    text = (f"This report tests {tests} differences ({len(decided)} comparisons at equal scale, "
            f"{int(efficiencies.sum())} scaling efficiencies, {savings} energy savings), each with an exact rank test; its claims are held to a false discovery rate of "
            f"{noise.FDR:.0%} over all of them at once (Benjamini-Hochberg): {survived} comparisons are claimed, "
            f"of {raw} that one test alone would pass. With n repetitions a side the smallest p a test can reach "
            f"is 1/C(2n, n) (0.05 at 3, 0.014 at 4, 0.004 at 5): with many tests, 3 repetitions claim almost "
            f"nothing and 5 are needed.")
    return [Finding("note", text, {"tests": tests, "comparisons": len(decided), "efficiencies": int(efficiencies.sum()),
                                   "energy_savings": savings, "claimed": survived, "before_control": raw,
                                   "fdr": noise.FDR}, ())]


COMPARISON_RULES = [too_few, multiplicity, merged, cells, within_noise]
