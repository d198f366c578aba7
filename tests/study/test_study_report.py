"""``scalewise study report`` in-process, and its pages in real headless Chromium.

One browser serves the module; each page is kept in test-artifacts/study/
with a full-page screenshot beside it.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest
from support.chromium import Chromium
from click.testing import CliRunner
from study_synth import FIVE, Planted, mpi_race

import scalewise
from scalewise.analysis.study.findings import analyse_study
from scalewise.cli.main import cli
from scalewise.report.study.registry import figures_for

FIGURES = """JSON.stringify(Array.from(document.querySelectorAll('figure[data-figure]')).map(f => {
  const img = f.querySelector('img');
  return {id: f.dataset.figure, img: !!img, complete: img ? img.complete : false, natural: img ? img.naturalWidth : 0,
          missing: (f.querySelector('[data-missing]') || {}).textContent || null};
}))"""
FINDINGS = """JSON.stringify(Array.from(document.querySelectorAll('#findings li')).map(li =>
  ({kind: li.dataset.kind, runs: li.dataset.runs, text: li.firstChild.textContent.trim()})))"""
SECTIONS = "JSON.stringify(Array.from(document.querySelectorAll('body > section')).map(s => s.id))"


@pytest.fixture(scope="module")
def browser(chromium):
    with Chromium(chromium) as b:
        yield b


def _report(source, out, *extra):
    result = CliRunner().invoke(cli, ["study", "report", str(source), "-o", str(out), *extra])
    assert result.exit_code == 0, result.output
    return result


def _open(browser, page, artifacts, name):
    browser.open(page)
    browser.screenshot(artifacts / f"{name}.png")
    assert browser.errors() == [], f"{name}: console errors"
    return json.loads(browser.evaluate(FIGURES)), json.loads(browser.evaluate(FINDINGS))


def test_planted_study_with_failures_renders_every_figure_and_claims(browser, artifacts, planted):
    runs = mpi_race(FIVE) + [Planted(mpi="mpich", ranks=8, status="failed", wall=None, reason="exit code 1")]
    db = planted(runs)
    page = artifacts / "planted.html"
    out = _report(db, page, "--watts-per-node", "400")  # B9 is drawn only from a given power
    assert "31 runs" in out.output
    figs, findings = _open(browser, page, artifacts, "planted")
    a = analyse_study(scalewise.open_study(db), watts_per_node=400.0)
    assert [f["id"] for f in figs] == [s.id for s in figures_for(a)]
    for f in figs:
        assert f["img"] and f["complete"] and f["natural"] > 300, f
    assert json.loads(browser.evaluate(SECTIONS)) == ["cards", "opening", "setup", "performance", "scalability",
                                                      "profile", "comparisons", "summary"]
    claim = [f for f in findings if f["kind"] == "cell"]
    assert len(claim) == 1 and "openmpi is 20.0% faster than mpich at 4 ranks" in claim[0]["text"]
    assert set(claim[0]["runs"].split(",")) == set(a.study.runs.loc[a.study.runs["ranks"] == 4, "run_id"])
    failed = [f for f in findings if f["kind"] == "failed"]
    assert len(failed) == 1 and failed[0]["runs"] == runs[-1].run_id()
    assert browser.evaluate(f"!!document.querySelector('#failed-table tr[data-run=\"{runs[-1].run_id()}\"]')")
    gains = browser.evaluate("""JSON.stringify(Array.from(document.querySelectorAll(
        '#comparison-table tr[data-claimed="true"] [data-metric="gain_pct"]')).map(td => td.dataset.value))""")
    assert [float(v) for v in json.loads(gains)] == pytest.approx([20.0])


def test_single_scale_study_without_profiles_says_why_figures_are_missing(browser, artifacts, planted):
    db = planted([Planted(ranks=2, repetition=k, wall=10.0 + k) for k in range(2)], "flat")
    page = artifacts / "flat.html"
    _report(db, page)
    figs, findings = _open(browser, page, artifacts, "flat")
    by_id = {f["id"]: f for f in figs}
    assert by_id["perf-app"]["img"]
    assert "single rank count" in by_id["b8-efficiency"]["missing"]
    assert "profile" in by_id["p1-mpi-share"]["missing"]
    assert findings == []


def test_tables_export_as_csv_and_parquet(planted, tmp_path):
    db = planted(mpi_race())
    _report(db, tmp_path / "r.html", "--csv", str(tmp_path / "csv"), "--parquet", str(tmp_path / "pq"),
            "--base", "ranks=2", "--watts-per-node", "500", "--price-per-kwh", "0.3")
    names = sorted(p.stem for p in (tmp_path / "csv").glob("*.csv"))
    assert names == sorted(p.stem for p in (tmp_path / "pq").glob("*.parquet"))
    assert {"runs", "performance", "scalability", "comparisons", "energy", "findings"} <= set(names)
    perf = pd.read_parquet(tmp_path / "pq" / "performance.parquet")
    assert len(perf) == 6 and pd.read_csv(tmp_path / "csv" / "performance.csv")["median"].tolist() == pytest.approx(
        perf["median"].tolist())
    scal = pd.read_csv(tmp_path / "csv" / "scalability.csv")
    assert set(scal["base_scale"]) == {2}
    energy = pd.read_parquet(tmp_path / "pq" / "energy.parquet")
    assert set(energy["watts_per_node"]) == {500.0} and set(energy["price_per_kwh"]) == {0.3}
    assert len(pd.read_parquet(tmp_path / "pq" / "runs.parquet")) == 18


def test_cli_errors_are_one_line(tmp_path):
    bad = tmp_path / "bad.sqlite"
    bad.write_text("not sqlite " * 100)
    result = CliRunner().invoke(cli, ["study", "report", str(bad), "-o", str(tmp_path / "x.html")])
    assert result.exit_code == 2
    assert result.output.strip().count("\n") == 0 and "not a scalewise results database" in result.output
    result = CliRunner().invoke(cli, ["study", "report", str(tmp_path), "--base", "threads=2"])
    assert result.exit_code == 2 and "no results yet" in result.output


def test_study_file_declares_the_scaling_base_and_the_command_line_wins(planted, tmp_path):
    db = planted(mpi_race())
    study_file = tmp_path / "declared.yaml"
    study_file.write_text(f"name: declared\napplications:\n  app:\n    command: [app]\noutput: {db.parent}\n"
                          "report:\n  base: {ranks: 2}\n")
    # The planted runs are not this file's plan (their IDs are planted): --include-stale keeps them.
    _report(study_file, tmp_path / "a.html", "--csv", str(tmp_path / "a"), "--include-stale")
    assert set(pd.read_csv(tmp_path / "a" / "scalability.csv")["base_scale"]) == {2}
    _report(study_file, tmp_path / "b.html", "--csv", str(tmp_path / "b"), "--base", "ranks=1", "--include-stale")
    assert set(pd.read_csv(tmp_path / "b" / "scalability.csv")["base_scale"]) == {1}


def test_the_page_opens_with_caveats_and_marks_oversubscribed_rows(browser, artifacts, planted):
    db = planted(mpi_race(cores=2))
    page = artifacts / "oversubscribed.html"
    _report(db, page)
    _open(browser, page, artifacts, "oversubscribed")
    caveats = json.loads(browser.evaluate(
        "JSON.stringify(Array.from(document.querySelectorAll('#opening [data-caveat]')).map(p => p.textContent))"))
    assert len(caveats) == 2 and "6 of 18 successful runs were oversubscribed" in caveats[0]
    assert "false discovery rate of 5% over all of them at once (Benjamini-Hochberg)" in caveats[1]
    assert browser.evaluate("document.querySelectorAll('#key-findings li').length") <= 10
    marked = browser.evaluate(
        "document.querySelectorAll('#performance-table [data-oversubscribed=\"true\"]').length")
    assert marked == 2, "both 4-rank configurations are marked"
    rule = browser.evaluate("document.querySelector('#comparison-table tr[data-rule=\"oversubscribed\"]') !== null")
    assert rule and browser.evaluate("document.querySelector('#energy-assumptions').dataset.given") == "false"
