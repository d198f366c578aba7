"""The decisions of `scalewise tune`, in three stages on B3 tables (docs/tuning.md).

* :func:`screen` only *selects*: per target, the set with the best median
  if it beats the default's by the minimum effect; no verdict is drawn.
* :func:`confirm`: on fresh runs, each selected set against the default at a
  margin of max(5%, the measured spread), Holm's correction over every set
  confirmed at ``TUNE_ALPHA``; the best survivor is chosen.
* :func:`held_out`: a last, fresh round of the default against the chosen
  set only gives the gain reported, and must itself clear the test.

The tables are :func:`scalewise.analysis.study.tuning.tuning_table`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from scalewise.analysis import stats
from scalewise.analysis.study.tuning import DEFAULT, TUNING_COLUMNS

TUNE_ALPHA = 0.05  # family-wise level of the confirmation, and the level of the held-out round


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
    each fresh round (real runs in ``tune/rounds.py``, drawn values in ``bench/tune_sim.py``)."""
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
