"""POP efficiencies across a study's scales (docs/pop.md): the standard POP table of each series.

A configuration's efficiencies are those of one of its runs, the
representative: the repetition with the median run time (the lower middle one
for an even count).  So the nesting holds exactly (parallel = load balance x
communication efficiency) and every number names the run it comes from.  The
per-run numbers are analysis/run/pop_metrics.py's, through the RunSet's frames.

Computation scalability compares the useful (compute) time summed over ranks
with the series' base (the declared base, else its smallest scale):

    strong scaling: useful_total(base) / useful_total(s)
    weak scaling:   useful_total(base) x (P / P_base) / useful_total(s)

where P is the process count: under weak scaling the work, and so the ideal
useful time, grows with the processes.  Global efficiency = parallel
efficiency x computation scalability.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from scalewise.analysis.study.scaling import Scale, settings_label

# Per-run columns a configuration takes from its representative run.
RUN_POP = ["runtime", "compute_time", "useful_max", "load_balance", "communication_efficiency",
           "parallel_efficiency", "imbalance_share", "transfer_share"]
# The POP table's rows, nested as POP nests them: (column, label, depth).
POP_ROWS = [
    ("global_efficiency", "Global efficiency", 0),
    ("parallel_efficiency", "Parallel efficiency", 1),
    ("load_balance", "Load balance", 2),
    ("communication_efficiency", "Communication efficiency", 2),
    ("serialisation_efficiency", "Serialisation efficiency", 3),
    ("transfer_efficiency", "Transfer efficiency", 3),
    ("computation_scalability", "Computation scalability", 1),
]
# Why a study's runs have no serialisation/transfer split.
STUDY_SPLIT_MISSING = ("needs a trace replayed on the ideal network; study runs are not traced "
                       "(scalewise pop TRACE gives the split of one traced run)")


def representative(runs: pd.DataFrame) -> dict:
    """The POP numbers of the run with the median run time, and its ID as ``pop_run``."""
    timed = runs[runs["runtime"].notna()].sort_values(["runtime", "run_id"], kind="stable")
    if timed.empty:
        return {c: np.nan for c in RUN_POP} | {"pop_run": ""}
    r = timed.iloc[(len(timed) - 1) // 2]
    return {c: float(r[c]) for c in RUN_POP} | {"pop_run": r["run_id"]}


def pop_table(profile: pd.DataFrame, scale: Scale, base: dict | None = None, mode: str = "strong") -> pd.DataFrame:
    """The profile table's configurations with computation scalability and global efficiency added.

    ``profile`` is :func:`profile_scaling`'s table (its POP columns from the
    representative runs); ``base`` names the base scale as in scalability.
    """
    cols = list(profile.columns) + ["serialisation_efficiency", "transfer_efficiency", "base_scale",
                                    "computation_scalability", "global_efficiency"]
    if profile.empty:
        return pd.DataFrame(columns=cols)
    groups = profile.groupby(scale.series, sort=False, dropna=False) if scale.series else [((), profile)]
    parts = []
    for _, g in groups:
        g = g.sort_values(scale.axis).copy()
        want = base[scale.axis] if base else g[scale.axis].min()
        at_base = g[g[scale.axis] == want]
        g["base_scale"] = want
        if at_base.empty:
            g["computation_scalability"] = np.nan
        else:
            b = at_base.iloc[0]
            ideal = g["ranks"].astype(float) / float(b["ranks"]) if mode == "weak" else 1.0
            g["computation_scalability"] = b["compute_time"] * ideal / g["compute_time"]
        parts.append(g)
    out = pd.concat(parts, ignore_index=True)
    out["serialisation_efficiency"] = np.nan
    out["transfer_efficiency"] = np.nan
    out["global_efficiency"] = out["parallel_efficiency"] * out["computation_scalability"]
    return out[cols]


def series_tables(pop: pd.DataFrame, scale: Scale, label_keys: list[str]) -> list[tuple[str, pd.DataFrame, set]]:
    """One POP table per series: (its settings, metrics x scales in the order of :data:`POP_ROWS`, the scales
    whose configuration was oversubscribed)."""
    if pop.empty:
        return []
    groups = pop.groupby(scale.series, sort=False, dropna=False) if scale.series else [((), pop)]
    out = []
    for _, g in groups:
        g = g.sort_values(scale.axis)
        label = settings_label(g.iloc[0], label_keys)
        table = g.set_index(scale.axis)[[c for c, _, _ in POP_ROWS]].T
        over = set(g.loc[g["oversubscribed"].fillna(False).astype(bool), scale.axis])  # profile_scaling's flag
        out.append((label, table, over))
    return out
