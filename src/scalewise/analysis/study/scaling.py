"""Performance per run and per configuration, speedup and scaling efficiency (B1-B8).

Performance is the application's figure of merit when every successful run
of that application reports one (its own ``higher_is_better`` respected),
otherwise jobs per day, ``86400 / wall seconds`` (higher is better), as the
reference studies plot it.  A configuration is one combination of settings;
its repetitions are summarised by the median and a distribution-free
interval of that median from its order statistics, with the coverage it truly
has at that many runs (``interval_level``: 75% for 3 runs, 87.5% for 4, 95%
or more from 6; :func:`scalewise.analysis.stats.median_interval`); 2 runs give
their range, 1 run the value itself (docs/study-report.md).

Scaling efficiency follows POPperf (B8): performance per rank (or per node)
relative to a base run of the same series, in %.  With a throughput-like
performance P at scale s, speedup = P / P_base and efficiency = speedup /
ideal.  For a lower-is-better figure of merit the speedup is inverted (base /
value).  The ideal depends on the study's scaling mode (``scaling:`` in the
study file): strong scaling (the same problem on more ranks) ideally runs
s / s_base times faster; weak scaling (the problem grows with the ranks)
ideally keeps its performance, so the ideal speedup is 1 (a figure of merit
that counts the whole job's work should then be given per rank).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from scalewise.analysis import stats
from scalewise.analysis.study import noise
from scalewise.errors import ScalewiseError
from scalewise.model.runset import RunSet

JOBS_PER_DAY = "jobs/day"
SCALE_AXES = ("ranks", "nodes", "ranks_per_node")
SCALING_MODES = ("strong", "weak")


def settings_label(row, keys: list[str]) -> str:
    """``app=sem mpi=openmpi``: the settings that name a series, or that a comparison holds fixed."""
    return " ".join(f"{k}={row[k]}" for k in keys)


def config_keys(rs: RunSet) -> list[str]:
    """Setting columns that identify a configuration (everything but the repetition)."""
    return [s for s in rs.settings if s in rs.runs]


def performance(rs: RunSet, metric: str = "auto") -> pd.DataFrame:
    """One row per successful run: its settings, run_id, repetition, ``value`` and how to read it.

    ``metric``: ``auto`` (figure of merit when every ok run of the app has
    one, else jobs/day), ``fom`` or ``jobs/day``.
    """
    if metric not in ("auto", "fom", JOBS_PER_DAY):
        raise ScalewiseError(f"unknown performance metric {metric!r} (expected auto, fom or jobs/day)")
    runs = rs.ok().runs
    keys = config_keys(rs)
    parts = []
    for app, group in runs.groupby("app", sort=False):
        has_fom = group["fom"].notna().all() and (group["fom_name"].fillna("wall") != "wall").all()
        if metric == "fom" and not has_fom:
            raise ScalewiseError(f"application {app!r}: not every successful run reports a figure of merit")
        use_fom = has_fom and metric != JOBS_PER_DAY
        out = group[keys + ["run_id", "repetition", "wall", "oversubscribed"]].copy()
        if use_fom:
            out["value"] = group["fom"].astype(float)
            out["metric"] = group["fom_name"].astype(str)
            out["unit"] = group["fom_unit"].fillna("").astype(str)
            out["higher_is_better"] = group["higher_is_better"].fillna(False).astype(bool)
        else:
            out["value"] = 86400.0 / group["wall"].astype(float)
            out["metric"], out["unit"], out["higher_is_better"] = JOBS_PER_DAY, JOBS_PER_DAY, True
        parts.append(out)
    cols = keys + ["run_id", "repetition", "wall", "oversubscribed", "value", "metric", "unit", "higher_is_better"]
    return pd.concat(parts, ignore_index=True)[cols] if parts else pd.DataFrame(columns=cols)


def median_interval(values: np.ndarray) -> tuple[float, float, str, float]:
    """The interval of the median of ``values``, the rule that made it and its true coverage."""
    v = np.asarray(values, dtype=float)
    lo, hi, level = stats.median_interval(v)
    rule = "order statistics" if len(v) >= stats.MIN_REPS else ("range" if len(v) == 2 else "single")
    return lo, hi, rule, level


def summarise(perf: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """One row per configuration: n, median, min, max, interval (lo, hi, rule) and its run IDs."""
    rows = []
    for key, g in perf.groupby(keys, sort=False, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        values = g["value"].to_numpy(dtype=float)
        lo, hi, rule, level = median_interval(values)
        rows.append(dict(zip(keys, key)) | {
            "n": len(values), "median": float(np.median(values)), "min": float(values.min()),
            "max": float(values.max()), "lo": lo, "hi": hi, "interval": rule,
            "interval_level": level,
            "spread_pct": 100.0 * (values.max() - values.min()) / np.median(values) if np.median(values) else np.nan,
            "median_wall": float(g["wall"].median()), "metric": g["metric"].iloc[0], "unit": g["unit"].iloc[0],
            "higher_is_better": bool(g["higher_is_better"].iloc[0]),
            "oversubscribed": bool(g["oversubscribed"].astype(bool).any()), "values": tuple(values.tolist()),
            "run_ids": ",".join(g["run_id"]),
        })
    cols = keys + ["n", "median", "min", "max", "lo", "hi", "interval", "interval_level", "spread_pct", "median_wall", "metric",
                   "unit", "higher_is_better", "oversubscribed", "values", "run_ids"]
    return pd.DataFrame(rows, columns=cols)


@dataclass(frozen=True)
class Scale:
    """Which setting is the scale of a series, and which settings name the series."""

    axis: str  # "ranks" or "nodes"
    series: list[str]  # the other configuration keys


def scale_of(summary: pd.DataFrame, keys: list[str]) -> Scale:
    """Nodes when the study sweeps nodes and a series has one run per node count, else ranks."""
    if "nodes" in summary and summary["nodes"].nunique() > 1:
        series = [k for k in keys if k not in ("nodes", "ranks")]
        if not summary.duplicated(series + ["nodes"]).any():
            return Scale("nodes", series)
    return Scale("ranks", [k for k in keys if k != "ranks"])


def ideal_speedup(ratio: float, mode: str) -> float:
    """The speedup a perfectly scaling series reaches at ``ratio`` = s / s_base (see the module docstring)."""
    return 1.0 if mode == "weak" else ratio


def scalability(summary: pd.DataFrame, scale: Scale, base: dict | None = None, mode: str = "strong") -> pd.DataFrame:
    """Speedup and efficiency of every configuration against its series' base, for ``mode`` strong or weak.

    ``base`` names the base scale, e.g. ``{"ranks": 2}``; by default it is the
    smallest scale of each series.  Series without a run at the named base get
    NaN and ``base_missing`` set.
    """
    if mode not in SCALING_MODES:
        raise ScalewiseError(f"unknown scaling mode {mode!r} (expected strong or weak)")
    if base:
        unknown = set(base) - {scale.axis}
        if unknown:
            raise ScalewiseError(f"the scaling base must name the scale axis {scale.axis!r}, got {sorted(unknown)}")
    rows = []
    for _, g in summary.groupby(scale.series, sort=False, dropna=False) if scale.series else [((), summary)]:
        g = g.sort_values(scale.axis)
        want = base[scale.axis] if base else g[scale.axis].min()
        at_base = g[g[scale.axis] == want]
        for row in g.to_dict("records"):
            if at_base.empty:
                row |= {"base_scale": want, "base_median": np.nan, "speedup": np.nan, "ideal": np.nan,
                        "efficiency": np.nan, "efficiency_lo": np.nan, "efficiency_hi": np.nan,
                        "efficiency_level": np.nan, "efficiency_p": np.nan, "efficiency_decided": False,
                        "base_run_ids": "", "base_missing": True}
            else:
                b = at_base.iloc[0]
                hib = bool(row["higher_is_better"])
                speedup = row["median"] / b["median"] if hib else b["median"] / row["median"]
                ideal = ideal_speedup(row[scale.axis] / b[scale.axis], mode)
                v = noise.efficiency(row["values"], b["values"], ideal, hib)
                row |= {"base_scale": b[scale.axis], "base_median": b["median"], "speedup": speedup, "ideal": ideal,
                        "efficiency": speedup / ideal, "efficiency_lo": v.lo, "efficiency_hi": v.hi,
                        "efficiency_level": v.level,
                        "efficiency_p": v.p if v.rule == stats.EXACT else np.nan,
                        # before the report's multiplicity control (noise.control); the base against itself is no test
                        "efficiency_decided": v.claimed and row[scale.axis] != b[scale.axis],
                        "base_run_ids": b["run_ids"], "base_missing": False,
                        "oversubscribed": bool(row["oversubscribed"] or b["oversubscribed"])}
            rows.append(row)
    cols = list(summary.columns) + ["base_scale", "base_median", "speedup", "ideal", "efficiency", "efficiency_lo",
                                    "efficiency_hi", "efficiency_level", "efficiency_p", "efficiency_decided",
                                    "base_run_ids", "base_missing"]
    return pd.DataFrame(rows, columns=cols)


def parse_base(items: list[str] | tuple[str, ...]) -> dict[str, int]:
    """``["ranks=2"]`` -> ``{"ranks": 2}`` (CLI form of the declared base)."""
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or name not in SCALE_AXES or not value.isdigit():
            raise ScalewiseError(f"--base expects ranks=N or nodes=N, got {item!r}")
        out[name] = int(value)
    return out
