"""The report page in real headless Chromium: no console errors, every figure drawn, numbers as in the API.

One browser serves the whole module; each page is written to test-artifacts/
with a full-page screenshot beside it, so a person can look at what was tested.
"""

from __future__ import annotations

import json
import math
import shlex
from pathlib import Path

import pytest
from support.chromium import Chromium
from report_profiles import halo_profile, zero_call_profile

import scalewise
from scalewise.analysis.run.findings import analyse
from scalewise.report.run.html import write_html
from scalewise.report.run.registry import FIGURES

GOLDEN_1_2 = Path(__file__).resolve().parents[1] / "data" / "golden-1.2-mpich-phases.swlog"
FIGURE_STATE = """JSON.stringify(Array.from(document.querySelectorAll('figure[data-figure]')).map(f => {
  const img = f.querySelector('img'); const r = img ? img.getBoundingClientRect() : null;
  return {id: f.dataset.figure, img: !!img, complete: img ? img.complete : false,
          natural: img ? img.naturalWidth : 0, width: r ? r.width : 0, height: r ? r.height : 0,
          missing: (f.querySelector('[data-missing]') || {}).textContent || null};
}))"""
METRICS = """JSON.stringify(Object.fromEntries(Array.from(document.querySelectorAll('[data-metric]'))
  .filter(e => !e.closest('tr[data-function], tr[data-rank], tr[data-k]')).map(e => [e.dataset.metric, e.dataset.value])))"""
FUNCTION_ROWS = """JSON.stringify(Array.from(document.querySelectorAll('#function-table tr[data-function]')).map(tr =>
  Object.assign({function: tr.dataset.function}, Object.fromEntries(Array.from(tr.querySelectorAll('[data-metric]'))
  .map(td => [td.dataset.metric, td.dataset.value])))))"""


@pytest.fixture(scope="module")
def browser(chromium):
    with Chromium(chromium) as b:
        yield b


def render(browser, artifacts, name, profile):
    """Write the page, load it, screenshot it; return (analysis, figure states)."""
    a = analyse(profile)
    page = write_html(artifacts / f"{name}.html", profile, a)
    browser.open(page)
    browser.screenshot(artifacts / f"{name}.png")
    assert browser.errors() == [], f"{name}: console errors"
    return a, json.loads(browser.evaluate(FIGURE_STATE))


def assert_figures(a, figs, missing_ids=()):
    assert [f["id"] for f in figs] == [s.id for s in FIGURES]
    for f in figs:
        if f["id"] in missing_ids:
            assert not f["img"] and f["missing"], f
        else:
            assert f["img"] and f["complete"] and f["natural"] > 300 and f["width"] > 300 and f["height"] > 100, f


def close(page_value: str, api_value) -> bool:
    v = float(page_value)
    return (math.isnan(v) and math.isnan(float(api_value))) or v == float(api_value)


def test_halo_page_renders_every_figure_and_quotes_the_api(browser, artifacts):
    a, figs = render(browser, artifacts, "halo-8-ranks", halo_profile(4, 2))
    assert_figures(a, figs)
    m = json.loads(browser.evaluate(METRICS))
    b = a.breakdown
    expected = {"mpi_share": b.mpi_share, "total_mpi": b.total_mpi, "total_wall": b.total_wall,
                "wall.max": b.wall.max, "compute.max_over_mean": b.compute.max_over_mean, "compute.cv": b.compute.cv,
                "mpi.cv": b.mpi.cv, "total_calls": a.total_calls, "volume.total": a.volume.total,
                "volume.p2p_total": a.volume.p2p_total, "peers.median": a.neighbourhood.peers.percentiles[50],
                "p2p.bytes": a.neighbourhood.total_bytes, "nranks": 8}
    for key, value in expected.items():
        assert close(m[key], value), (key, m[key], value)
    rows = json.loads(browser.evaluate(FUNCTION_ROWS))
    assert [r["function"] for r in rows] == a.functions["function"].tolist()
    for row, api in zip(rows, a.functions.itertuples(index=False)):
        for col in ("calls", "time", "pct_wall", "pct_mpi", "pct_calls", "bytes"):
            assert close(row[col], getattr(api, col)), (row["function"], col)
    findings = browser.evaluate("Array.from(document.querySelectorAll('#findings li')).map(li => li.textContent)")
    assert findings == [f.text for f in a.findings]
    # The memory high-water mark the runtime records (256 MiB per rank in this profile) is shown.
    assert "memory high-water mark256 MiB (rank 0), median 256 MiB per rank" in \
        browser.evaluate("document.body.textContent").replace("\n", "").replace("  ", "")


