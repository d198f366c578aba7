"""Tuning sets against the default (figure B3): each parameter set's gain over ``params: default``.

For every configuration that ran with ``params: default`` (same application,
MPI, transport, scale and custom axes), each other parameter set is compared
with it through :func:`scalewise.analysis.ratio.ratio_interval`: the ratio of
medians over the repetitions, its 95% bootstrap interval and the verdict
(``better``, ``worse``, ``same`` within noise, ``too few`` repetitions).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from scalewise.analysis.ratio import ratio_interval

DEFAULT = "default"
TUNING_COLUMNS = ["group", "params", "n", "median", "base_median", "ratio", "low", "high", "gain_pct",
                  "gain_low_pct", "gain_high_pct", "verdict", "metric", "unit", "higher_is_better", "oversubscribed"]


def _gain_pct(ratio: float, higher_is_better: bool) -> float:
    if not np.isfinite(ratio) or ratio <= 0:
        return float("nan")
    return 100.0 * (ratio - 1.0 if higher_is_better else 1.0 / ratio - 1.0)


def tuning_table(perf: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """One row per (configuration, parameter set), the default's own row first with a 0% gain.

    ``perf`` is :func:`scalewise.analysis.study.scaling.performance`'s frame; ``keys`` its setting
    columns.  ``group`` names the configuration by the settings that vary besides ``params``."""
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
                              "ratio": 1.0, "low": np.nan, "high": np.nan, "gain_pct": 0.0, "gain_low_pct": np.nan,
                              "gain_high_pct": np.nan, "verdict": DEFAULT})
        for params, part in group.groupby("params", sort=False):
            if params == DEFAULT:
                continue
            r = ratio_interval(base, part["value"].to_numpy(dtype=float))
            bounds = sorted([_gain_pct(r.low, hib), _gain_pct(r.high, hib)])
            rows.append(common | {"params": params, "n": r.n_other, "median": float(np.median(part["value"])),
                                  "ratio": r.ratio, "low": r.low, "high": r.high,
                                  "gain_pct": _gain_pct(r.ratio, hib), "gain_low_pct": bounds[0],
                                  "gain_high_pct": bounds[1], "verdict": r.verdict(hib)})
    return pd.DataFrame(rows, columns=TUNING_COLUMNS)


def best_sets(table: pd.DataFrame, prefix: str | None = None) -> pd.DataFrame:
    """Per group, the set with the largest gain among those that beat the default beyond noise
    (only sets named ``<prefix>-...`` when ``prefix`` is given).  Groups where none does are left out."""
    t = table[table["verdict"] == "better"]
    if prefix is not None:
        t = t[t["params"].astype(str).str.startswith(prefix + "-")]
    if t.empty:
        return t
    return t.sort_values("gain_pct", ascending=False).groupby("group", sort=False).head(1).reset_index(drop=True)
