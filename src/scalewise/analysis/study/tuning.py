"""Tuning sets against the default: the B3 table of the study report (docs/tuning.md).

:func:`tuning_table`: for every configuration that ran with ``params: default``
(same application, MPI, transport, scale and custom axes), each other
parameter set against it through :func:`scalewise.analysis.stats.compare`:
the ratio of medians, its interval with the level it truly has at those
repetitions, the exact p and the verdict for that one comparison
(``better``, ``worse``, ``same`` within noise, ``too few`` repetitions).
`scalewise tune` decides from these tables in ``tune/decision.py``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from scalewise.analysis import stats

DEFAULT = "default"
TUNING_COLUMNS = ["group", "params", "n", "median", "base_median", "ratio", "low", "high", "level", "p", "margin_pct",
                  "gain_pct", "gain_low_pct", "gain_high_pct", "verdict", "metric", "unit", "higher_is_better",
                  "oversubscribed"]


def comparison_verdict(c: stats.Comparison, worse: stats.Comparison) -> str:
    """``better`` / ``worse`` when the one-sided test passes either way, ``same`` otherwise, or ``too few``."""
    if c.rule == stats.TOO_FEW:
        return "too few"
    return "better" if c.claimed else "worse" if worse.claimed else "same"


def tuning_table(perf: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """One row per (configuration, parameter set), the default's own row first with a 0% gain.

    ``perf`` is :func:`scalewise.analysis.study.scaling.performance`'s frame; ``keys`` its setting
    columns.  ``group`` names the configuration by the settings that vary besides ``params``.
    ``ratio`` is the set's performance over the default's (above 1: the set is better)."""
    if perf.empty or "params" not in perf or DEFAULT not in set(perf["params"]) or perf["params"].nunique() < 2:
        return pd.DataFrame(columns=TUNING_COLUMNS)
    others = [k for k in keys if k != "params" and k in perf]
    varying = [k for k in others if perf[k].nunique() > 1]
    rows = []
    for values, group in perf.groupby(others, sort=False, dropna=False) if others else [((), perf)]:
        values = values if isinstance(values, tuple) else (values,)
        label = ", ".join(f"{k}={v}" for k, v in zip(others, values) if k in varying) or "all runs"
        base = group.loc[group["params"] == DEFAULT, "value"].to_numpy(dtype=float)
        if base.size == 0:
            continue
        hib = bool(group["higher_is_better"].iloc[0])
        common = {"group": label, "base_median": float(np.median(base)), "metric": group["metric"].iloc[0],
                  "unit": group["unit"].iloc[0], "higher_is_better": hib,
                  # the whole group shares one scale: its ranks share cores for every parameter set alike
                  "oversubscribed": "oversubscribed" in group and bool(group["oversubscribed"].astype(bool).any())}
        rows.append(common | {"params": DEFAULT, "n": int(base.size), "median": float(np.median(base)),
                              "ratio": 1.0, "low": np.nan, "high": np.nan, "level": np.nan, "p": np.nan,
                              "margin_pct": np.nan, "gain_pct": 0.0, "gain_low_pct": np.nan, "gain_high_pct": np.nan,
                              "verdict": DEFAULT})
        for params, part in group.groupby("params", sort=False):
            if params == DEFAULT:
                continue
            values = part["value"].to_numpy(dtype=float)
            c = stats.compare(values, base, hib)
            rows.append(common | {"params": params, "n": c.n_a, "median": float(np.median(values)),
                                  "ratio": c.ratio, "low": c.lo, "high": c.hi, "level": c.level, "p": c.p,
                                  "margin_pct": 100.0 * c.margin, "gain_pct": 100.0 * c.gain,
                                  "gain_low_pct": 100.0 * stats.gain(c.lo), "gain_high_pct": 100.0 * stats.gain(c.hi),
                                  "verdict": comparison_verdict(c, stats.compare(base, values, hib))})
    return pd.DataFrame(rows, columns=TUNING_COLUMNS)


def best_sets(table: pd.DataFrame, prefix: str | None = None) -> pd.DataFrame:
    """Per group, the set with the largest gain among those whose one comparison says ``better``
    (only sets named ``<prefix>-...`` when ``prefix`` is given); no correction for the number of sets."""
    t = table[table["verdict"] == "better"]
    if prefix is not None:
        t = t[t["params"].astype(str).str.startswith(prefix + "-")]
    if t.empty:
        return t
    return t.sort_values("gain_pct", ascending=False).groupby("group", sort=False).head(1).reset_index(drop=True)