def test_4096_ranks_summarise_per_rank_plots(browser, artifacts):
    a, figs = render(browser, artifacts, "halo-4096-ranks", halo_profile(64, 64))
    assert_figures(a, figs)
    assert a.matrix.aggregated
    assert browser.evaluate("document.querySelectorAll('#rank-table').length") == 0  # percentiles only
    assert "16 ranks per cell" in browser.evaluate("document.getElementById('matrix-scope').textContent")


def test_command_line_is_shown_as_text(browser, artifacts):
    cmd = ["./app<script>document.title='pwned'</script>", "--name=<b>bold</b>", "a & b", '"quoted"']
    a, figs = render(browser, artifacts, "escaping", halo_profile(2, 2, command=cmd))
    assert browser.evaluate("document.getElementById('command').textContent") == shlex.join(cmd)
    assert browser.evaluate("document.querySelectorAll('script, b').length") == 0
    assert "pwned" not in browser.evaluate("document.title")


def test_zero_call_profile_renders_with_note(browser, artifacts):
    _, figs = render(browser, artifacts, "zero-calls", zero_call_profile())
    missing = {"p2-time-per-function", "p3-calls-per-function", "p4-message-sizes", "p5-matrix", "p5-locality",
               "p6-data-per-rank", "p1-mpi-share-heatmap", "p1-mpi-share-over-time"}
    assert_figures(None, figs, missing)
    assert "No MPI calls were recorded" in browser.evaluate("document.getElementById('notes').textContent")


def test_single_rank_profile_renders_with_note(browser, artifacts):
    _, figs = render(browser, artifacts, "single-rank", halo_profile(1, 1))
    assert_figures(None, figs, {"p5-matrix", "p5-locality"})
    assert "Single-rank run" in browser.evaluate("document.getElementById('notes').textContent")


def test_partial_profile_renders_with_note(browser, artifacts):
    _, figs = render(browser, artifacts, "partial", halo_profile(4, 4, flags={"partial"}, drop_ranks=3))
    assert_figures(None, figs)
    notes = browser.evaluate("document.getElementById('notes').textContent")
    assert "Partial log: 13 of 16 ranks recorded" in notes


def test_harness_sees_errors_and_broken_figures(browser, artifacts):
    """The checks above must be able to fail: a blocked load and a broken image are caught."""
    p = halo_profile(2, 1)
    page = write_html(artifacts / "harness-check.html", p, analyse(p))
    html = page.read_text()
    broken = html.replace('src="data:image/svg+xml;base64,', 'src="data:image/svg+xml;base64,AAAA', 1)
    broken = broken.replace("</body>", '<img src="http://127.0.0.1:9/x.png"></body>')
    page.write_text(broken)
    browser.open(page)
    assert any("Content Security Policy" in e for e in browser.errors())
    figs = json.loads(browser.evaluate(FIGURE_STATE))
    assert figs[0]["natural"] == 0  # the corrupted figure does not render


def test_what_mpi_itself_cost_is_shown(browser, artifacts):
    """Format 1.1 logs carry per rank the memory MPI_Init took and the wait in MPI_Finalize."""
    p = halo_profile(2, 2)
    r = p.ranks
    r["rss_init_start"], r["rss_init_end"] = 4 << 20, [(4 + 10 * (k + 1)) << 20 for k in range(4)]
    r["rss_finalize"], r["finalize_time"] = 300 << 20, [0.5, 0.25, 0.125, 0.0]
    render(browser, artifacts, "mpi-cost", p)
    text = browser.evaluate("document.body.textContent").replace("\n", "").replace("  ", "")
    assert "memory MPI_Init tookmedian 25 MiB per rank, most 40 MiB (rank 3)" in text
    assert "MPI_Finalize waitmedian 188 ms per rank, longest 500 ms (rank 0); not in MPI time" in text


SITE_ROWS = """JSON.stringify(Array.from(document.querySelectorAll('#site-table tr[data-site]')).map(tr =>
  Object.assign({where: tr.querySelector('.where').textContent}, Object.fromEntries(Array.from(tr.querySelectorAll('[data-metric]'))
  .map(td => [td.dataset.metric, td.dataset.value])))))"""


