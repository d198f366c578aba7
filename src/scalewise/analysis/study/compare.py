"""Configuration against configuration at equal scale, along every swept axis (B1-B7).

For an axis (mpi, transport, params, variant, threads, a custom axis...) two
configurations are compared when every other setting, scale included, is the
same.  The gain is how much better the winner is, in %:
``(P_winner / P_loser - 1) * 100`` for higher-is-better performance (jobs/day
or a rate), ``(P_loser / P_winner - 1) * 100`` for a lower-is-better figure
of merit; "235% better" means 3.35 times the performance.

The noise rule (``analysis.study.noise``) decides which differences are
*claimed*: at least three repetitions a side, an exact rank test of the ratio
of medians beyond a margin (``p``), and then, over every comparison of the
report at once, the Benjamini-Hochberg control of the false discovery rate
(``analysis.study.findings`` applies it; ``claimed`` here is before it).  A pair involving an oversubscribed
configuration (more ranks than cores on a node) is never claimed unless the
caller opts in: its times measure the sharing of cores, not the setting.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from scalewise.analysis import stats
from scalewise.analysis.study import noise
from scalewise.analysis.study.scaling import SCALE_AXES, Scale, settings_label

COMPARISON_COLUMNS = ["axis", "winner", "loser", "gain_pct", "claimed", "rule", "p", "level", "ratio_lo", "ratio_hi",
                      "margin_pct",
                      "winner_median", "loser_median", "winner_spread_pct", "loser_spread_pct", "n_winner", "n_loser",
                      "oversubscribed", "metric", "unit", "scale_axis", "scale", "context", "winner_run_ids",
                      "loser_run_ids"]


def gain(a: float, b: float, higher_is_better: bool) -> float:
    """How much better ``a`` is than ``b``, in % (negative when worse)."""
    return 100.0 * stats.gain((a / b) if higher_is_better else (b / a))


def _pair(a: dict, b: dict, axis: str, scale: Scale, label_keys: list[str], include_oversubscribed: bool) -> dict:
    hib = bool(a["higher_is_better"])
    w, lo = (a, b) if gain(a["median"], b["median"], hib) >= 0 else (b, a)
    v = noise.judge(w["values"], lo["values"], hib)
    over = bool(w["oversubscribed"] or lo["oversubscribed"])
    claimed, rule = v.claimed, v.rule
    if over and not include_oversubscribed:
        claimed, rule = False, "oversubscribed"
    return {
        "axis": axis, "winner": w[axis], "loser": lo[axis], "gain_pct": 100.0 * v.gain, "claimed": claimed,
        "rule": rule, "p": v.p, "level": v.level, "ratio_lo": v.lo, "ratio_hi": v.hi, "margin_pct": 100.0 * v.margin,
        "winner_median": w["median"], "loser_median": lo["median"], "winner_spread_pct": w["spread_pct"],
        "loser_spread_pct": lo["spread_pct"], "n_winner": w["n"], "n_loser": lo["n"], "oversubscribed": over,
        "metric": w["metric"], "unit": w["unit"], "scale_axis": scale.axis, "scale": w[scale.axis],
        "context": settings_label(w, [k for k in label_keys if k != axis and k not in SCALE_AXES]),
        "winner_run_ids": w["run_ids"], "loser_run_ids": lo["run_ids"],
    }


def _typed(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.astype({"claimed": bool, "oversubscribed": bool, "gain_pct": float})


def compare_axis(summary: pd.DataFrame, axis: str, scale: Scale, label_keys: list[str],
                 include_oversubscribed: bool = False) -> pd.DataFrame:
    """Every pair of values of ``axis`` at equal settings otherwise; one row per pair and scale."""
    others = [k for k in scale.series if k != axis] + [scale.axis]
    rows = []
    groups = summary.groupby(others, sort=False, dropna=False) if others else [((), summary)]
    for _, g in groups:
        for a, b in itertools.combinations(g.to_dict("records"), 2):
            if a["metric"] == b["metric"]:
                rows.append(_pair(a, b, axis, scale, label_keys, include_oversubscribed))
    return _typed(pd.DataFrame(rows, columns=COMPARISON_COLUMNS))


def compare_all(summary: pd.DataFrame, scale: Scale, swept: list[str],
                include_oversubscribed: bool = False) -> pd.DataFrame:
    """:func:`compare_axis` for every swept setting that is not a scale or the application.

    Different applications solve different problems: "sem is 300% faster than
    ocean" would be a meaningless claim.
    """
    axes = [a for a in swept if a not in SCALE_AXES and a != "app"]
    parts = [compare_axis(summary, a, scale, swept, include_oversubscribed) for a in axes]
    parts = [p for p in parts if not p.empty]
    if not parts:
        return _typed(pd.DataFrame(columns=COMPARISON_COLUMNS))
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
