"""The what-if page and its terminal table."""

from __future__ import annotations

from pathlib import Path

from rich.table import Table

from scalewise._version import __version__
from scalewise.formatting import pct, seconds
from scalewise.report.figure import draw_figures
from scalewise.report.page import figures_by_section, render, write_page
from scalewise.report.whatif.registry import FIGURES, SECTIONS
from scalewise.whatif.compare import WhatIf, against_measured


def summary_rows(w: WhatIf) -> list[dict[str, str]]:
    err = against_measured(w)
    rows = []
    for source, r in w.summary.iterrows():
        e = err.loc[source] if source in err.index else None
        rows.append({"source": str(source), "wall time": seconds(r["wall_time"]),
                     "jobs/day": "∞" if r["jobs_per_day"] == float("inf") else f"{r['jobs_per_day']:,.0f}",
                     "MPI share": pct(r["mpi_share"] * 100), "compute (all ranks)": seconds(r["compute"]),
                     "MPI (all ranks)": seconds(r["mpi"]),
                     "wall change vs measured": "" if e is None else f"{e['wall_change'] * 100:+.1f}%",
                     "MPI share vs measured": "" if e is None else f"{e['mpi_share_points']:+.1f} pts"})
    return rows


def terminal_table(w: WhatIf) -> Table:
    rows = summary_rows(w)
    t = Table(title=f"What-if, collectives as {w.library} runs them")
    for k in rows[0]:
        t.add_column(k, justify="left" if k == "source" else "right")
    for r in rows:
        t.add_row(*r.values())
    return t


def write_whatif_page(w: WhatIf, trace: str, path: str | Path) -> Path:
    drawn = draw_figures(w, FIGURES)
    html = render("whatif.html.j2", title="Interconnect what-if", version=__version__, trace=trace,
                  library=w.library, capped=w.capped, rows=summary_rows(w),
                  figures=figures_by_section(drawn, SECTIONS))
    return write_page(path, html)
