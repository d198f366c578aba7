"""The terminal summary of one run, in the spirit of IPM's end-of-job banner.

It quotes the same analysis results as the HTML page: run metadata, the
[total] <avg> min max table, the busiest MPI functions, bytes moved, and the
findings.  :class:`SummaryView` holds what it prints as plain values;
:func:`render_summary` prints it.  Two paths fill the view and print the same
bytes: the analysis over a Profile's frames (terminal.py), and the lean path
over the log's rows (lean.py), which ``scalewise run`` and ``scalewise
summary`` take to spare a job pandas and numpy.

Every text that came from the application (its command line, host and library
names, function names from the log, findings quoting them) is printed as a
rich ``Text`` through ``terminal_text``: never read as markup, control
characters made visible, lengths bounded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from scalewise.analysis.run.pop_metrics import PopMetrics, pop_rows
from scalewise.formatting import count, human_bytes, num, pct, ratio, seconds, terminal_text

# Functions and MPI_T variables listed in the terminal; the page and --json list all of them.
TOP_FUNCTIONS = 10
TOP_PVARS = 10


@dataclass(frozen=True)
class FunctionRow:
    function: str
    time: float
    pct_wall: float
    pct_mpi: float
    calls: int
    pct_calls: float
    bytes: int


@dataclass(frozen=True)
class PvarRow:
    variable: str
    min: float
    median: float
    max: float
    description: str


@dataclass(frozen=True)
class PhaseRow:
    phase: str
    wall_max: float
    mpi_mean: float
    compute_mean: float
    mpi_pct: float
    calls: int
    top_function: str  # "" when no function took time in the phase


@dataclass(frozen=True)
class SummaryView:
    """What the summary prints.  ``breakdown`` is a TimeBreakdown or anything with its attributes
    (wall, mpi, profiler, compute, profiler_init, profiler_finalize, mpi_pct as spreads with total,
    mean, min, max, max_over_mean and cv; mpi_share, total_profiler, total_wall); ``per_rank_bytes``
    the spread of bytes sent per rank.  ``functions`` and ``pvars`` hold the first rows only,
    ``nfunctions`` and ``npvars`` count them all; ``phases`` every phase row."""

    app: str
    metadata: list[tuple[str, str]]
    notes: list[str]
    breakdown: Any
    total_bytes: float
    per_rank_bytes: Any
    total_calls: int
    pop: PopMetrics | None
    functions: list[FunctionRow]
    nfunctions: int
    pvars: list[PvarRow] = field(default_factory=list)
    npvars: int = 0
    phases: list[PhaseRow] = field(default_factory=list)
    findings: list[str] = field(default_factory=list)


def _metadata(rows: list[tuple[str, str]]) -> Table:
    t = Table(box=None, show_header=False, pad_edge=False)
    t.add_column(style="dim")
    t.add_column(overflow="fold")
    for label, value in rows:
        t.add_row(label, Text(terminal_text(value)))
    return t


def _totals(v: SummaryView) -> Table:
    b = v.breakdown
    caption = ("wall = MPI + profiler + compute; prof. Init and prof. Finalize: the profiler's own set-up at "
               "MPI_Init and its log packing at MPI_Finalize, outside the wall time" if b.profiler else None)
    t = Table(title="Per rank", box=box.SIMPLE_HEAD, title_justify="left", caption=caption, caption_justify="left")
    for col in ("", "total", "mean", "min", "max", "max/mean", "CV"):
        t.add_column(col, justify="left" if not col else "right")
    # The profiler's own time (format 1.4 on) is neither MPI nor compute; its
    # set-up and log-writing lie outside the wall time, on lines of their own.
    rows = [("wall", b.wall), ("MPI", b.mpi), ("profiler", b.profiler), ("compute", b.compute),
            ("prof. Init", b.profiler_init), ("prof. Finalize", b.profiler_finalize)]
    for label, s in rows:
        if s is not None:
            t.add_row(label, seconds(s.total), seconds(s.mean), seconds(s.min), seconds(s.max),
                      ratio(s.max_over_mean), ratio(s.cv))
    s = b.mpi_pct
    t.add_row("%MPI", pct(100 * b.mpi_share), pct(s.mean), pct(s.min), pct(s.max),
              ratio(s.max_over_mean), ratio(s.cv))
    s = v.per_rank_bytes
    t.add_row("bytes sent", human_bytes(v.total_bytes), human_bytes(s.mean), human_bytes(s.min),
              human_bytes(s.max), ratio(s.max_over_mean), ratio(s.cv))
    t.add_row("MPI calls", count(v.total_calls), "", "", "", "", "")
    return t


def _functions(v: SummaryView) -> Table:
    t = Table(title=f"Top MPI functions by time ({min(v.nfunctions, TOP_FUNCTIONS)} of {v.nfunctions})",
              box=box.SIMPLE_HEAD, title_justify="left")
    for col in ("function", "time", "%wall", "%MPI", "calls", "%calls", "bytes"):
        t.add_column(col, justify="left" if col == "function" else "right")
    for r in v.functions[:TOP_FUNCTIONS]:
        t.add_row(Text(terminal_text(r.function, 80)), seconds(r.time), pct(r.pct_wall), pct(r.pct_mpi), count(r.calls),
                  pct(r.pct_calls), human_bytes(r.bytes))
    return t


def _pvars(v: SummaryView) -> Table:
    shown = min(v.npvars, TOP_PVARS)
    t = Table(title=f"MPI library counters, MPI_T ({shown} of {v.npvars})", box=box.SIMPLE_HEAD,
              title_justify="left")
    for col in ("variable", "min", "median", "max", "description"):
        t.add_column(col, justify="right" if col in ("min", "median", "max") else "left",
                     overflow="fold" if col == "description" else "ellipsis")
    for r in v.pvars[:TOP_PVARS]:
        t.add_row(Text(terminal_text(r.variable, 80)), num(r.min), num(r.median), num(r.max),
                  Text(terminal_text(r.description, 200)))
    return t


def _phases(v: SummaryView) -> Table:
    t = Table(title="Phases (MPI_Pcontrol): wall of the longest rank, MPI and compute per rank on average",
              box=box.SIMPLE_HEAD, title_justify="left")
    for col in ("phase", "wall", "MPI", "compute", "%MPI", "calls", "top function"):
        t.add_column(col, justify="left" if col in ("phase", "top function") else "right")
    for r in v.phases:
        t.add_row(Text(terminal_text(r.phase, 60)), seconds(r.wall_max), seconds(r.mpi_mean), seconds(r.compute_mean),
                  pct(r.mpi_pct), count(r.calls), Text(terminal_text(r.top_function, 40)))
    return t


def pop_table(m: PopMetrics) -> Table:
    """POP's efficiencies of one run, nested as POP nests them; a missing term says why (docs/pop.md);
    the caveat of an oversubscribed or contended run below them."""
    missing = sorted({r.missing for r in pop_rows(m) if r.missing})
    lines = [f"\u2014: {why}" for why in missing] + ([f"Caveat: {m.caveat}."] if m.caveat else [])
    t = Table(title="POP efficiencies", box=box.SIMPLE_HEAD, title_justify="left", caption_justify="left",
              caption="\n".join(lines) or None)
    t.add_column("metric")
    t.add_column("value", justify="right")
    for r in pop_rows(m):
        t.add_row("  " * r.depth + r.label, "\u2014" if r.missing else pct(100 * r.value))
    return t


def render_summary(v: SummaryView, console: Console | None = None) -> None:
    """Print the summary to ``console`` (stdout by default)."""
    c = console or Console()
    b = v.breakdown
    c.rule(Text(f"scalewise profile: {terminal_text(v.app, 80)}"), style="bold")
    c.print(_metadata(v.metadata), markup=False)
    for n in v.notes:
        c.print(Text(f"note: {terminal_text(n)}", style="yellow"))
    own = f"profiler {pct(100 * b.total_profiler / b.total_wall)} of wall   " if b.profiler and b.total_wall > 0 else ""
    c.print(f"wall time (slowest rank) {seconds(b.wall.max)}   MPI {pct(100 * b.mpi_share)} of wall   {own}"
            f"total bytes sent {human_bytes(v.total_bytes)}   MPI calls {count(v.total_calls)}",
            markup=False, highlight=False)
    c.print(_totals(v))
    if v.pop is not None:
        c.print(pop_table(v.pop))
    if v.nfunctions:
        c.print(_functions(v))
    if v.npvars:
        c.print(_pvars(v))
    if len(v.phases) > 1:  # the application marked phases: more than "(outside phases)"
        c.print(_phases(v))
    if v.findings:
        c.print("Findings", style="bold")
        for f in v.findings:
            c.print(Text(f"  - {terminal_text(f)}"))
