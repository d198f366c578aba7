"""One run's numbers as rows of a study's frames (``runs``, ``functions``, ``sizes`` of a RunSet).

Every number here is taken from the one-run analyses, never recomputed, so a
study quotes a run exactly as that run's own report does: MPI share from
:func:`time_breakdown`, the POP efficiencies from :func:`pop_metrics`, bytes
from :func:`data_volume`, functions (init class left out) from
:func:`function_table`, sizes (with the ``credited`` flag of Wait/Test rows)
from :func:`size_distribution`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from scalewise.analysis.run.breakdown import function_table, time_breakdown
from scalewise.analysis.run.pop_metrics import pop_metrics
from scalewise.analysis.run.sizes import size_distribution
from scalewise.analysis.run.volume import data_volume
from scalewise.model.profile import Profile
from scalewise.model.runset import FUNCTION_COLUMNS, SIZE_COLUMNS


def run_metrics(profile: Profile) -> dict[str, float]:
    """The run-level numbers of :data:`PROFILE_METRICS` for one profile."""
    b, v = time_breakdown(profile), data_volume(profile)
    n = b.nranks_present
    f = profile.functions
    pop = pop_metrics(profile)
    return {
        "prof_ranks": float(n),
        "rank_wall": b.total_wall,
        "mpi_time": b.total_mpi,
        "compute_time": b.total_compute,
        "mpi_share": b.mpi_share,
        "mpi_time_per_rank": b.total_mpi / n if n else np.nan,
        "calls": float(f["calls"].sum()) if not f.empty else 0.0,
        "p2p_bytes": float(v.p2p_total),
        "collective_bytes": float(v.collective_total),
        "rma_bytes": float(v.rma_total),
        "bytes": float(v.total),
        "bytes_per_rank": v.total / n if n else np.nan,
        "bytes_per_rank_max": v.per_rank_total.max if n else np.nan,
        "runtime": pop.runtime,
        "useful_max": pop.useful_max,
        "load_balance": pop.load_balance,
        "communication_efficiency": pop.communication_efficiency,
        "parallel_efficiency": pop.parallel_efficiency,
        "imbalance_share": pop.imbalance_share,
        "transfer_share": pop.transfer_share,
    }


def run_functions(run_id: str, profile: Profile) -> pd.DataFrame:
    """One row per MPI function of one run, the init class left out (see :func:`function_table`)."""
    table = function_table(profile)
    if table.empty:
        return pd.DataFrame(columns=FUNCTION_COLUMNS)
    out = table.rename(columns={"time_rank_mean": "time_per_rank"})
    out.insert(0, "run_id", run_id)
    return out[FUNCTION_COLUMNS]


def run_sizes(run_id: str, profile: Profile) -> pd.DataFrame:
    """Messages per (function, size bin) of one run, summed over ranks."""
    counts = size_distribution(profile).counts
    if counts.empty:
        return pd.DataFrame(columns=SIZE_COLUMNS)
    out = counts.copy()
    out.insert(0, "run_id", run_id)
    return out[SIZE_COLUMNS]
