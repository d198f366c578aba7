"""The terminal summary of one run from its analysis (a Profile's frames): the
view summary_view.py prints, filled from a RunAnalysis.  lean.py fills the
same view from the log's rows, without pandas."""

from __future__ import annotations

from rich.console import Console

from scalewise.analysis.run.findings import RunAnalysis, analyse
from scalewise.model.profile import Profile
from scalewise.report.run.metadata import app_name, run_metadata
from scalewise.report.run.summary_view import (TOP_FUNCTIONS, TOP_PVARS, FunctionRow, PhaseRow, PvarRow,  # noqa: F401
                                               SummaryView, pop_table, render_summary)


def summary_view(profile: Profile, a: RunAnalysis) -> SummaryView:
    """What the summary of ``profile`` prints, from its analysis ``a``."""
    functions = [FunctionRow(r.function, r.time, r.pct_wall, r.pct_mpi, r.calls, r.pct_calls, r.bytes)
                 for r in a.functions.head(TOP_FUNCTIONS).itertuples(index=False)]
    pvars = [PvarRow(r.variable, r.min, r.median, r.max, r.description)
             for r in a.pvars.head(TOP_PVARS).itertuples(index=False)]
    phases = [PhaseRow(r.phase, r.wall_max, r.mpi_mean, r.compute_mean, r.mpi_pct, r.calls,
                       r.top_function if isinstance(r.top_function, str) else "")
              for r in a.phases.itertuples(index=False)]
    return SummaryView(app=app_name(profile), metadata=run_metadata(profile), notes=[n.text for n in a.notes],
                       breakdown=a.breakdown, total_bytes=a.volume.total, per_rank_bytes=a.volume.per_rank_total,
                       total_calls=a.total_calls, pop=a.pop, functions=functions, nfunctions=len(a.functions),
                       pvars=pvars, npvars=len(a.pvars), phases=phases, findings=[f.text for f in a.findings])


def print_summary(profile: Profile, console: Console | None = None, analysis: RunAnalysis | None = None) -> None:
    """Print the summary of one run to ``console`` (stdout by default)."""
    a = analysis if analysis is not None else analyse(profile)
    render_summary(summary_view(profile, a), console)
