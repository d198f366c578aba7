"""One self-contained HTML page for one run.

The page opens from disk with no network: CSS is inlined, figures are SVG
documents embedded as data: URIs (each keeps its own ids, so figures cannot
clash), and a Content-Security-Policy forbids every other source, scripts
included.  Templates autoescape, so a command line such as ``<script>`` is
shown as text.

Key numbers carry ``data-metric`` / ``data-value`` attributes holding the
unformatted value (Python ``repr`` of the float), so tools and tests can read
the page without parsing formatted text.
"""

from __future__ import annotations

import base64
from pathlib import Path


from scalewise._version import __version__
from scalewise.analysis.findings import ProfileAnalysis, analyse
from scalewise.model.profile import Profile
from scalewise.report import text
from scalewise.report.templating import ENV as _ENV
from scalewise.report.images import DrawnFigure, draw_all
from scalewise.report.registry import SECTIONS


# Per-rank tables are listed in full up to this many ranks; above it the page
# shows percentiles only.
MAX_RANK_ROWS = 64


def _data_uri(svg: bytes) -> str:
    return "data:image/svg+xml;base64," + base64.b64encode(svg).decode("ascii")


def _sections(drawn: list[DrawnFigure]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {key: [] for key in SECTIONS}
    for f in drawn:
        out[f.spec.section].append({
            "id": f.spec.id, "ref": f.spec.ref, "title": f.spec.title, "caption": f.spec.caption,
            "missing": f.missing, "src": None if f.svg is None else _data_uri(f.svg),
        })
    return out


def render_html(profile: Profile, analysis: ProfileAnalysis | None = None,
                drawn: list[DrawnFigure] | None = None) -> str:
    """The page as a string; analysis and figures are computed if not given."""
    a = analysis if analysis is not None else analyse(profile)
    figs = drawn if drawn is not None else draw_all(a)
    return _ENV.get_template("profile.html.j2").render(
        title=f"{text.app_name(profile)}: scalewise profile",
        app=text.app_name(profile),
        meta=text.run_metadata(profile),
        profile=profile,
        a=a,
        sections=SECTIONS,
        figures=_sections(figs),
        per_rank_rows=MAX_RANK_ROWS,
        text_seconds=text.seconds,
        text_pct=text.pct,
        version=__version__,
    )


def write_html(path: str | Path, profile: Profile, analysis: ProfileAnalysis | None = None,
               drawn: list[DrawnFigure] | None = None) -> Path:
    out = Path(path)
    if out.parent and not out.parent.exists():
        out.parent.mkdir(parents=True)
    out.write_text(render_html(profile, analysis, drawn), encoding="utf-8")
    return out
