"""Turning registry figures into image bytes: SVG for the page, PNG and SVG files on request."""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

import matplotlib
from matplotlib.figure import Figure

from scalewise.analysis.findings import ProfileAnalysis
from scalewise.report.registry import FIGURES, FigureSpec

# Figures are drawn with matplotlib's object API and saved through its file
# backends, so no display and no pyplot state are involved.  Without a fixed
# date and id salt every SVG would differ byte for byte between two reports
# of the same log.
_SVG_META = {"Date": None, "Creator": "scalewise"}


@dataclass(frozen=True)
class DrawnFigure:
    spec: FigureSpec
    figure: Figure | None  # None when the run has no data for it
    missing: str | None  # why it is missing, for the reader
    svg: bytes | None  # encoded once: the page and --figures both need it, and encoding dominates the cost


def draw_all(a: ProfileAnalysis, specs: list[FigureSpec] | None = None) -> list[DrawnFigure]:
    """Draw every registered figure the run has data for, and encode it as SVG."""
    out = []
    for spec in specs if specs is not None else FIGURES:
        why = spec.missing(a)
        fig = None if why else spec.draw(a)
        out.append(DrawnFigure(spec, fig, why, None if fig is None else svg_bytes(fig)))
    return out


def svg_bytes(fig: Figure) -> bytes:
    buf = io.BytesIO()
    # Text stays text (the browser sets it in its sans-serif): converting every
    # glyph to a path doubled the encoding time and the file size.
    with matplotlib.rc_context({"svg.hashsalt": "scalewise", "svg.fonttype": "none"}):
        fig.savefig(buf, format="svg", metadata=_SVG_META)
    return buf.getvalue()


def png_bytes(fig: Figure, dpi: int = 120) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": "scalewise"})
    return buf.getvalue()


def write_figure_files(drawn: list[DrawnFigure], directory: str | Path) -> list[Path]:
    """Write each drawn figure as <id>.png and <id>.svg; returns the paths written."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    written = []
    for f in drawn:
        if f.figure is None:
            continue
        for ext, data in (("svg", f.svg), ("png", png_bytes(f.figure))):
            path = d / f"{f.spec.id}.{ext}"
            path.write_bytes(data)
            written.append(path)
    return written
