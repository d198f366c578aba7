"""What one run says, in sentences that carry their numbers.

``analyse(profile)`` runs every per-run question (P1-P6) once and derives the
findings from those results, so the page, the terminal summary and the JSON
output all quote the same numbers.  Thresholds are stated next to the rule
that uses them; a finding is a reading aid, not a verdict.
"""

from __future__ import annotations

import math
import os
from dataclasses import asdict, dataclass, field
from typing import Any

import pandas as pd

from scalewise.analysis.finding import Finding
from scalewise.analysis.run.breakdown import TimeBreakdown, calls_table, class_table, function_table, time_breakdown
from scalewise.analysis.run.pop_metrics import PopMetrics, pop_metrics
from scalewise.analysis.run.sentences import (ABORTED_NOTE, DOMINANT_PCT_MPI, IMBALANCE_CV,  # noqa: F401
                                              IMBALANCE_MAX_OVER_MEAN, NO_CALLS_NOTE, NONBLOCKING_SENDS,
                                              SINGLE_RANK_NOTE, bound_text, calls_text, caveat_suffix, dominant_text,
                                              imbalance_text, locality_text, overlap_text, partial_note, setup_note,
                                              sizes_text, volume_text)
from scalewise.analysis.run.setup import RunSetup, run_setup
from scalewise.analysis.run.mpit import pvar_table
from scalewise.analysis.run.sites import site_table
from scalewise.analysis.run.matrix import CommMatrix, Neighbourhood, comm_matrix, neighbourhood
from scalewise.analysis.run.sizes import SizeDistribution, size_distribution, size_range
from scalewise.analysis.run.timeline import Timeline, phase_function_table, phase_table, timeline
from scalewise.analysis.run.volume import DataVolume, data_volume
from scalewise.jsonsafe import json_safe
from scalewise.model.profile import Profile


@dataclass(frozen=True)
class RunAnalysis:
    """Every per-run analysis result, computed once."""

    run: str
    breakdown: TimeBreakdown
    functions: pd.DataFrame
    calls: pd.DataFrame
    classes: pd.DataFrame
    sizes: SizeDistribution
    matrix: CommMatrix
    neighbourhood: Neighbourhood
    volume: DataVolume
    total_calls: int
    sites: pd.DataFrame = field(default_factory=pd.DataFrame)
    pvars: pd.DataFrame = field(default_factory=pd.DataFrame)
    mpit_status: str | None = None
    cvars: dict[str, str] = field(default_factory=dict)
    mtl_unloaded: bool = False  # Open MPI's MTL components' cvars not listed (docs/mpit.md "Cost")
    timeline: Timeline | None = None
    phases: pd.DataFrame = field(default_factory=pd.DataFrame)
    phase_functions: pd.DataFrame = field(default_factory=pd.DataFrame)
    pop: PopMetrics | None = None  # POP efficiencies (analysis/run/pop_metrics.py)
    setup: RunSetup | None = None  # cores, ranks per node, oversubscribed, contended (format 1.3 logs)
    notes: list[Finding] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    def to_json_dict(self) -> dict[str, Any]:
        """Plain JSON-ready view of every result (NaN becomes null)."""
        b, v, nb, m = self.breakdown, self.volume, self.neighbourhood, self.matrix
        return json_safe({
            "run": self.run,
            "total_calls": self.total_calls,
            "breakdown": {
                "total_wall": b.total_wall, "total_mpi": b.total_mpi, "total_compute": b.total_compute,
                "mpi_share": b.mpi_share, "wall": asdict(b.wall), "mpi": asdict(b.mpi),
                "compute": asdict(b.compute), "mpi_pct": asdict(b.mpi_pct),
                "total_profiler": b.total_profiler if b.profiler else None,
                **{k: asdict(getattr(b, k)) if getattr(b, k) else None
                   for k in ("profiler", "profiler_init", "profiler_finalize")},
                "per_rank": _records(b.per_rank),
            },
            "functions": _records(self.functions),
            "classes": _records(self.classes),
            "sizes": {"counts": _records(self.sizes.counts), "by_function": _records(self.sizes.by_function)},
            "matrix": {"nranks": m.nranks, "block": m.block, "ncells": m.ncells, "total_bytes": m.total_bytes,
                       "total_messages": m.total_messages, "pairs": m.pairs},
            "neighbourhood": {"peers": asdict(nb.peers), "within": _records(nb.within),
                              "top_offsets": _records(nb.top_offsets), "self_bytes_share": nb.self_bytes_share},
            "volume": {"total": v.total, "p2p_total": v.p2p_total, "collective_total": v.collective_total,
                       "rma_total": v.rma_total, "io_total": v.io_total, "per_rank_total": asdict(v.per_rank_total),
                       "per_rank": _records(v.per_rank)},
            "call_sites": _records(self.sites),
            "mpit": {"status": self.mpit_status, "pvars": _records(self.pvars), "cvars": self.cvars,
                     "mtl_unloaded": self.mtl_unloaded},
            "timeline": None if self.timeline is None else {
                "bin_width": self.timeline.width, "bins": _records(self.timeline.over_time),
                "per_rank": [{"rank": int(rank), "mpi_share": row.tolist()}
                             for rank, row in self.timeline.share.iterrows()]},
            "phases": _records(self.phases),
            "phase_functions": _records(self.phase_functions),
            "pop": self.pop.to_json_dict() if self.pop is not None else None,
            "setup": self.setup.to_json_dict() if self.setup is not None else None,
            "notes": [f.to_json() for f in self.notes],
            "findings": [f.to_json() for f in self.findings],
        })


