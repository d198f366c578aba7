"""The study report: one self-contained HTML deck (the page rules are in ``report.page``).

Sections follow the reference studies: set-up, performance per setting,
scalability, the profile across scale, comparisons, then the summary of
findings.
"""

from __future__ import annotations

from pathlib import Path

from scalewise._version import __version__
from scalewise.analysis.finding import in_kind_order
from scalewise.analysis.study.pop_table import POP_ROWS, STUDY_SPLIT_MISSING, series_tables
from scalewise.analysis.study.ranking import caveats, opening
from scalewise.analysis.study.study_analysis import StudyAnalysis
from scalewise.report.figure import DrawnFigure, draw_figures
from scalewise.report.page import figures_by_section, render, write_page
from scalewise.report.study.registry import SECTIONS, figures_for, series_keys


def render_study_html(a: StudyAnalysis, drawn: list[DrawnFigure] | None = None) -> str:
    drawn = drawn if drawn is not None else draw_figures(a, figures_for(a))
    return render(
        "study.html.j2",
        title=f"{a.study.name}: scalewise study report", a=a, study=a.study, setup=a.setup, axes=a.axes,
        sections=SECTIONS, figures=figures_by_section(drawn, SECTIONS), findings=in_kind_order(a.findings),
        key=opening(a.findings), caveats=caveats(a.findings), keys=series_keys(a), scale=a.scale.axis, version=__version__,
        pop_series=series_tables(a.pop, a.scale, series_keys(a) or ["app"]), pop_rows=POP_ROWS,
        split_missing=STUDY_SPLIT_MISSING,
        config_cols=[k for k in a.study.settings if k in a.summary and (k in a.swept or k == "app")],
    )


def write_study_html(path: str | Path, a: StudyAnalysis, drawn: list[DrawnFigure] | None = None) -> Path:
    return write_page(path, render_study_html(a, drawn))
