"""The connection-memory page and terminal table."""

from __future__ import annotations

from pathlib import Path

from scalewise._version import __version__
from scalewise.analysis.memory import MemoryAnalysis, fits_table
from scalewise.formatting import human_bytes
from scalewise.report.figure import draw_figures
from scalewise.report.memory.registry import FIGURES, SECTIONS
from scalewise.report.page import figures_by_section, render, write_page

_BYTE_COLUMNS = ("fixed", "per_peer", "per_peer_noise", "per_rank_in_job", "kernel_per_peer", "residual_sd")


def fits_rows(a: MemoryAnalysis) -> list[dict[str, str]]:
    """The fit table with sizes as text, one dict per set-up."""
    table = fits_table(a.fits)
    rows = []
    for rec in table.to_dict("records"):
        rows.append({k: (human_bytes(v) if k in _BYTE_COLUMNS and v is not None else
                         f"{v:.2f}" if isinstance(v, float) else str(v)) for k, v in rec.items()})
    return rows


def write_memory_page(a: MemoryAnalysis, path: str | Path) -> Path:
    drawn = draw_figures(a, FIGURES)
    html = render("memory.html.j2", title="MPI connection memory", version=__version__, fits=fits_rows(a),
                  findings=a.findings, figures=figures_by_section(drawn, SECTIONS), target=a.target)
    return write_page(path, html)
