"""The one jinja2 environment both pages render with: autoescaped, strict,
with the number formatters of report.text as filters."""

from __future__ import annotations

import jinja2

from scalewise.report import text

ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("scalewise.report", "templates"),
    autoescape=True,
    trim_blocks=True,
    lstrip_blocks=True,
    undefined=jinja2.StrictUndefined,
)
for _name in ("seconds", "pct", "ratio", "count", "human_bytes"):
    ENV.filters[_name] = getattr(text, _name)
ENV.filters["num"] = lambda v: "n/a" if v is None or v != v else (f"{v:,.4g}" if abs(v) < 1e4 else f"{v:,.0f}")
