"""One self-contained HTML page for one run (the page rules are in ``report.page``).

Key numbers carry ``data-metric`` / ``data-value`` attributes holding the
unformatted value (Python ``repr`` of the float), so tools and tests can read
the page without parsing formatted text.
"""

from __future__ import annotations

from pathlib import Path

from scalewise._version import __version__
from scalewise.analysis.run.findings import RunAnalysis
from scalewise.analysis.run.pop_metrics import pop_rows
from scalewise.formatting import pct, seconds
from scalewise.model.profile import Profile
from scalewise.report.figure import DrawnFigure, draw_figures
from scalewise.report.page import figures_by_section, render, write_page
from scalewise.report.run.metadata import app_name, run_metadata
from scalewise.report.run.registry import FIGURES, SECTIONS

# Per-rank tables are listed in full up to this many ranks; above it the page
# shows percentiles only.
MAX_RANK_ROWS = 64


def render_html(profile: Profile, analysis: RunAnalysis, drawn: list[DrawnFigure] | None = None) -> str:
    """The page as a string; the figures are drawn if not given."""
    figs = drawn if drawn is not None else draw_figures(analysis, FIGURES)
    return render(
        "profile.html.j2",
        title=f"{app_name(profile)}: scalewise profile",
        app=app_name(profile),
        meta=run_metadata(profile),
        profile=profile,
        a=analysis,
        pop_rows=pop_rows(analysis.pop),
        sections=SECTIONS,
        figures=figures_by_section(figs, SECTIONS),
        per_rank_rows=MAX_RANK_ROWS,
        text_seconds=seconds,
        text_pct=pct,
        version=__version__,
    )


def write_html(path: str | Path, profile: Profile, analysis: RunAnalysis,
               drawn: list[DrawnFigure] | None = None) -> Path:
    return write_page(path, render_html(profile, analysis, drawn))
