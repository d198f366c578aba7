"""The summary of one run printed from its log without numpy or pandas: the
path ``scalewise run`` and ``scalewise summary`` take (docs/benchmarks.md,
"What `scalewise run` adds to a job").  The log's rows (logfile/plain.py)
go through the plain analysis (analysis/run/plain.py) into the same view the
analysis over frames fills (terminal.py), printed by the one renderer
(summary_view.py): the same bytes, held side by side over real logs by
tests/report/test_lean_summary.py."""

from __future__ import annotations

from rich.console import Console

from scalewise.analysis.run.plain import PlainAnalysis, analyse_plain, metadata_inputs
from scalewise.logfile.plain import PlainLog, read_plain
from scalewise.report.run.metadata import app_name_of, metadata_rows
from scalewise.report.run.summary_view import (TOP_FUNCTIONS, TOP_PVARS, FunctionRow, PhaseRow, PvarRow, SummaryView,
                                               render_summary)


def lean_view(log: PlainLog, a: PlainAnalysis) -> SummaryView:
    """What the summary of ``log`` prints, from its plain analysis ``a``."""
    m = metadata_inputs(log)
    metadata = metadata_rows(log.meta, log.path, log.nranks, len(log.ranks), m["hosts"], m["per_host"], a.setup,
                             m["memory"], m["mpi_cost"])
    return SummaryView(
        app=app_name_of(log.meta), metadata=metadata, notes=a.notes, breakdown=a.breakdown,
        total_bytes=a.volume.total, per_rank_bytes=a.volume.per_rank_total, total_calls=a.total_calls, pop=a.pop,
        functions=[FunctionRow(r.function, r.time, r.pct_wall, r.pct_mpi, r.calls, r.pct_calls, r.bytes)
                   for r in a.functions[:TOP_FUNCTIONS]], nfunctions=len(a.functions),
        pvars=[PvarRow(r.variable, r.min, r.median, r.max, r.description) for r in a.pvars[:TOP_PVARS]],
        npvars=len(a.pvars),
        phases=[PhaseRow(r.phase, r.wall_max, r.mpi_mean, r.compute_mean, r.mpi_pct, r.calls, r.top_function)
                for r in a.phases],
        findings=a.findings)


def print_lean_summary(log: PlainLog, console: Console | None = None) -> None:
    """Print the summary of ``log`` (read by logfile.plain.read_plain) to ``console`` (stdout by default)."""
    render_summary(lean_view(log, analyse_plain(log)), console)


def print_log_summary(path, console: Console | None = None) -> PlainLog:
    """Read the log at ``path`` and print its summary; the log's rows are returned."""
    log = read_plain(path)
    print_lean_summary(log, console)
    return log
