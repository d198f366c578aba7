"""Profile: one profiled MPI job, as tidy pandas frames.

Built only by readers (``scalewise.logfile``) or directly from frames (tests,
synthetic data).  No I/O and no plotting here.

Frames (times in seconds, sizes in bytes):

``ranks``      one row per rank present: rank, host, pid, wall, mpi_time,
               compute_time, maxrss, nthreads, partial; from logs of format
               1.1 on also the LIFECYCLE_COLUMNS: resident memory at the start
               of MPI_Init, after it and at MPI_Finalize (bytes), and the time
               MPI_Finalize waited for the other ranks (finalize_time); from
               format 1.3 on also the SETUP_COLUMNS (NaN where not measured):
               cpus_online, cpus_allowed (this rank's affinity mask),
               node_cpus (the union of the masks of the job's ranks on the
               node), ranks_on_node, omp_threads (OMP_NUM_THREADS, 0 unset),
               setup_window (seconds between the two readings, MPI_Init
               return to MPI_Finalize), cpu_user, cpu_sys (seconds), nivcsw,
               nvcsw (context switches), load1_start, load1_end (1-minute load
               average), node_busy, node_total, node_steal (the node's CPU
               seconds over all its CPUs in the window, from /proc/stat); from
               format 1.4 on also the PROFILER_COLUMNS, the profiler's own
               time (docs/runtime.md, "The profiler's own time"):
               profiler_time, inside the window and so out of compute_time
               (wall = mpi_time + profiler_time + compute_time; before 1.4
               compute_time holds it), then, outside the window,
               profiler_init (its set-up at MPI_Init) and profiler_finalize
               (MPI_Finalize up to the gather of the profiler section)
``functions``  one row per (rank, function called): rank, function, fclass,
               calls, time, tmin, tmax, bytes
``hist``       one row per non-empty (rank, function, bin): rank, function,
               bin, lo, hi, count.  Bin 0 holds 0-byte messages; bin k >= 1
               holds sizes in [2**(k-1), 2**k).
``sites``      one row per (rank, call site) from logs of format 1.1 with call
               sites: rank, function, object, offset (from the object's load
               base), calls, time, bytes, and where it is: func (may be
               empty) and location ("file:line", or "object+offset" without
               debug information)
``bins``       from logs of format 1.2: one row per (rank, time bin): rank,
               bin, start (seconds after the rank's MPI_Init return, which
               all ranks leave together), width, mpi_time, compute_time; the
               last bin of a rank may be shorter than width
``phases``     from logs of format 1.2: one row per (rank, MPI_Pcontrol
               phase): rank, phase (its label: a name, "phase N",
               "(outside phases)" or "(other phases)"), order (first
               entered), wall, mpi_time, compute_time
``phase_functions`` one row per (rank, phase, function called in it): rank,
               phase, function, calls, time, bytes
``p2p``        one row per (src, dst) pair with traffic, in MPI_COMM_WORLD
               ranks: src, dst, messages, bytes
``pvars``      from logs of format 1.2: one row per (rank, MPI_T performance
               variable read at MPI_Finalize), PVAR_COLUMNS in model/mpit.py;
               ``mpit`` holds the section's status, the control variables in
               force and the variables' descriptions
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from scalewise.model.bins import bin_bounds, size_bin  # noqa: F401 (this module's API too)
from scalewise.model.columns import (BIN_COLUMNS, FUNCTION_COLUMNS, HIST_COLUMNS, LIFECYCLE_COLUMNS,  # noqa: F401
                                     P2P_COLUMNS, PHASE_COLUMNS, PHASE_FUNCTION_COLUMNS, PROFILER_COLUMNS,
                                     RANK_COLUMNS, SETUP_COLUMNS, SITE_COLUMNS)
from scalewise.model.mpit import MpitInfo, no_pvars



def _empty(columns: list[str]):
    return lambda: pd.DataFrame(columns=columns)


_no_sites = _empty(SITE_COLUMNS)


@dataclass(frozen=True)
class Profile:
    """One job.  ``meta`` holds the job-wide metadata of the log."""

    meta: dict[str, Any]
    ranks: pd.DataFrame
    functions: pd.DataFrame
    hist: pd.DataFrame
    p2p: pd.DataFrame
    path: str | None = None
    flags: frozenset[str] = field(default_factory=frozenset)
    sites: pd.DataFrame = field(default_factory=_no_sites)
    pvars: pd.DataFrame = field(default_factory=no_pvars)
    mpit: MpitInfo = field(default_factory=MpitInfo)
    bins: pd.DataFrame = field(default_factory=_empty(BIN_COLUMNS))
    phases: pd.DataFrame = field(default_factory=_empty(PHASE_COLUMNS))
    phase_functions: pd.DataFrame = field(default_factory=_empty(PHASE_FUNCTION_COLUMNS))

    @property
    def nranks(self) -> int:
        """World size of the job (ranks present may be fewer in a partial log)."""
        return int(self.meta.get("nranks", len(self.ranks)))

    @property
    def partial(self) -> bool:
        """True when some rank hit a memory cap or the job did not finalize."""
        return "partial" in self.flags or bool(self.ranks["partial"].any())

    @property
    def aborted(self) -> bool:
        return "aborted" in self.flags

    def function_totals(self) -> pd.DataFrame:
        """Per function over all ranks: calls, time, bytes, tmin, tmax, fclass."""
        f = self.functions
        if f.empty:
            return pd.DataFrame(columns=["function", "fclass", "calls", "time", "bytes", "tmin", "tmax"]).set_index("function")
        g = f.groupby("function", sort=False)
        out = g.agg(fclass=("fclass", "first"), calls=("calls", "sum"), time=("time", "sum"),
                    bytes=("bytes", "sum"), tmin=("tmin", "min"), tmax=("tmax", "max"))
        return out.sort_values("time", ascending=False)

    def _timeline_json(self, per_rank: dict[int, dict[str, Any]]) -> None:
        """Format 1.2: each rank's time bins and phases (docs/json-schema.md)."""
        for rank, b in self.bins.groupby("rank"):
            per_rank[int(rank)]["bins"] = {"width": float(b["width"].iloc[0]),
                                           "mpi_time": b["mpi_time"].astype(float).tolist(),
                                           "compute_time": b["compute_time"].astype(float).tolist()}
        for ph in self.phases.itertuples(index=False):
            per_rank[int(ph.rank)].setdefault("phases", {})[ph.phase] = {
                "wall": float(ph.wall), "mpi_time": float(ph.mpi_time), "compute_time": float(ph.compute_time),
                "functions": {}}
        for f in self.phase_functions.itertuples(index=False):
            per_rank[int(f.rank)]["phases"][f.phase]["functions"][f.function] = {
                "calls": int(f.calls), "time": float(f.time), "bytes": int(f.bytes)}

    def to_json_dict(self) -> dict[str, Any]:
        """The documented JSON view (docs/json-schema.md)."""
        per_rank: dict[int, dict[str, Any]] = {}
        for r in self.ranks.itertuples(index=False):
            per_rank[int(r.rank)] = {
                "rank": int(r.rank), "host": r.host, "pid": int(r.pid), "wall": float(r.wall),
                "mpi_time": float(r.mpi_time), "compute_time": float(r.compute_time),
                "maxrss": int(r.maxrss), "partial": bool(r.partial), "functions": {},
            }
            if hasattr(r, "rss_init_start"):  # format 1.1: what MPI itself cost the rank
                per_rank[int(r.rank)].update(
                    rss_init_start=int(r.rss_init_start), rss_init_end=int(r.rss_init_end),
                    rss_finalize=int(r.rss_finalize), finalize_time=float(r.finalize_time))
            if hasattr(r, "profiler_time"):  # format 1.4: the profiler's own time
                per_rank[int(r.rank)].update({c: float(getattr(r, c, float("nan"))) for c in PROFILER_COLUMNS})
            if hasattr(r, "cpus_online"):  # format 1.3: the rank's set-up (NaN: not measured)
                per_rank[int(r.rank)]["setup"] = {c: float(getattr(r, c)) for c in SETUP_COLUMNS}
        for f in self.functions.itertuples(index=False):
            per_rank[int(f.rank)]["functions"][f.function] = {
                "calls": int(f.calls), "time": float(f.time), "bytes": int(f.bytes),
                "tmin": float(f.tmin), "tmax": float(f.tmax), "histogram": {},
            }
        for h in self.hist.itertuples(index=False):
            per_rank[int(h.rank)]["functions"][h.function]["histogram"][str(int(h.bin))] = int(h.count)
        self._timeline_json(per_rank)
        return {
            "format": self.meta.get("format"),
            "meta": self.meta,
            "partial": self.partial,
            "aborted": self.aborted,
            "nranks": self.nranks,
            "ranks": [per_rank[k] for k in sorted(per_rank)],
            "p2p": [{"src": int(p.src), "dst": int(p.dst), "messages": int(p.messages), "bytes": int(p.bytes)}
                    for p in self.p2p.itertuples(index=False)],
        }
