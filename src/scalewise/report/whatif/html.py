"""The what-if page (its summary table: table.py)."""

from __future__ import annotations

from pathlib import Path

from scalewise._version import __version__
from scalewise.report.figure import draw_figures
from scalewise.report.page import figures_by_section, render, write_page
from scalewise.report.whatif.registry import FIGURES, SECTIONS
from scalewise.report.whatif.table import summary_rows
from scalewise.whatif.compare import WhatIf
from scalewise.whatif.results import changes


def page_rows(w: WhatIf) -> list[dict[str, str]]:
    """The summary table's rows (table.py) from the comparison's frames."""
    same = None if w.same_compute is None else w.same_compute.to_dict("index")
    summary = w.summary.to_dict("index")
    return summary_rows(summary, changes(summary, same))


def write_whatif_page(w: WhatIf, trace: str, path: str | Path) -> Path:
    drawn = draw_figures(w, FIGURES)
    html = render("whatif.html.j2", title="Interconnect what-if", version=__version__, trace=trace,
                  library=w.library, capped=w.capped, rows=page_rows(w),
                  figures=figures_by_section(drawn, SECTIONS))
    return write_page(path, html)
