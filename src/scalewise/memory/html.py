"""The connection-memory page and terminal table."""

from __future__ import annotations

from pathlib import Path

from scalewise._version import __version__
from scalewise.formatting import human_bytes
from scalewise.memory.analysis import NOISE_SIGMAS, MemoryAnalysis, fits_table
from scalewise.memory.registry import FIGURES, SECTIONS
from scalewise.report.figure import draw_figures
from scalewise.report.page import figures_by_section, render, write_page

_BYTE_COLUMNS = ("fixed", "per_peer", "per_peer_noise", "per_rank_in_job", "kernel_per_peer", "residual_sd")


def slope_text(value: float, noise: float) -> str:
    """A fitted cost as the reader should take it: a size, "below noise", or "negative" (never a negative size)."""
    if value > noise:
        return human_bytes(value)
    if value < -noise:
        return f"negative (-{human_bytes(-value)} ± {human_bytes(noise)}): not a cost"
    return f"below noise (±{human_bytes(noise)})"


def fits_rows(a: MemoryAnalysis) -> list[dict[str, str]]:
    """The fit table with sizes as text, one dict per set-up; slopes within their noise or below zero in words."""
    table = fits_table(a.fits)
    rows = []
    for rec in table.to_dict("records"):
        row = {k: (human_bytes(v) if k in _BYTE_COLUMNS and v is not None else
                   f"{v:.2f}" if isinstance(v, float) else str(v))
               for k, v in rec.items() if k not in ("per_peer_se", "per_rank_se")}
        row["per_peer"] = slope_text(rec["per_peer"], rec["per_peer_noise"])
        if not rec["eager"]:
            row["per_rank_in_job"] = slope_text(rec["per_rank_in_job"], NOISE_SIGMAS * rec["per_rank_se"])
        rows.append(row)
    return rows


def write_memory_page(a: MemoryAnalysis, path: str | Path) -> Path:
    drawn = draw_figures(a, FIGURES)
    html = render("memory.html.j2", title="MPI connection memory", version=__version__, fits=fits_rows(a),
                  findings=a.findings, figures=figures_by_section(drawn, SECTIONS), target=a.target)
    return write_page(path, html)
