"""Legends of the run page in real headless Chromium: never over a plot or a bar, text at 10 px or more
as the page shows it (tests/support/legends.py measures)."""

from __future__ import annotations

import pytest
from support.chromium import Chromium
from support.legends import assert_legends_clear, legends
from report_profiles import halo_profile

from scalewise.analysis.run.findings import analyse
from scalewise.report.run.html import write_html

WITH_LEGEND = {"p1-mpi-vs-compute", "p1-mpi-share-over-time", "p5-locality", "p6-data-per-rank"}


@pytest.fixture(scope="module")
def browser(chromium):
    with Chromium(chromium) as b:
        yield b


@pytest.mark.parametrize("px,py", [(2, 2), (4, 2), (10, 10)])  # bars up to 64 ranks, curves beyond
def test_run_page_legends_stand_clear_and_read(browser, artifacts, px, py):
    profile = halo_profile(px, py)
    page = write_html(artifacts / f"legends-{px * py}-ranks.html", profile, analyse(profile))
    browser.open(page)
    found = legends(browser)
    assert_legends_clear(found, WITH_LEGEND)
    bars = {f["figure"]: f["bars"] for f in found}
    if px * py <= 64:  # the check saw the bars it checks against: one per rank and part
        assert bars["p1-mpi-vs-compute"] >= 2 * px * py and bars["p6-data-per-rank"] >= px * py
