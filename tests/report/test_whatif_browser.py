"""The what-if page in real headless Chromium: no console errors, every figure drawn, one row per source."""

from __future__ import annotations

import json

from support.chromium import Chromium

from scalewise import whatif
from scalewise.report.whatif.html import write_whatif_page
from scalewise.report.whatif.registry import FIGURES
from scalewise.whatif.compare import compare
from support.traces import halo_allreduce

FIGURE_STATE = """JSON.stringify(Array.from(document.querySelectorAll('figure[data-figure]')).map(f => {
  const img = f.querySelector('img'); const r = img ? img.getBoundingClientRect() : null;
  return {id: f.dataset.figure, complete: img ? img.complete : false, natural: img ? img.naturalWidth : 0,
          width: r ? r.width : 0, height: r ? r.height : 0};
}))"""
SOURCES = "JSON.stringify(Array.from(document.querySelectorAll('tr[data-source]')).map(tr => tr.dataset.source))"


def test_whatif_page_renders_every_figure(chromium, artifacts):
    trace = halo_allreduce(16, 3, jitter=0.05)
    w = compare(whatif.replay(trace, ["gige", "edr-ib", "ideal"], library="mpich"))
    page = write_whatif_page(w, "halo.swtrace", artifacts / "whatif.html")
    with Chromium(chromium) as b:
        b.open(page)
        b.screenshot(artifacts / "whatif.png")
        assert b.errors() == []
        figs = json.loads(b.evaluate(FIGURE_STATE))
        assert json.loads(b.evaluate(SOURCES)) == ["gige", "edr-ib", "ideal"]
    assert [f["id"] for f in figs] == [s.id for s in FIGURES]
    for f in figs:
        assert f["complete"] and f["natural"] > 300 and f["width"] > 300 and f["height"] > 100, f
