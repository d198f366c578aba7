"""The figure registry type and the one drawing loop, for both levels.

A registry (``report.run.registry``, ``report.study.registry``) is a list of
:class:`FigureSpec`: which plotting function draws a figure, what it takes
from the analysis, its caption, and in words why it cannot be drawn for a
given analysis.  :func:`draw_figures` draws a list and encodes each figure as
SVG for the page; :func:`write_figure_files` writes PNG and SVG on request.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib
from matplotlib.figure import Figure

# Figures are drawn with matplotlib's object API and saved through its file
# backends, so no display and no pyplot state are involved.  Without a fixed
# date and id salt every SVG would differ byte for byte between two reports
# of the same log.
_SVG_META = {"Date": None, "Creator": "scalewise"}


@dataclass(frozen=True)
class FigureSpec:
    """One figure of a report; ``a`` is the level's analysis (RunAnalysis or StudyAnalysis)."""

    id: str  # file stem and HTML id, e.g. "p1-mpi-vs-compute"
    ref: str  # reference figure ID (P1..P8, B1..B9)
    section: str  # key of the registry's SECTIONS
    title: str
    function: Callable[..., Figure]  # the plotting function in the level's figures.py
    arguments: Callable[[Any], tuple]  # picks its inputs out of the analysis
    caption: str
    missing: Callable[[Any], str | None]  # why the figure cannot be drawn, or None

    def draw(self, a: Any) -> Figure:
        return self.function(*self.arguments(a))


@dataclass(frozen=True)
class DrawnFigure:
    spec: FigureSpec
    figure: Figure | None  # None when the analysis has no data for it
    missing: str | None  # why it is missing, for the reader
    svg: bytes | None  # encoded once: the page and --figures both need it, and encoding dominates the cost


def draw_figures(a: Any, specs: list[FigureSpec]) -> list[DrawnFigure]:
    """Draw every figure of ``specs`` the analysis has data for, and encode it as SVG."""
    out = []
    for spec in specs:
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
