"""Tuning sets against the default (figure B3) and the decisions of `scalewise tune` (docs/tuning.md).

:func:`tuning_table`: for every configuration that ran with ``params: default``
(same application, MPI, transport, scale and custom axes), each other
parameter set against it through :func:`scalewise.analysis.stats.compare`:
the ratio of medians, its interval with the level it truly has at those
repetitions, the exact p and the verdict for that one comparison
(``better``, ``worse``, ``same`` within noise, ``too few`` repetitions).

The three stages of `tune` read these tables:

* :func:`screen` only *selects*: per target, the set with the best median
  if it beats the default's by the minimum effect; no verdict is drawn.
* :func:`confirm`: on fresh runs, each selected set against the default at a
  margin of max(5%, the measured spread), Holm's correction over every set
  confirmed at ``TUNE_ALPHA``; the best survivor is chosen.
* :func:`held_out`: a last, fresh round of the default against the chosen
  set only gives the gain reported, and must itself clear the test.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from scalewise.analysis import stats

DEFAULT = "default"
TUNE_ALPHA = 0.05  # family-wise level of the confirmation, and the level of the held-out round
TUNING_COLUMNS = ["group", "params", "n", "median", "base_median", "ratio", "low", "high", "level", "p", "margin_pct",
                  "gain_pct", "gain_low_pct", "gain_high_pct", "verdict", "metric", "unit", "higher_is_better",
                  "oversubscribed"]


def verdict(c: stats.Comparison, worse: stats.Comparison) -> str:
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
                                  "verdict": verdict(c, stats.compare(base, values, hib))})
    return pd.DataFrame(rows, columns=TUNING_COLUMNS)


def screen(table: pd.DataFrame, sets: list[str], min_gain: float = stats.MARGIN) -> pd.Series | None:
    """Screening's pick among ``sets``: the best median gain, if at least ``min_gain``; never a verdict."""
    rows = table[table["params"].isin(list(sets))]
    rows = rows[rows["gain_pct"] >= 100.0 * min_gain]
    return None if rows.empty else rows.sort_values("gain_pct", ascending=False).iloc[0]


def confirm(table: pd.DataFrame, alpha: float = TUNE_ALPHA) -> pd.DataFrame:
    """The sets of a confirmation table that beat the default with Holm's correction over all of them,
    best gain first (empty when none does)."""
    rows = table[table["params"] != DEFAULT]
    decided = rows[rows["verdict"] != "too few"]
    if decided.empty:
        return decided
    stand = stats.holm(decided["p"].to_numpy(dtype=float), alpha)
    return decided[stand].sort_values("gain_pct", ascending=False)


def held_out(table: pd.DataFrame, chosen: str, alpha: float = TUNE_ALPHA) -> pd.Series | None:
    """The held-out round's row for ``chosen`` when it beats the default again at ``alpha``, else None."""
    rows = table[table["params"] == chosen]
    if rows.empty:
        return None
    row = rows.iloc[0]
    return row if row["verdict"] != "too few" and row["p"] <= alpha else None


def best_sets(table: pd.DataFrame, prefix: str | None = None) -> pd.DataFrame:
    """Per group, the set with the largest gain among those whose one comparison says ``better``
    (only sets named ``<prefix>-...`` when ``prefix`` is given); no correction for the number of sets."""
    t = table[table["verdict"] == "better"]
    if prefix is not None:
        t = t[t["params"].astype(str).str.startswith(prefix + "-")]
    if t.empty:
        return t
    return t.sort_values("gain_pct", ascending=False).groupby("group", sort=False).head(1).reset_index(drop=True)


@dataclass(frozen=True)
class Decision:
    """What the three stages of `tune` decided (tables empty for the stages not reached)."""

    picks: dict[str, pd.Series | None]  # screening's pick per target
    confirmed: pd.DataFrame  # the confirmation round's table
    passed: pd.DataFrame  # its sets that pass with Holm's correction, best first
    held_out: pd.DataFrame  # the held-out round's table
    best: pd.Series | None  # the chosen set's held-out row when it beats the default again


def procedure(screening: pd.DataFrame, targets: dict[str, list[str]],
              confirm_round: Callable[[list[str]], pd.DataFrame],
              held_out_round: Callable[[str], pd.DataFrame]) -> Decision:
    """Screen, confirm, hold out: the whole of `tune`'s decision, given the screening table and a way to run
    each fresh round (real runs in ``campaign/tune_run.py``, drawn values in ``bench/tune_sim.py``)."""
    picks = {target: screen(screening, sets) for target, sets in targets.items()}
    chosen = [str(row["params"]) for row in picks.values() if row is not None]
    empty = pd.DataFrame(columns=TUNING_COLUMNS)
    if not chosen:
        return Decision(picks, empty, empty, empty, None)
    confirmed = confirm_round(chosen)
    passed = confirm(confirmed)
    if passed.empty:
        return Decision(picks, confirmed, passed, empty, None)
    name = str(passed.iloc[0]["params"])
    held = held_out_round(name)
    return Decision(picks, confirmed, passed, held, held_out(held, name))
