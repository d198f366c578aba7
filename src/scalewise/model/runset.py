"""RunSet and StudyResults: many runs of a campaign as tidy pandas frames.

Built only by the results reader (``scalewise.campaign.results``), whose
per-run numbers come from ``scalewise.analysis.run.rows``, or directly from
frames (tests).  No I/O, no computing and no plotting here.

Frames:

``runs``       one row per run: its settings (app, variant, mpi, transport,
               params, nodes, ranks, ranks_per_node, threads, custom axes),
               repetition, status, reason, wall, fom, fom_name, fom_unit,
               higher_is_better, profile_path, ... and the profile metrics of
               :data:`PROFILE_METRICS` (NaN for runs without a readable profile)
``functions``  one row per (run_id, MPI function): fclass, calls, time, bytes,
               time_per_rank, pct_mpi, pct_wall (the ``init`` class is left
               out: its time falls outside the measured wall)
``sizes``      one row per (run_id, function, log2 size bin): fclass, credited
               (a Wait/Test row repeating the sizes it completes), bin, lo, hi,
               count (summed over ranks)
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

# Settings every run has, in display order.  Custom axes follow them.
STANDARD_SETTINGS = ["app", "variant", "mpi", "transport", "params", "nodes", "ranks", "ranks_per_node", "threads"]

# Per-run numbers taken from the run's profile (sums over the ranks present).
PROFILE_METRICS = [
    "prof_ranks",  # ranks present in the log
    "rank_wall",  # wall time summed over ranks (rank-seconds)
    "mpi_time",  # MPI time summed over ranks
    "compute_time",
    "mpi_share",  # mpi_time / rank_wall, 0..1
    "mpi_time_per_rank",
    "calls",
    "p2p_bytes",  # point-to-point bytes, counted once at the sender (p2p matrix)
    "collective_bytes",
    "rma_bytes",
    "bytes",  # p2p + collective + one-sided: what the job put on the wire
    "bytes_per_rank",  # mean over ranks present
    "bytes_per_rank_max",
    # POP efficiencies (analysis/run/pop_metrics.py, docs/pop.md); useful time is compute time.
    "runtime",  # the longest profiled span of any rank
    "useful_max",  # the busiest rank's compute time
    "load_balance",  # mean compute time / largest compute time, 1 = balanced
    "communication_efficiency",  # largest compute time / runtime
    "parallel_efficiency",  # mean compute time / runtime = load_balance x communication_efficiency
    "imbalance_share",  # (largest - mean compute) / runtime: waiting for the busiest rank
    "transfer_share",  # 1 - communication_efficiency: time even the busiest rank spends outside compute
]
FUNCTION_COLUMNS = ["run_id", "function", "fclass", "calls", "time", "bytes", "time_per_rank", "pct_mpi", "pct_wall"]
SIZE_COLUMNS = ["run_id", "function", "fclass", "credited", "bin", "lo", "hi", "count"]


@dataclass(frozen=True)
class RunSet:
    """Runs with their settings, results and profile metrics.  Operations return new RunSets."""

    runs: pd.DataFrame
    functions: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=FUNCTION_COLUMNS))
    sizes: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=SIZE_COLUMNS))
    settings: tuple[str, ...] = tuple(STANDARD_SETTINGS)  # every setting column, custom axes included

    @property
    def swept(self) -> list[str]:
        """Settings that take more than one value among these runs."""
        return [s for s in self.settings if s in self.runs and self.runs[s].dropna().nunique() > 1]

    def where(self, **settings: Any) -> RunSet:
        """The runs whose settings equal the given values."""
        keep = np.ones(len(self.runs), dtype=bool)
        for name, value in settings.items():
            keep &= (self.runs[name] == value).to_numpy()
        return self._subset(self.runs[keep])

    def ok(self) -> RunSet:
        """Only the runs whose status is ``ok`` (the ones whose numbers count)."""
        return self._subset(self.runs[self.runs["status"] == "ok"])

    def failed(self) -> RunSet:
        """Only the runs that ended badly (failed, timed out); not those still to run or interrupted."""
        return self._subset(self.runs[~self.runs["status"].isin(["ok", "pending", "running", "interrupted"])])

    def _subset(self, runs: pd.DataFrame) -> RunSet:
        ids = set(runs["run_id"])
        return replace(self, runs=runs.reset_index(drop=True),
                       functions=self.functions[self.functions["run_id"].isin(ids)].reset_index(drop=True),
                       sizes=self.sizes[self.sizes["run_id"].isin(ids)].reset_index(drop=True))


@dataclass(frozen=True)
class StudyResults(RunSet):
    """A whole campaign: its runs plus where and on what they ran.

    ``provenance`` is long form (run_id, key, value); ``sessions`` has one row
    per ``study run`` invocation with its machine, ``session_provenance`` is
    long form (session_id, key, value).  ``notes`` lists problems met while
    reading (an unreadable profile, ...), one sentence each.
    """

    name: str = "study"
    info: dict[str, str] = field(default_factory=dict)
    provenance: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=["run_id", "key", "value"]))
    sessions: pd.DataFrame = field(default_factory=pd.DataFrame)
    session_provenance: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=["session_id", "key", "value"]))
    source: str | None = None
    notes: tuple[str, ...] = ()
