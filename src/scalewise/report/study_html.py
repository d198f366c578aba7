"""The study report: one self-contained HTML deck, and the tables as CSV or Parquet.

Same rules as the profile page (``scalewise.report.html``): inline CSS,
figures as SVG data: URIs, a Content-Security-Policy that forbids everything
else, autoescaped templates.  Sections follow the reference studies: set-up,
performance per setting, scalability, the profile across scale,
comparisons, then the summary of findings.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import Path

from matplotlib.figure import Figure

from scalewise._version import __version__
from scalewise.analysis.study_findings import key_findings
from scalewise.analysis.study_results import StudyAnalysis
from scalewise.analysis.study_setup import axes_rows, setup_rows
from scalewise.errors import ScalewiseError
from scalewise.report.templating import ENV as _ENV
from scalewise.report.images import svg_bytes
from scalewise.report.study_registry import SECTIONS, StudyFigureSpec, series_keys, study_figures_for


# Findings in the order the summary slide reads them.
FINDING_ORDER = ["failed", "faster", "average", "scaling", "mpi-share", "bound", "growth", "volume", "energy", "noise"]


@dataclass(frozen=True)
class DrawnStudyFigure:
    spec: StudyFigureSpec
    figure: Figure | None
    missing: str | None
    svg: bytes | None


def draw_study_figures(a: StudyAnalysis) -> list[DrawnStudyFigure]:
    out = []
    for spec in study_figures_for(a):
        why = spec.missing(a)
        fig = None if why else spec.draw(a)
        out.append(DrawnStudyFigure(spec, fig, why, None if fig is None else svg_bytes(fig)))
    return out


def _figure_dicts(drawn: list[DrawnStudyFigure]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {key: [] for key in SECTIONS}
    for f in drawn:
        src = None if f.svg is None else "data:image/svg+xml;base64," + base64.b64encode(f.svg).decode("ascii")
        out[f.spec.section].append({"id": f.spec.id, "ref": f.spec.ref, "title": f.spec.title,
                                    "caption": f.spec.caption, "missing": f.missing, "src": src})
    return out


def render_study_html(a: StudyAnalysis, drawn: list[DrawnStudyFigure] | None = None) -> str:
    drawn = drawn if drawn is not None else draw_study_figures(a)
    order = {k: i for i, k in enumerate(FINDING_ORDER)}
    findings = sorted(a.findings, key=lambda f: order.get(f.kind, len(order)))
    keys = series_keys(a)
    return _ENV.get_template("study.html.j2").render(
        title=f"{a.study.name}: scalewise study report", a=a, study=a.study, setup=setup_rows(a.study),
        axes=axes_rows(a.study), sections=SECTIONS, figures=_figure_dicts(drawn), findings=findings,
        key=key_findings(a.findings),
        keys=keys, scale=a.scale.axis, version=__version__,
        config_cols=[k for k in a.study.settings if k in a.summary and (k in a.swept or k == "app")],
    )


def write_study_html(path: str | Path, a: StudyAnalysis, drawn: list[DrawnStudyFigure] | None = None) -> Path:
    out = Path(path)
    if out.is_dir():
        raise ScalewiseError(f"{out}: is a folder; give the HTML file to write")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_study_html(a, drawn), encoding="utf-8")
    return out


def write_tables(a: StudyAnalysis, directory: str | Path, fmt: str) -> list[Path]:
    """Every table of :meth:`StudyAnalysis.tables` as ``<name>.csv`` or ``<name>.parquet``."""
    d = Path(directory)
    if d.exists() and not d.is_dir():
        raise ScalewiseError(f"{d}: exists and is not a folder")
    d.mkdir(parents=True, exist_ok=True)
    written = []
    for name, frame in a.tables().items():
        path = d / f"{name}.{fmt}"
        if fmt == "csv":
            frame.to_csv(path, index=False)
        else:
            # Object columns may mix ints and strings (custom axes); Parquet wants one type per column.
            mixed = [c for c in frame.columns if frame[c].dtype == object]
            frame.astype({c: "string" for c in mixed}).to_parquet(path, index=False)
        written.append(path)
    return written