def _records(df: pd.DataFrame) -> list[dict[str, Any]]:
    return df.to_dict(orient="records")


def run_name(profile: Profile) -> str:
    """The run a finding came from: the log's file name, else the command."""
    if profile.path:
        return os.path.basename(str(profile.path))
    cmd = profile.meta.get("command") or []
    return " ".join(str(c) for c in cmd) if cmd else "(unnamed run)"


def profile_notes(profile: Profile, a: RunAnalysis) -> list[Finding]:
    """Caveats that change how every number on the page should be read."""
    run, notes = a.run, []
    present, n = a.breakdown.nranks_present, profile.nranks
    if profile.partial:
        partial_ranks = int(profile.ranks["partial"].astype(bool).sum()) if not profile.ranks.empty else 0
        notes.append(Finding("note", partial_note(present, n, partial_ranks),
                             {"ranks_present": present, "nranks": n, "partial_ranks": partial_ranks}, (run,)))
    if profile.aborted:
        notes.append(Finding("note", ABORTED_NOTE, {}, (run,)))
    if a.functions.empty:
        notes.append(Finding("note", NO_CALLS_NOTE,
                             {"mpi_calls": 0}, (run,)))
    caveat = a.setup.caveat() if a.setup is not None else None
    if caveat:
        notes.append(Finding("note", setup_note(caveat),
                             {"oversubscribed": bool(a.setup.oversubscribed), "contended": bool(a.setup.contended)},
                             (run,)))
    if n == 1:
        notes.append(Finding("note", SINGLE_RANK_NOTE,
                             {"nranks": 1}, (run,)))
    return notes


def _bound(a: RunAnalysis) -> Finding | None:
    share = a.breakdown.mpi_share
    if math.isnan(share):
        return None
    pct = 100 * share
    return Finding("bound", bound_text(share, _setup_caveat(a)),
                   {"mpi_pct": pct, "compute_pct": 100 - pct, "caveat": _caveat(a) or None}, (a.run,))


def _caveat(a: RunAnalysis) -> str:
    """The set-up caveat a bound-ness or efficiency finding carries (analysis/run/setup.py)."""
    return caveat_suffix(_setup_caveat(a))


def _setup_caveat(a: RunAnalysis) -> str | None:
    return a.setup.caveat() if a.setup is not None else None


def _dominant(a: RunAnalysis) -> list[Finding]:
    out = []
    median_peers = a.neighbourhood.peers.percentiles.get(50, float("nan"))
    for i, row in enumerate(a.functions.itertuples(index=False)):
        if i >= 3 or (i > 0 and not row.pct_mpi >= DOMINANT_PCT_MPI):
            break
        numbers = {"function": row.function, "pct_wall": row.pct_wall, "pct_mpi": row.pct_mpi, "calls": int(row.calls)}
        rng = size_range(a.sizes, row.function)
        peers = median_peers if not a.neighbourhood.empty and median_peers > 0 else None
        if row.fclass in ("wait", "test") and rng:
            numbers.update(size_lo=rng[0], size_hi=rng[1])
            if peers is not None:
                numbers["peers_median"] = median_peers
        text = dominant_text(row.function, row.fclass, row.pct_wall, row.pct_mpi, rng, peers)
        out.append(Finding("dominant", text, numbers, (a.run,)))
    return out


def _calls(a: RunAnalysis) -> Finding | None:
    c = a.calls
    if c.empty:
        return None
    cum = c["pct_calls"].cumsum()
    top = c.iloc[: int((cum < 80.0).sum()) + 1].head(4)
    pct = float(top["pct_calls"].sum())
    names = top["function"].tolist()
    return Finding("calls", calls_text(names, pct, int(c["calls"].sum())),
                   {"functions": names, "pct_calls": pct}, (a.run,))


