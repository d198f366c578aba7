"""The terminal summary of one run, in the spirit of IPM's end-of-job banner.

It quotes the same analysis results as the HTML page: run metadata, the
[total] <avg> min max table, the busiest MPI functions, bytes moved, and the
findings.

Every text that came from the application (its command line, host and library
names, function names from the log, findings quoting them) is printed as a
rich ``Text`` through ``terminal_text``: never read as markup, control
characters made visible, lengths bounded.
"""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from scalewise.analysis.run.findings import RunAnalysis, analyse
from scalewise.analysis.run.pop_metrics import PopMetrics, pop_rows
from scalewise.formatting import count, human_bytes, num, pct, ratio, seconds, terminal_text
from scalewise.model.profile import Profile
from scalewise.report.run.metadata import app_name, run_metadata

# Functions and MPI_T variables listed in the terminal; the page and --json list all of them.
TOP_FUNCTIONS = 10
TOP_PVARS = 10


def _metadata(profile: Profile) -> Table:
    t = Table(box=None, show_header=False, pad_edge=False)
    t.add_column(style="dim")
    t.add_column(overflow="fold")
    for label, value in run_metadata(profile):
        t.add_row(label, Text(terminal_text(value)))
    return t


def _totals(a: RunAnalysis) -> Table:
    b = a.breakdown
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
    v = a.volume.per_rank_total
    t.add_row("bytes sent", human_bytes(a.volume.total), human_bytes(v.mean), human_bytes(v.min),
              human_bytes(v.max), ratio(v.max_over_mean), ratio(v.cv))
    t.add_row("MPI calls", count(a.total_calls), "", "", "", "", "")
    return t


def _functions(a: RunAnalysis) -> Table:
    t = Table(title=f"Top MPI functions by time ({min(len(a.functions), TOP_FUNCTIONS)} of {len(a.functions)})",
              box=box.SIMPLE_HEAD, title_justify="left")
    for col in ("function", "time", "%wall", "%MPI", "calls", "%calls", "bytes"):
        t.add_column(col, justify="left" if col == "function" else "right")
    for r in a.functions.head(TOP_FUNCTIONS).itertuples(index=False):
        t.add_row(Text(terminal_text(r.function, 80)), seconds(r.time), pct(r.pct_wall), pct(r.pct_mpi), count(r.calls),
                  pct(r.pct_calls), human_bytes(r.bytes))
    return t


def _pvars(a: RunAnalysis) -> Table:
    shown = min(len(a.pvars), TOP_PVARS)
    t = Table(title=f"MPI library counters, MPI_T ({shown} of {len(a.pvars)})", box=box.SIMPLE_HEAD,
              title_justify="left")
    for col in ("variable", "min", "median", "max", "description"):
        t.add_column(col, justify="right" if col in ("min", "median", "max") else "left",
                     overflow="fold" if col == "description" else "ellipsis")
    for r in a.pvars.head(TOP_PVARS).itertuples(index=False):
        t.add_row(Text(terminal_text(r.variable, 80)), num(r.min), num(r.median), num(r.max),
                  Text(terminal_text(r.description, 200)))
    return t


def _phases(a: RunAnalysis) -> Table:
    t = Table(title="Phases (MPI_Pcontrol): wall of the longest rank, MPI and compute per rank on average",
              box=box.SIMPLE_HEAD, title_justify="left")
    for col in ("phase", "wall", "MPI", "compute", "%MPI", "calls", "top function"):
        t.add_column(col, justify="left" if col in ("phase", "top function") else "right")
    for r in a.phases.itertuples(index=False):
        top = r.top_function if isinstance(r.top_function, str) else ""
        t.add_row(Text(terminal_text(r.phase, 60)), seconds(r.wall_max), seconds(r.mpi_mean), seconds(r.compute_mean),
                  pct(r.mpi_pct), count(r.calls), Text(terminal_text(top, 40)))
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


def print_summary(profile: Profile, console: Console | None = None, analysis: RunAnalysis | None = None) -> None:
    """Print the summary of one run to ``console`` (stdout by default)."""
    c = console or Console()
    a = analysis if analysis is not None else analyse(profile)
    b = a.breakdown
    c.rule(Text(f"scalewise profile: {terminal_text(app_name(profile), 80)}"), style="bold")
    c.print(_metadata(profile), markup=False)
    for n in a.notes:
        c.print(Text(f"note: {terminal_text(n.text)}", style="yellow"))
    own = f"profiler {pct(100 * b.total_profiler / b.total_wall)} of wall   " if b.profiler and b.total_wall > 0 else ""
    c.print(f"wall time (slowest rank) {seconds(b.wall.max)}   MPI {pct(100 * b.mpi_share)} of wall   {own}"
            f"total bytes sent {human_bytes(a.volume.total)}   MPI calls {count(a.total_calls)}",
            markup=False, highlight=False)
    c.print(_totals(a))
    if a.pop is not None:
        c.print(pop_table(a.pop))
    if not a.functions.empty:
        c.print(_functions(a))
    if not a.pvars.empty:
        c.print(_pvars(a))
    if len(a.phases) > 1:  # the application marked phases: more than "(outside phases)"
        c.print(_phases(a))
    if a.findings:
        c.print("Findings", style="bold")
        for f in a.findings:
            c.print(Text(f"  - {terminal_text(f.text)}"))
