"""``scalewise study`` in-process: exit codes, one-line errors, plan and status output."""

from __future__ import annotations

import json

from click.testing import CliRunner

from scalewise.cli.study import study


def _write(write_study, swtest_dir, extra=""):
    return write_study(f"""name: cli
applications:
  swtest:
    command: ["{swtest_dir}/{{mpi}}/swtest"{extra}]
    fom: {{source: result_line}}
axes:
  ranks: [1, 2]
  mpi: [mpich]
timeout: 30
""")


def test_plan_lists_runs_with_ids(write_study, swtest_dir, monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)  # pytest-xdist's workers set 80; a pipe keeps every column
    path = _write(write_study, swtest_dir)
    result = CliRunner().invoke(study, ["plan", "--json", str(path)])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)  # one JSON document, like every --json
    assert [r["ranks"] for r in rows] == [1, 2] and all(len(r["run_id"]) == 12 for r in rows)
    table = CliRunner().invoke(study, ["plan", str(path)])
    assert table.exit_code == 0 and "cli: 2 runs" in table.output and rows[0]["run_id"] in table.output


def test_run_then_status(write_study, swtest_dir):
    path = _write(write_study, swtest_dir)
    runner = CliRunner()
    result = runner.invoke(study, ["run", "--quiet", str(path)])
    assert result.exit_code == 0, result.output
    assert "cli: 2 planned, 0 already done; ran 2 ok" in result.output
    status = runner.invoke(study, ["status", str(path)])
    assert status.exit_code == 0 and "cli: 2 planned: 2 ok" in status.output


def test_run_with_failures_exits_1(write_study, swtest_dir):
    path = _write(write_study, swtest_dir, extra=', --exit, "4"')
    runner = CliRunner()
    result = runner.invoke(study, ["run", "--quiet", str(path)])
    assert result.exit_code == 1 and "ran 2 failed" in result.output
    status = runner.invoke(study, ["status", str(path)])
    assert "2 failed" in status.output and ": exited with code 4" in status.output
    as_json = json.loads(runner.invoke(study, ["status", "--json", str(path)]).output)
    assert as_json["counts"] == {"failed": 2} and [r["status"] for r in as_json["failed"]] == ["failed", "failed"]


def test_nothing_left_to_run_and_click_errors_in_one_style(write_study, swtest_dir):
    path = _write(write_study, swtest_dir)
    runner = CliRunner()
    runner.invoke(study, ["run", "--quiet", str(path)])
    again = runner.invoke(study, ["run", "--quiet", str(path)])
    assert again.exit_code == 0 and "cli: 2 planned, 2 already done; nothing left to run" in again.output
    bad = runner.invoke(study, ["run", "--launcher", "pbs", str(path)])
    assert bad.exit_code == 2
    assert bad.output == ("scalewise: error: Invalid value for '--launcher': 'pbs' is not one of "
                          "'local', 'slurm'\n")


def test_bad_file_is_a_one_line_error(write_study):
    path = write_study("name: bad\napplications: {}\n")
    result = CliRunner().invoke(study, ["plan", str(path)])
    assert result.exit_code == 2
    assert result.output == "scalewise: error: study.yaml:2: applications: must not be empty\n"


def test_status_report_and_open_study_agree_on_the_runs_of_the_study_as_it_is_now(write_study, swtest_dir, tmp_path):
    """A bad parameter set fails; the user drops it from the file: its runs are stale everywhere."""
    import scalewise
    from scalewise.cli.main import cli

    text = f"""name: fixed
applications:
  swtest:
    command: ["{swtest_dir}/{{mpi}}/swtest"]
    fom: {{source: result_line}}
parameter_sets:
  ring:
    cvars: {{ALLREDUCE_INTRA_ALGORITHM: ring}}
axes:
  ranks: [1]
  mpi: [mpich]
  params: [default, ring]
repetitions: 2
timeout: 30
"""
    path = write_study(text)
    runner = CliRunner()
    assert runner.invoke(study, ["run", "--quiet", str(path)]).exit_code == 1
    path.write_text(text.replace("params: [default, ring]", "params: [default]"))
    status = runner.invoke(study, ["status", str(path)])
    assert "fixed: 2 planned: 2 ok" in status.output and "2 stale runs kept in the store" in status.output
    assert len(scalewise.open_study(path).runs) == 2
    assert len(scalewise.open_study(path, include_stale=True).runs) == 4
    page = tmp_path / "r.html"
    report = runner.invoke(cli, ["study", "report", str(path), "-o", str(page)])
    assert report.exit_code == 0 and "fixed: 2 runs" in report.output, report.output
    html = page.read_text()
    assert 'data-metric="failed" data-value="0"' in html and 'id="failed-table"' not in html
    # The next campaign marks them in the store too, so the database alone agrees.
    assert runner.invoke(study, ["run", "--quiet", str(path)]).exit_code == 0
    stale = scalewise.open_study(_db_of(path), include_stale=True).runs
    assert stale["stale"].sum() == 2 and set(stale.loc[stale["stale"], "params"]) == {"ring"}
    assert len(scalewise.open_study(_db_of(path)).runs) == 2


def _db_of(path):
    from scalewise.campaign.store import store_path
    from scalewise.campaign.study import load_study
    return store_path(load_study(path))
