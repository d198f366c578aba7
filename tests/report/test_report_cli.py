"""`scalewise summary` and `scalewise report` on real log files, in-process."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from report_profiles import halo_profile, zero_call_profile

from scalewise.cli.main import cli
from scalewise.logfile.writer import write_profile
from scalewise.report.run.registry import FIGURES


@pytest.fixture(scope="module")
def halo_log(tmp_path_factory):
    return write_profile(halo_profile(4, 2), tmp_path_factory.mktemp("logs") / "halo.swlog")


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def test_summary_prints_the_banner(halo_log):
    r = invoke("summary", halo_log)
    assert r.exit_code == 0, r.output
    assert "scalewise profile: halo2d" in r.output
    assert "MPI_Waitall" in r.output and "20.4%" in r.output and "Findings" in r.output


def test_summary_json_follows_the_documented_schema(halo_log):
    r = invoke("summary", halo_log, "--json")
    assert r.exit_code == 0
    doc = json.loads(r.output)
    assert doc["nranks"] == 8 and len(doc["ranks"]) == 8
    rank0 = doc["ranks"][0]
    assert {"rank", "wall", "mpi_time", "functions"} <= set(rank0) and rank0["rank"] == 0
    assert rank0["functions"]["MPI_Waitall"]["calls"] == 100
    assert {"calls", "time", "bytes"} <= set(rank0["functions"]["MPI_Isend"])
    assert rank0["functions"]["MPI_Isend"]["bytes"] == 400 * 64 * 1024
    assert all(set(p) == {"src", "dst", "messages", "bytes"} for p in doc["p2p"])
    assert {(p["src"], p["dst"]) for p in doc["p2p"] if p["src"] == 0} == {(0, 1), (0, 3), (0, 4)}


def test_report_writes_page_figures_and_analysis(halo_log, tmp_path):
    page, figs = tmp_path / "out" / "page.html", tmp_path / "figs"
    r = invoke("report", halo_log, "-o", page, "--figures", figs)
    assert r.exit_code == 0, r.output
    assert page.read_text().startswith("<!DOCTYPE html>")
    # Every figure: the halo log has point-to-point traffic and time bins.
    assert len(list(figs.glob("*.png"))) == len(list(figs.glob("*.svg"))) == len(FIGURES)


def test_report_json_goes_to_stdout_and_files_to_o(halo_log, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    # --json alone: the analysis on stdout, nothing else anywhere, no page written.
    printed = CliRunner().invoke(cli, ["report", str(halo_log), "--json"])
    assert printed.exit_code == 0 and printed.stderr == ""
    doc = json.loads(printed.stdout)
    assert doc["run"] == "halo.swlog" and doc["total_calls"] == 8 * 1000
    assert doc["findings"][0]["kind"] == "bound"
    assert not list(tmp_path.iterdir())
    # With -o the page is written as well; stdout still holds only the JSON document.
    both = CliRunner().invoke(cli, ["report", str(halo_log), "--json", "-o", "page.html"])
    assert both.exit_code == 0 and json.loads(both.stdout) == doc
    assert both.stderr.strip() == "page.html"
    assert (tmp_path / "page.html").read_text().startswith("<!DOCTYPE html>")


def test_report_of_zero_call_log_notes_it(tmp_path):
    log = write_profile(zero_call_profile(), tmp_path / "zero.swlog")
    r = CliRunner().invoke(cli, ["report", str(log), "-o", str(tmp_path / "zero.html")])
    assert r.exit_code == 0
    assert "No MPI calls were recorded" in (tmp_path / "zero.html").read_text()


@pytest.mark.parametrize("make_args, message", [
    (lambda d: ["summary", d / "missing.swlog"], "no such file"),
    (lambda d: ["summary", d], "is a directory"),
    (lambda d: ["report", d / "junk.swlog"], "not a scalewise log"),
    (lambda d: ["report", d / "halo.swlog", "-o", d], "is a directory"),
])
def test_user_errors_are_one_line_and_exit_2(tmp_path, make_args, message):
    (tmp_path / "junk.swlog").write_bytes(b"hello, not a log at all" * 10)
    write_profile(halo_profile(2, 1), tmp_path / "halo.swlog")
    r = CliRunner().invoke(cli, [str(a) for a in make_args(tmp_path)])
    assert r.exit_code == 2
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("scalewise: error:") and message in lines[0]


def test_summary_shows_application_text_literally_and_bounded(tmp_path):
    # Escape sequences and rich markup in the command reach the terminal as visible text (the reader
    # refuses function names other than identifiers, so those cannot carry any).
    profile = halo_profile(2, 1, command=["/opt/solver[v2]", "ok[red]", "\x1b[2J\x1b]0;title\x07", "\u202etxt"])
    r = invoke("summary", write_profile(profile, tmp_path / "odd.swlog"))
    assert r.exit_code == 0, r.output
    assert "scalewise profile: solver[v2]" in r.output and "ok[red]" in r.output
    assert "\\x1b[2J\\x1b]0;title\\x07" in r.output and "\\u202etxt" in r.output
    assert not any(ord(ch) < 0x20 and ch != "\n" or 0x7F <= ord(ch) < 0xA0 or ch == "\u202e" for ch in r.output)


def test_summary_of_a_60_kb_command_prints_a_bounded_line(tmp_path):
    profile = halo_profile(2, 1, command=["x" * 60_000, "--flag"])  # the reader's limit is 65,536
    r = invoke("summary", write_profile(profile, tmp_path / "long.swlog"))
    assert r.exit_code == 0, r.output
    assert "(58,007morecharacters)" in "".join(r.output.split()) and len(r.output) < 20_000
