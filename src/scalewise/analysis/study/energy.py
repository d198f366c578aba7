"""Electricity per job and the yearly cost of a fixed workload (B9).

Energy follows the same performance the comparisons use (the figure of
merit, or jobs per day), not the launcher's wall: two configurations whose
figures of merit tie cost the same, whatever their launchers' start-up.  At
a given scale (same application, same node count) the work is fixed, so a
configuration's time per job is inversely proportional to its speed (its
performance, or the inverse of a lower-is-better figure of merit):

    time per job  = wall of the fastest x speed of the fastest / speed
    kWh per job   = watts_per_node * nodes * time per job / 3.6e6
    yearly cost   = jobs_per_year * kWh per job * price_per_kwh

The workload is the same for every configuration at a given scale, as in the
AMR study ("the cost to finish the same jobs"): by default, the number of
jobs the fastest configuration finishes in a year of running them back to
back (``365 * 86400 / its median wall``); only this count of jobs rests on a
wall time, never the ratio between two configurations.  The saving of a
configuration is what the most expensive configuration at that scale costs
more, and it is *claimed* only when the noise rule claims the performance
difference behind it (at equal nodes the cost ratio is the speed ratio).
Oversubscribed configurations are left out unless the caller opts in: their
times measure the sharing of cores.  The node power is an assumption the
user supplies; nothing here measures power.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from scalewise.analysis.study import noise
from scalewise.analysis.study.scaling import Scale

DEFAULT_WATTS_PER_NODE = 350.0  # a loaded dual-socket server, in the range the reference clusters draw
DEFAULT_PRICE_PER_KWH = 0.20  # the price the AMR study used, in currency units per kWh
SECONDS_PER_YEAR = 365 * 86400
ENERGY_COLUMNS = ["speed", "seconds_per_job", "kwh_per_job", "jobs_per_year", "yearly_kwh", "yearly_cost", "saving",
                  "saving_claimed", "saving_rule", "saving_p", "watts_per_node", "price_per_kwh"]


def saving_verdict(cheaper: dict, dearer: dict) -> tuple[bool, str, float]:
    """(claimed, rule, p): whether the noise rule's test claims ``cheaper`` performs better than ``dearer``
    (the one call to the rule here; the report then holds ``p`` to its false discovery rate with its other
    tests, ``findings.controlled``)."""
    v = noise.judge(cheaper["values"], dearer["values"], bool(cheaper["higher_is_better"]))
    return bool(v.claimed), v.rule, float(v.p)


def energy_costs(summary: pd.DataFrame, scale: Scale, watts_per_node: float = DEFAULT_WATTS_PER_NODE,
                 price_per_kwh: float = DEFAULT_PRICE_PER_KWH, jobs_per_year: float | None = None,
                 include_oversubscribed: bool = False) -> pd.DataFrame:
    """One row per configuration: kWh per job, jobs per year, yearly cost and saving against the dearest.

    ``summary`` is :func:`scaling.summarise`'s table (median performance,
    its orientation, the repetitions' ``values`` and the median wall).
    """
    out = summary.copy()
    if not include_oversubscribed and "oversubscribed" in out:
        out = out[~out["oversubscribed"].astype(bool)].copy()
    if out.empty:
        return pd.DataFrame(columns=list(summary.columns) + ENERGY_COLUMNS)
    hib = out["higher_is_better"].astype(bool)
    out["speed"] = np.where(hib, out["median"], 1.0 / out["median"].astype(float))
    nodes = out["nodes"].astype(float) if "nodes" in out else 1.0
    # The same workload for every configuration of the same application at the same scale.
    group = ["app", scale.axis] + (["nodes"] if scale.axis != "nodes" and "nodes" in out else [])
    grouped = out.groupby(group, dropna=False)
    fastest = grouped["speed"].transform("idxmax")
    ref_wall, ref_speed = out.loc[fastest, "median_wall"].to_numpy(), out.loc[fastest, "speed"].to_numpy()
    out["seconds_per_job"] = ref_wall * ref_speed / out["speed"]
    out["kwh_per_job"] = watts_per_node * nodes * out["seconds_per_job"] / 3.6e6
    out["jobs_per_year"] = float(jobs_per_year) if jobs_per_year else SECONDS_PER_YEAR / ref_wall
    out["yearly_kwh"] = out["jobs_per_year"] * out["kwh_per_job"]
    out["yearly_cost"] = out["yearly_kwh"] * price_per_kwh
    out["saving"] = grouped["yearly_cost"].transform("max") - out["yearly_cost"]
    claimed, rules, pvalues = [], [], []
    dearest = out.groupby(group, dropna=False)["yearly_cost"].transform("idxmax")
    for idx, row in out.iterrows():
        if idx == dearest[idx] or not row["saving"] > 0:
            claimed.append(False), rules.append("dearest" if idx == dearest[idx] else "no saving")
            pvalues.append(np.nan)
            continue
        c, r, p = saving_verdict(row.to_dict(), out.loc[dearest[idx]].to_dict())
        claimed.append(c), rules.append(r), pvalues.append(p)
    out["saving_claimed"], out["saving_rule"], out["saving_p"] = claimed, rules, pvalues
    out["watts_per_node"], out["price_per_kwh"] = watts_per_node, price_per_kwh
    return out.replace([np.inf, -np.inf], np.nan)
