"""RunSet and Study: many runs of a campaign as tidy pandas frames.

Built only by a reader (``scalewise.studydb``) or directly from frames
(tests).  No I/O and no plotting here.

Frames:

``runs``       one row per run: its settings (app, variant, mpi, transport,
               params, nodes, ranks, ranks_per_node, threads, custom axes),
               repetition, status, reason, wall, fom, fom_name, fom_unit,
               higher_is_better, profile_path, ... and the profile metrics of
               :data:`PROFILE_METRICS` (NaN for runs without a readable profile)
``functions``  one row per (run_id, MPI function): fclass, calls, time, bytes,
               time_per_rank, pct_mpi, pct_wall (shares leave out the ``init``
               class, whose time falls before the wall clock starts)
``sizes``      one row per (run_id, function, log2 size bin): fclass, bin, lo,
               hi, count (summed over ranks)
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from scalewise.model.profile import Profile

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
]
FUNCTION_COLUMNS = ["run_id", "function", "fclass", "calls", "time", "bytes", "time_per_rank", "pct_mpi", "pct_wall"]
SIZE_COLUMNS = ["run_id", "function", "fclass", "bin", "lo", "hi", "count"]


def profile_metrics(profile: Profile) -> dict[str, float]:
    """The run-level numbers of :data:`PROFILE_METRICS` for one profile.

    Bytes follow the rule of ``scalewise.analysis.volume``: point-to-point
    counted at the sender, plus collective and one-sided payloads; Wait/Test
    bytes repeat the messages they complete and are left out.
    """
    r, f = profile.ranks, profile.functions
    n = len(r)
    rank_wall, mpi = float(r["wall"].sum()), float(r["mpi_time"].sum())
    by_class = f.groupby("fclass")["bytes"].sum() if not f.empty else pd.Series(dtype=float)
    p2p_by_rank = profile.p2p.groupby("src")["bytes"].sum()
    coll_rma = f[f["fclass"].isin(["collective", "rma"])].groupby("rank")["bytes"].sum() if not f.empty else None
    per_rank = p2p_by_rank.reindex(r["rank"], fill_value=0).to_numpy(dtype=float)
    if coll_rma is not None:
        per_rank = per_rank + coll_rma.reindex(r["rank"], fill_value=0).to_numpy(dtype=float)
    p2p, coll, rma = float(profile.p2p["bytes"].sum()), float(by_class.get("collective", 0)), float(by_class.get("rma", 0))
    return {
        "prof_ranks": float(n),
        "rank_wall": rank_wall,
        "mpi_time": mpi,
        "compute_time": float(r["compute_time"].sum()),
        "mpi_share": mpi / rank_wall if rank_wall > 0 else np.nan,
        "mpi_time_per_rank": mpi / n if n else np.nan,
        "calls": float(f["calls"].sum()) if not f.empty else 0.0,
        "p2p_bytes": p2p,
        "collective_bytes": coll,
        "rma_bytes": rma,
        "bytes": p2p + coll + rma,
        "bytes_per_rank": (p2p + coll + rma) / n if n else np.nan,
        "bytes_per_rank_max": float(per_rank.max()) if n else np.nan,
    }


def profile_functions(run_id: str, profile: Profile) -> pd.DataFrame:
    """One row per MPI function of one run (see ``functions`` above)."""
    totals = profile.function_totals().reset_index()
    if totals.empty:
        return pd.DataFrame(columns=FUNCTION_COLUMNS)
    n = max(len(profile.ranks), 1)
    # MPI_Init/Finalize (class "init") lie outside the measured wall: the clock starts when MPI_Init
    # returns.  Shares are therefore taken over the other functions, as the ranks' mpi_time is.
    mpi = float(totals.loc[totals["fclass"] != "init", "time"].sum())
    wall = float(profile.ranks["wall"].sum())
    out = totals[["function", "fclass", "calls", "time", "bytes"]].copy()
    out.insert(0, "run_id", run_id)
    out["time_per_rank"] = out["time"] / n
    out["pct_mpi"] = 100.0 * out["time"] / mpi if mpi > 0 else np.nan
    out["pct_wall"] = 100.0 * out["time"] / wall if wall > 0 else np.nan
    return out[FUNCTION_COLUMNS]


def profile_sizes(run_id: str, profile: Profile) -> pd.DataFrame:
    """Messages per (function, size bin) of one run, summed over ranks."""
    h = profile.hist
    if h.empty:
        return pd.DataFrame(columns=SIZE_COLUMNS)
    g = h.groupby(["function", "bin", "lo", "hi"], as_index=False)["count"].sum()
    classes = profile.functions.drop_duplicates("function").set_index("function")["fclass"]
    g["fclass"] = g["function"].map(classes).fillna("other")
    g.insert(0, "run_id", run_id)
    return g[SIZE_COLUMNS]


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

    def failed(self) -> pd.DataFrame:
        return self.runs[~self.runs["status"].isin(["ok", "pending", "running"])]

    def _subset(self, runs: pd.DataFrame) -> RunSet:
        ids = set(runs["run_id"])
        return replace(self, runs=runs.reset_index(drop=True),
                       functions=self.functions[self.functions["run_id"].isin(ids)].reset_index(drop=True),
                       sizes=self.sizes[self.sizes["run_id"].isin(ids)].reset_index(drop=True))


@dataclass(frozen=True)
class Study(RunSet):
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
