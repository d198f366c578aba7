"""``scalewise study report --json``: the findings and tables on stdout, the page only with ``-o``."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from click.testing import CliRunner
from study_synth import mpi_race

import scalewise
from scalewise.analysis.study.findings import analyse_study
from scalewise.cli.main import cli


def test_json_goes_to_stdout_and_the_page_to_o(planted, tmp_path, monkeypatch):
    db = planted(mpi_race())
    monkeypatch.chdir(tmp_path)
    alone = CliRunner().invoke(cli, ["study", "report", str(db), "--json", "--csv", "csv"])
    assert alone.exit_code == 0, alone.output
    doc = json.loads(alone.stdout)  # stdout is one JSON document; what was written is said on stderr
    assert "tables: " in alone.stderr and "18 runs" in alone.stderr
    assert not (tmp_path / "study.html").exists(), "--json alone writes no page"
    a = analyse_study(scalewise.open_study(db))
    assert doc["name"] == "planted" and doc["metric"] == a.metric and doc["swept"] == a.swept
    assert [(f["kind"], f["text"], f["runs"]) for f in doc["findings"]] == \
        [(f.kind, f.text, list(f.runs)) for f in a.findings]
    # The tables are those --csv writes, row for row.
    perf = pd.read_csv(tmp_path / "csv" / "performance.csv")
    assert [r["median"] for r in doc["tables"]["performance"]] == pytest.approx(perf["median"].tolist())
    assert len(doc["tables"]["runs"]) == 18
    both = CliRunner().invoke(cli, ["study", "report", str(db), "--json", "-o", "page.html"])
    assert both.exit_code == 0 and json.loads(both.stdout) == doc
    assert (tmp_path / "page.html").read_text().startswith("<!DOCTYPE html>")
    text = CliRunner().invoke(cli, ["study", "report", str(db)])
    assert text.exit_code == 0 and (tmp_path / "study.html").exists() and "report: study.html" in text.stdout
