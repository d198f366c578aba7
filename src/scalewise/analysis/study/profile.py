"""The profile across scale and across configurations (P1, P2, P3, P4, P6, P7, P8 of a study).

Built on the one-run analyses: the per-run numbers come from the RunSet's
frames, which ``analysis.run.rows`` filled (the init class already left out,
Wait/Test size rows flagged ``credited``); nothing per run is recomputed here.
Each configuration's profile numbers are taken over its successful profiled
runs: the median for run-level metrics (MPI share, MPI time per rank, bytes),
the mean over repetitions for per-function and per-size numbers (a function
absent from one repetition counts as zero there, so the mean stays honest),
and the POP efficiencies of the representative run (``analysis.study.pop_table``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from scalewise.analysis.study.pop_table import RUN_POP, representative
from scalewise.analysis.study.scaling import SCALE_AXES, Scale, config_keys, settings_label
from scalewise.formatting import human_bytes
from scalewise.model.runset import RunSet

RUN_METRICS = ["mpi_share", "mpi_time_per_rank", "rank_wall", "calls", "bytes", "bytes_per_rank",
               "bytes_per_rank_max", "p2p_bytes", "collective_bytes"]


def _profiled(rs: RunSet) -> pd.DataFrame:
    runs = rs.ok().runs
    return runs[runs["prof_ranks"].notna()]


def profile_scaling(rs: RunSet) -> pd.DataFrame:
    """One row per configuration with profiles: medians of :data:`RUN_METRICS`, the POP numbers of its
    representative run (``pop_run``), runs used, commonest size."""
    keys, runs = config_keys(rs), _profiled(rs)
    cols = keys + ["n_profiles"] + RUN_METRICS + RUN_POP + ["pop_run", "commonest_size", "oversubscribed", "run_ids"]
    if runs.empty:
        return pd.DataFrame(columns=cols)
    sizes = rs.sizes[~rs.sizes["credited"].astype(bool)]  # counted at the Isend/Irecv already
    rows = []
    for key, g in runs.groupby(keys, sort=False, dropna=False):
        row = dict(zip(keys, key)) | {"n_profiles": len(g)}
        row |= {m: float(g[m].median()) for m in RUN_METRICS}
        row |= representative(g)
        s = sizes[sizes["run_id"].isin(g["run_id"])].groupby(["lo", "hi"])["count"].sum()
        row["commonest_size"] = (f"{human_bytes(s.idxmax()[0])}-{human_bytes(s.idxmax()[1])}"
                                 if not s.empty and s.max() > 0 else "")
        row["oversubscribed"] = bool(g["oversubscribed"].astype(bool).any())
        row["run_ids"] = ",".join(g["run_id"])
        rows.append(row)
    return pd.DataFrame(rows, columns=cols)


def function_scaling(rs: RunSet) -> pd.DataFrame:
    """P2/P3/P7: per configuration and MPI function, the mean over repetitions of time per rank, calls and shares."""
    keys, runs = config_keys(rs), _profiled(rs)
    cols = keys + ["function", "fclass", "time_per_rank", "calls", "bytes", "pct_mpi", "pct_wall", "oversubscribed",
                   "run_ids"]
    if runs.empty or rs.functions.empty:
        return pd.DataFrame(columns=cols)
    functions = rs.functions
    rows = []
    for key, g in runs.groupby(keys, sort=False, dropna=False):
        f = functions[functions["run_id"].isin(g["run_id"])]
        n, over = len(g), bool(g["oversubscribed"].astype(bool).any())
        for (fn, fc), h in f.groupby(["function", "fclass"], sort=False):
            rows.append(dict(zip(keys, key)) | {
                "function": fn, "fclass": fc, "time_per_rank": h["time_per_rank"].sum() / n,
                "calls": h["calls"].sum() / n, "bytes": h["bytes"].sum() / n, "pct_mpi": h["pct_mpi"].sum() / n,
                "pct_wall": h["pct_wall"].sum() / n, "oversubscribed": over, "run_ids": ",".join(g["run_id"])})
    out = pd.DataFrame(rows, columns=cols)
    return out.sort_values(keys + ["time_per_rank"], ascending=[True] * len(keys) + [False], kind="stable",
                           na_position="first").reset_index(drop=True)


def top_functions(functions: pd.DataFrame, count: int = 6) -> list[str]:
    """The functions with the most time per rank over the whole study, busiest first."""
    if functions.empty:
        return []
    return functions.groupby("function")["time_per_rank"].sum().sort_values(ascending=False).head(count).index.tolist()


def comm_share(functions: pd.DataFrame, scale: Scale, swept: list[str]) -> pd.DataFrame:
    """P8: share of wall time per MPI function for each value of each swept axis, at the largest scale.

    One row per (axis, context, value, function).  ``context`` names the
    other settings held fixed; the largest scale is taken per context.
    """
    cols = ["axis", "context", "value", scale.axis, "function", "fclass", "pct_wall", "pct_mpi", "run_ids"]
    rows = []
    for axis in [a for a in swept if a not in SCALE_AXES and a != "app"]:
        others = [k for k in scale.series if k != axis]
        label_keys = [k for k in swept if k != axis and k not in SCALE_AXES]
        if functions.empty:
            break
        groups = functions.groupby(others, sort=False, dropna=False) if others else [((), functions)]
        for _, g in groups:
            if g[axis].nunique() < 2:
                continue
            # The largest scale every value of the axis reached, so bars compare like with like.
            largest = g.groupby(axis)[scale.axis].max().min()
            at = g[g[scale.axis] == largest]
            for r in at.to_dict("records"):
                rows.append({"axis": axis, "context": settings_label(r, label_keys), "value": r[axis],
                             scale.axis: largest, "function": r["function"], "fclass": r["fclass"],
                             "pct_wall": r["pct_wall"], "pct_mpi": r["pct_mpi"], "run_ids": r["run_ids"]})
    return pd.DataFrame(rows, columns=cols)


def meaningful(g: pd.DataFrame) -> pd.DataFrame:
    """The rows of one function's series where its time means something to grow from.

    On one rank a collective moves nothing and takes next to no time, so a
    growth "from 0.02 ms" is a growth from nothing: the base is the smallest
    scale with more than one rank where the function took time, and, for a
    function that moves data anywhere in the series, where it moved data.
    """
    g = g[(g["time_per_rank"] > 0) & (g["ranks"].astype(int) > 1 if "ranks" in g else True)]
    return g[g["bytes"] > 0] if (g["bytes"] > 0).any() else g


def growth(functions: pd.DataFrame, scale: Scale, include_oversubscribed: bool = False) -> pd.DataFrame:
    """P7: per series and function, time per rank at its meaningful base and at the largest scale, and the ratio.

    Oversubscribed configurations are left out unless ``include_oversubscribed``."""
    cols = scale.series + ["function", "small", "large", "time_small", "time_large", "growth", "oversubscribed"]
    if functions.empty:
        return pd.DataFrame(columns=cols)
    if not include_oversubscribed:
        functions = functions[~functions["oversubscribed"].astype(bool)]
    rows = []
    for key, g in functions.groupby(scale.series + ["function"], sort=False, dropna=False):
        g = meaningful(g).sort_values(scale.axis)
        if g[scale.axis].nunique() < 2:
            continue
        first, last = g.iloc[0], g.iloc[-1]
        ratio = last["time_per_rank"] / first["time_per_rank"] if first["time_per_rank"] > 0 else np.nan
        rows.append(dict(zip(scale.series + ["function"], key)) | {
            "small": first[scale.axis], "large": last[scale.axis], "time_small": first["time_per_rank"],
            "time_large": last["time_per_rank"], "growth": ratio,
            "oversubscribed": bool(g["oversubscribed"].astype(bool).any())})
    return pd.DataFrame(rows, columns=cols)
