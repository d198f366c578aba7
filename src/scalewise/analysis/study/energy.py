"""Electricity per job and the yearly cost of a fixed workload (B9).

Energy needs time, so it is computed from the median wall time of each
configuration, whatever its figure of merit:

    kWh per job  = watts_per_node * nodes * wall_seconds / 3.6e6
    yearly cost  = jobs_per_year * kWh per job * price_per_kwh

The workload is the same for every configuration at a given scale, as in the
AMR study ("the cost to finish the same jobs"): by default, the number of
jobs the fastest configuration at that scale finishes in a year of running
them back to back (``365 * 86400 / its median wall``).  The saving of a
configuration is what the most expensive configuration at that scale costs
more.  The node power is an assumption the user supplies; nothing here
measures power.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from scalewise.analysis.study.scaling import Scale

DEFAULT_WATTS_PER_NODE = 350.0  # a loaded dual-socket server, in the range the reference clusters draw
DEFAULT_PRICE_PER_KWH = 0.20  # the price the AMR study used, in currency units per kWh
SECONDS_PER_YEAR = 365 * 86400


def energy_costs(summary: pd.DataFrame, scale: Scale, watts_per_node: float = DEFAULT_WATTS_PER_NODE,
                 price_per_kwh: float = DEFAULT_PRICE_PER_KWH, jobs_per_year: float | None = None) -> pd.DataFrame:
    """One row per configuration: kWh per job, jobs per year, yearly cost and saving against the dearest."""
    if summary.empty:
        return pd.DataFrame(columns=list(summary.columns) + ["kwh_per_job", "jobs_per_year", "yearly_kwh",
                                                             "yearly_cost", "saving"])
    out = summary.copy()
    nodes = out["nodes"].astype(float) if "nodes" in out else 1.0
    out["kwh_per_job"] = watts_per_node * nodes * out["median_wall"] / 3.6e6
    # The same workload for every configuration of the same application at the same scale.
    group = ["app", scale.axis] + (["nodes"] if scale.axis != "nodes" and "nodes" in out else [])
    fastest = out.groupby(group, dropna=False)["median_wall"].transform("min")
    out["jobs_per_year"] = float(jobs_per_year) if jobs_per_year else SECONDS_PER_YEAR / fastest
    out["yearly_kwh"] = out["jobs_per_year"] * out["kwh_per_job"]
    out["yearly_cost"] = out["yearly_kwh"] * price_per_kwh
    out["saving"] = out.groupby(group, dropna=False)["yearly_cost"].transform("max") - out["yearly_cost"]
    out["watts_per_node"], out["price_per_kwh"] = watts_per_node, price_per_kwh
    return out.replace([np.inf, -np.inf], np.nan)
