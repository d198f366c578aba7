"""The one page writer both reports use: a jinja2 environment, figures inlined, the file written.

Pages open from disk with no network: CSS is inlined by the base template,
figures are SVG documents embedded as data: URIs (each keeps its own ids, so
figures cannot clash), and a Content-Security-Policy forbids every other
source, scripts included.  Templates autoescape and are strict about
undefined names; the formatters of ``scalewise.formatting`` are their filters.
"""

from __future__ import annotations

import base64
from pathlib import Path

import jinja2

from scalewise.errors import ScalewiseError
from scalewise.formatting import count, human_bytes, num, pct, ratio, seconds
from scalewise.report.figure import DrawnFigure
from scalewise.report.style import efficiency_style

ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("scalewise.report", "templates"),
    autoescape=True,
    trim_blocks=True,
    lstrip_blocks=True,
    undefined=jinja2.StrictUndefined,
)
ENV.filters.update(seconds=seconds, pct=pct, ratio=ratio, count=count, human_bytes=human_bytes, num=num,
                   efficiency_style=efficiency_style)


def data_uri(svg: bytes) -> str:
    return "data:image/svg+xml;base64," + base64.b64encode(svg).decode("ascii")


def figures_by_section(drawn: list[DrawnFigure], sections: dict[str, str]) -> dict[str, list[dict]]:
    """What the templates' figure blocks show, grouped by section in the registry's order."""
    out: dict[str, list[dict]] = {key: [] for key in sections}
    for f in drawn:
        out[f.spec.section].append({
            "id": f.spec.id, "ref": f.spec.ref, "title": f.spec.title, "caption": f.spec.caption,
            "missing": f.missing, "src": None if f.svg is None else data_uri(f.svg),
        })
    return out


def render(template: str, **context) -> str:
    return ENV.get_template(template).render(**context)


def write_page(path: str | Path, html: str) -> Path:
    """Write one page, creating its folder; a folder given as the page is a user error."""
    out = Path(path)
    if out.is_dir():
        raise ScalewiseError(f"{out}: is a folder; give the HTML file to write")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(html, encoding="utf-8")
    return out
