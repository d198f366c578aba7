"""Configuration against configuration at equal scale, along every swept axis (B1-B7).

For an axis (mpi, transport, params, variant, threads, a custom axis...) two
configurations are compared when every other setting, scale included, is the
same.  The gain is how much better the winner is, in %:
``(P_winner / P_loser - 1) * 100`` for higher-is-better performance (jobs/day
or a rate), ``(P_loser / P_winner - 1) * 100`` for a lower-is-better figure
of merit; "235% better" means 3.35 times the performance.

The noise guard: a difference is *claimed* only when the two noise intervals
of the medians (see ``scalewise.analysis.study.scaling``) do not overlap.  When
either side is a single run nothing is known about the noise, and a
difference is claimed only from ``SINGLE_RUN_CLAIM_PCT`` up, marked as such.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from scalewise.analysis.study.scaling import SCALE_AXES, Scale, settings_label

SINGLE_RUN_CLAIM_PCT = 10.0

COMPARISON_COLUMNS = ["axis", "winner", "loser", "gain_pct", "claimed", "rule", "winner_median", "loser_median",
                      "winner_interval", "loser_interval", "n_winner", "n_loser", "metric", "unit", "scale_axis",
                      "scale", "context", "winner_run_ids", "loser_run_ids"]


def gain(a: float, b: float, higher_is_better: bool) -> float:
    """How much better ``a`` is than ``b``, in % (negative when worse)."""
    return 100.0 * ((a / b) if higher_is_better else (b / a)) - 100.0


def _claim(w: dict, lo: dict, gain_pct: float) -> tuple[bool, str]:
    if w["interval"] == "single" or lo["interval"] == "single":
        return gain_pct >= SINGLE_RUN_CLAIM_PCT, "single"
    disjoint = w["lo"] > lo["hi"] or w["hi"] < lo["lo"]
    rule = "bootstrap95" if w["interval"] == lo["interval"] == "bootstrap95" else "range"
    return bool(disjoint), rule


def compare_axis(summary: pd.DataFrame, axis: str, scale: Scale, label_keys: list[str]) -> pd.DataFrame:
    """Every pair of values of ``axis`` at equal settings otherwise; one row per pair and scale."""
    others = [k for k in scale.series if k != axis] + [scale.axis]
    rows = []
    groups = summary.groupby(others, sort=False, dropna=False) if others else [((), summary)]
    for _, g in groups:
        recs = g.to_dict("records")
        for a, b in itertools.combinations(recs, 2):
            if a["metric"] != b["metric"]:
                continue
            hib = bool(a["higher_is_better"])
            g_ab = gain(a["median"], b["median"], hib)
            w, lo = (a, b) if g_ab >= 0 else (b, a)
            gain_pct = abs(g_ab) if g_ab >= 0 else gain(b["median"], a["median"], hib)
            claimed, rule = _claim(w, lo, gain_pct)
            rows.append({
                "axis": axis, "winner": w[axis], "loser": lo[axis], "gain_pct": gain_pct, "claimed": claimed,
                "rule": rule, "winner_median": w["median"], "loser_median": lo["median"],
                "winner_interval": f"{w['lo']:.6g}..{w['hi']:.6g}", "loser_interval": f"{lo['lo']:.6g}..{lo['hi']:.6g}",
                "n_winner": w["n"], "n_loser": lo["n"], "metric": w["metric"], "unit": w["unit"],
                "scale_axis": scale.axis, "scale": w[scale.axis],
                "context": settings_label(w, [k for k in label_keys if k != axis and k not in SCALE_AXES]),
                "winner_run_ids": w["run_ids"], "loser_run_ids": lo["run_ids"],
            })
    return pd.DataFrame(rows, columns=COMPARISON_COLUMNS).astype({"claimed": bool, "gain_pct": float})


def compare_all(summary: pd.DataFrame, scale: Scale, swept: list[str]) -> pd.DataFrame:
    """:func:`compare_axis` for every swept setting that is not a scale or the application.

    Different applications solve different problems: "sem is 300% faster than
    ocean" would be a meaningless claim.
    """
    axes = [a for a in swept if a not in SCALE_AXES and a != "app"]
    parts = [compare_axis(summary, a, scale, swept) for a in axes]
    parts = [p for p in parts if not p.empty]
    if not parts:
        return pd.DataFrame(columns=COMPARISON_COLUMNS).astype({"claimed": bool, "gain_pct": float})
    return pd.concat(parts, ignore_index=True)


def average_gains(comparisons: pd.DataFrame) -> pd.DataFrame:
    """Per axis, pair of values and context: the mean gain over every scale (geometric, of the ratios).

    ``claimed_at`` counts the scales at which the difference passed the noise
    guard; the sign is oriented to the pair's first-named value.
    """
    if comparisons.empty:
        return pd.DataFrame(columns=["axis", "better", "worse", "context", "mean_gain_pct", "scales", "claimed_at"])
    c = comparisons.copy()
    c["pair"] = [tuple(sorted((str(w), str(lo)))) for w, lo in zip(c["winner"], c["loser"])]
    rows = []
    for (axis, pair, ctx), g in c.groupby(["axis", "pair", "context"], sort=False):
        first = pair[0]
        # Ratio of first over second value for each scale, as a log, so averaging is symmetric.
        logs = [np.log1p(gp / 100.0) * (1 if str(w) == first else -1) for w, gp in zip(g["winner"], g["gain_pct"])]
        mean = float(np.expm1(np.mean(logs)) * 100.0)
        better, worse = (pair[0], pair[1]) if mean >= 0 else (pair[1], pair[0])
        rows.append({"axis": axis, "better": better, "worse": worse, "context": ctx,
                     "mean_gain_pct": abs(mean) if mean >= 0 else float(np.expm1(-np.mean(logs)) * 100.0),
                     "scales": len(g), "claimed_at": int(g["claimed"].sum())})
    return pd.DataFrame(rows)