def _overlap(a: RunAnalysis) -> Finding | None:
    f = a.functions
    if f.empty or not f["function"].isin(NONBLOCKING_SENDS).any():
        return None
    wait_pct = float(f.loc[f["fclass"].isin(["wait", "test"]), "pct_mpi"].sum())
    return Finding("overlap", overlap_text(wait_pct), {"wait_pct_mpi": wait_pct}, (a.run,))


def _imbalance(a: RunAnalysis) -> Finding | None:
    b = a.breakdown
    if b.nranks_present < 2 or math.isnan(b.compute.max_over_mean):
        return None
    c = b.compute
    numbers = {"compute_max_over_mean": c.max_over_mean, "compute_cv": c.cv, "slowest_rank": c.max_rank,
               "mpi_max_over_mean": b.mpi.max_over_mean, "mpi_cv": b.mpi.cv}
    numbers["caveat"] = _caveat(a) or None
    text = imbalance_text(c.max_rank, c.max_over_mean, c.cv, b.mpi.cv, _setup_caveat(a))
    return Finding("imbalance", text, numbers, (a.run,))


def _sizes(a: RunAnalysis) -> Finding | None:
    c = a.sizes.counts
    sent = c[~c["credited"].astype(bool)] if not c.empty else c
    if sent.empty:
        return None
    total = int(sent["count"].sum())
    small = int(sent.loc[sent["hi"] <= 1024, "count"].sum())
    large = int(sent.loc[sent["lo"] >= 65536, "count"].sum())
    pct_small, pct_large = 100 * small / total, 100 * large / total
    return Finding("sizes", sizes_text(total, pct_small, pct_large), {"messages": total, "pct_under_1KiB": pct_small, "pct_from_64KiB": pct_large}, (a.run,))


def _locality(a: RunAnalysis) -> Finding | None:
    nb = a.neighbourhood
    if nb.empty or nb.top_offsets.empty:  # no traffic, or a rank only sending to itself
        return None
    hit = nb.within[nb.within["bytes_share"] >= 0.9]
    k = int(hit["k"].iloc[0]) if not hit.empty else int(nb.within["k"].iloc[-1])
    share = float(hit["bytes_share"].iloc[0]) if not hit.empty else float(nb.within["bytes_share"].iloc[-1])
    offsets = nb.top_offsets.head(4)
    text = locality_text(a.matrix.nranks, k, share, nb.peers.percentiles[50], nb.peers.max,
                         [int(o) for o in offsets["offset"]])
    return Finding("locality", text, {"k": k, "bytes_share": share, "peers_median": nb.peers.percentiles[50],
                                      "peers_max": nb.peers.max, "offsets": [int(o) for o in offsets["offset"]]}, (a.run,))


def _volume(a: RunAnalysis) -> Finding | None:
    v = a.volume
    if v.total == 0:
        return None
    s = v.per_rank_total
    text = volume_text(v.total, v.p2p_total, v.collective_total, s.mean, s.max, s.max_rank)
    return Finding("volume", text, {"total_bytes": v.total, "mean_per_rank": s.mean, "max_per_rank": s.max}, (a.run,))


def analyse(profile: Profile) -> RunAnalysis:
    """Run P1-P6 and derive notes and findings for one profile."""
    functions = function_table(profile)
    a = RunAnalysis(
        run=run_name(profile),
        breakdown=time_breakdown(profile),
        functions=functions,
        calls=calls_table(functions),
        classes=class_table(functions),
        sizes=size_distribution(profile),
        sites=site_table(profile),
        pvars=pvar_table(profile),
        mpit_status=profile.mpit.status,
        cvars=dict(profile.mpit.cvars),
        mtl_unloaded=profile.mpit.mtl_unloaded,
        timeline=timeline(profile),
        phases=phase_table(profile),
        phase_functions=phase_function_table(profile),
        matrix=comm_matrix(profile),
        neighbourhood=neighbourhood(profile),
        volume=data_volume(profile),
        total_calls=int(functions["calls"].sum()) if not functions.empty else 0,
        pop=pop_metrics(profile),
        setup=run_setup(profile),
    )
    a.notes.extend(profile_notes(profile, a))
    rules = [_bound(a), *_dominant(a), _calls(a), _overlap(a), _imbalance(a), _sizes(a), _locality(a), _volume(a)]
    a.findings.extend(f for f in rules if f is not None)
    return a