def test_top_call_sites_table_quotes_the_analysis(browser, artifacts):
    import dataclasses

    import pandas as pd

    from scalewise.model.profile import SITE_COLUMNS

    p = halo_profile(2, 2)
    rows = [(r, "MPI_Waitall", "/app/halo2d", 0x1234, 100, 0.5 + 0.1 * r, 4096, "exchange", "halo.c:42")
            for r in range(4)]
    rows += [(r, "MPI_Allreduce", "/app/halo2d", 0x2000, 10, 0.25, 80, "norm", "halo.c:77") for r in range(2)]
    p = dataclasses.replace(p, sites=pd.DataFrame(rows, columns=SITE_COLUMNS))
    a, _ = render(browser, artifacts, "call-sites", p)
    got = json.loads(browser.evaluate(SITE_ROWS))
    assert [g["where"] for g in got] == ["halo.c:42", "halo.c:77"] == a.sites["location"].tolist()
    assert [int(g["calls"]) for g in got] == [400, 20] and [int(g["ranks"]) for g in got] == [4, 2]
    for g, api in zip(got, a.sites.itertuples()):
        assert close(g["time"], api.time) and close(g["bytes"], api.bytes) and close(g["pct_mpi"], api.pct_mpi)


PHASE_ROWS = """JSON.stringify(Array.from(document.querySelectorAll('#phase-table tr[data-phase]')).map(tr =>
  Object.assign({phase: tr.dataset.phase}, Object.fromEntries(Array.from(tr.querySelectorAll('[data-metric]'))
  .map(td => [td.dataset.metric, td.dataset.value])))))"""


def test_phases_and_mpi_share_over_time_are_shown(browser, artifacts):
    """The format 1.2 golden log (planted phases): the heat map and the line
    over time are drawn, and the phase table quotes the analysis."""
    p = scalewise.load(GOLDEN_1_2)
    a, figs = render(browser, artifacts, "phases", p)
    assert_figures(a, figs, {"p5-matrix", "p5-locality"})
    rows = json.loads(browser.evaluate(PHASE_ROWS))
    assert [r["phase"] for r in rows] == ["(outside phases)", "compute", "wait", "phase 3"]
    for row, want in zip(rows, a.phases.itertuples()):
        assert close(row["wall_max"], want.wall_max) and close(row["mpi_pct"], want.mpi_pct)
        assert int(row["calls"]) == want.calls
    assert int(browser.evaluate("document.querySelectorAll('#phase-function-table tr[data-function]').length")) == \
        len(a.phase_functions)


POP_CELLS = """JSON.stringify(Array.from(document.querySelectorAll('#pop-table tr[data-pop]')).map(tr => {
  const td = tr.querySelector('td[data-metric]');
  return {key: tr.dataset.pop, value: td.dataset.value, text: td.textContent.trim(),
          colour: getComputedStyle(td).backgroundColor, why: tr.cells[2].textContent.trim()};
}))"""


def test_pop_efficiencies_are_shown_in_colour(browser, artifacts):
    """2 x 2 halo: ranks compute 10, 11, 12, 10 s; the longest span is rank 2's 14.6 s (report_profiles.py)."""
    from scalewise.report.style import efficiency_colour

    render(browser, artifacts, "pop-halo", halo_profile(2, 2))
    rows = {r["key"]: r for r in json.loads(browser.evaluate(POP_CELLS))}
    want = {"parallel_efficiency": 10.75 / 14.6, "load_balance": 10.75 / 12, "communication_efficiency": 12 / 14.6}
    assert list(rows) == ["parallel_efficiency", "load_balance", "communication_efficiency",
                          "serialisation_efficiency", "transfer_efficiency"]
    for key, value in want.items():
        r = rows[key]
        assert float(r["value"]) == pytest.approx(value, rel=1e-12) and r["text"] == f"{100 * value:.1f}%"
        hex_colour = efficiency_colour(value)
        assert r["colour"] == "rgb({}, {}, {})".format(*(int(hex_colour[i:i + 2], 16) for i in (1, 3, 5)))
    for key in ("serialisation_efficiency", "transfer_efficiency"):
        assert rows[key]["text"] == "\u2014" and "scalewise run --trace" in rows[key]["why"]
    assert float(browser.evaluate("document.querySelector('[data-metric=\"pop.runtime\"]').dataset.value")) == 14.6
