"""MPI_T readings on the one-run page (in real headless Chromium), in the
terminal summary and in ``report --json``: one table of variables with min,
median and max over ranks, the library's descriptions, and the settings in
force; a run without readings says why."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from support.chromium import Chromium
from report_profiles import halo_profile, with_mpit
from rich.console import Console

from scalewise.analysis.run.findings import analyse
from scalewise.analysis.run.mpit import pvar_table
from scalewise.report.run.html import write_html
from scalewise.report.run.terminal import print_summary

NRANKS = 4  # halo_profile(2, 2): ranks 0..3
PVAR_ROWS = """JSON.stringify(Array.from(document.querySelectorAll('#pvar-table tr[data-variable]')).map(tr =>
  Object.assign({variable: tr.dataset.variable, text: tr.innerText}, Object.fromEntries(
  Array.from(tr.querySelectorAll('[data-metric]')).map(td => [td.dataset.metric, Number(td.dataset.value)])))))"""
CVARS = """JSON.stringify(Object.fromEntries(Array.from(document.querySelectorAll('#cvar-table tr[data-cvar]'))
  .map(tr => [tr.dataset.cvar, tr.cells[1].textContent])))"""


@pytest.fixture(scope="module")
def browser(chromium):
    with Chromium(chromium) as b:
        yield b


def test_pvar_table_reduces_over_ranks_with_hand_computed_values():
    t = pvar_table(with_mpit(halo_profile(2, 2))).set_index("variable")
    # queue_length: per rank the sum over peers, r -> 0, 1, 2, 3.
    assert t.loc["queue_length", ["min", "median", "max"]].tolist() == [0, 1.5, 3]
    # queue_highwater: the highest element per rank, max(2r, 1) -> 1, 2, 4, 6.
    assert t.loc["queue_highwater", ["min", "median", "max"]].tolist() == [1, 3, 6]
    assert t.loc["queue_length", "description"] == "Messages waiting <unmatched>"
    assert (t["ranks"] == NRANKS).all()
    assert t.index.tolist()[-1] == "idle_counter"  # zero on every rank: last


def test_page_shows_the_variables_and_the_settings(browser, artifacts):
    p = with_mpit(halo_profile(2, 2))
    a = analyse(p)
    browser.open(write_html(artifacts / "mpit-4-ranks.html", p, a))
    browser.screenshot(artifacts / "mpit-4-ranks.png")
    assert browser.errors() == []
    rows = json.loads(browser.evaluate(PVAR_ROWS))
    assert [r["variable"] for r in rows] == a.pvars["variable"].tolist()
    for row, api in zip(rows, a.pvars.itertuples(index=False)):
        assert (row["min"], row["median"], row["max"]) == (api.min, api.median, api.max)
    assert "Messages waiting <unmatched>" in rows[[r["variable"] for r in rows].index("queue_length")]["text"]
    assert json.loads(browser.evaluate(CVARS)) == {"btl": "self,vader", "tag": "<b>bold</b>"}


@pytest.mark.parametrize("status, sentence", [("off", "SCALEWISE_MPIT=0"), ("unavailable", "could not be started")])
def test_page_says_why_there_are_no_readings(browser, artifacts, status, sentence):
    p = with_mpit(halo_profile(2, 1), status)
    browser.open(write_html(artifacts / f"mpit-{status}.html", p, analyse(p)))
    assert browser.errors() == []
    assert sentence in browser.evaluate("document.querySelector('#mpit-status').textContent")
    assert browser.evaluate("String(document.querySelector('#pvar-table'))") == "null"


def test_page_of_a_log_before_format_1_2_has_no_mpit_section(browser, artifacts):
    p = halo_profile(2, 1)
    browser.open(write_html(artifacts / "mpit-absent.html", p, analyse(p)))
    assert browser.evaluate("String(document.querySelector('#mpit'))") == "null"


def test_terminal_and_json_carry_the_readings():
    p = with_mpit(halo_profile(2, 2))
    c = Console(record=True, width=160)
    print_summary(p, c)
    out = c.export_text()
    assert "MPI library counters, MPI_T (3 of 3)" in out
    line = next(x for x in out.splitlines() if x.strip().startswith("queue_highwater"))
    assert line.split()[1:4] == ["1", "3", "6"]
    d = analyse(p).to_json_dict()["mpit"]
    assert d["status"] == "read" and d["cvars"]["btl"] == "self,vader"
    assert {r["variable"]: r["max"] for r in d["pvars"]} == {"queue_length": 3, "queue_highwater": 6, "idle_counter": 0}


@pytest.mark.parametrize("unloaded", [True, False])
def test_page_says_when_the_mtl_components_variables_are_not_listed(browser, artifacts, unloaded):
    p = with_mpit(halo_profile(2, 1))
    p = replace(p, mpit=replace(p.mpit, mtl_unloaded=unloaded))
    browser.open(write_html(artifacts / f"mpit-mtl-{unloaded}.html", p, analyse(p)))
    assert browser.errors() == []
    summary = browser.evaluate("document.querySelector('#cvar-list summary').textContent")
    assert summary.startswith("Settings in force: 2 control variables on rank 0")
    assert ("SCALEWISE_MPIT=all lists them" in summary) is unloaded
    assert analyse(p).to_json_dict()["mpit"]["mtl_unloaded"] is unloaded
