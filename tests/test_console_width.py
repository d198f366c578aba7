"""Tables keep every column whole in a pipe or a file (rich alone squeezes them to 80 columns)."""

from __future__ import annotations

import io
import subprocess
import sys

from rich.table import Table

from scalewise.cli.output import PIPE_WIDTH, console


def _wide_table() -> Table:
    t = Table(title="wide")
    for i in range(14):
        t.add_column(f"jobs/day {i}")
    t.add_row(*(f"{1234.5678 * i:.4f}" for i in range(14)))
    return t


def test_a_pipe_keeps_every_column(monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    buf = io.StringIO()
    c = console(file=buf)
    assert not c.is_terminal and c.width == PIPE_WIDTH
    c.print(_wide_table())
    text = buf.getvalue()
    assert "\u2026" not in text and all(f"jobs/day {i}" in text for i in range(14))
    assert max(len(line) for line in text.splitlines()) > 80, "the table is wider than a terminal would allow"


def test_columns_set_by_the_user_is_respected(monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    assert console(file=io.StringIO()).width == 100


def test_study_plan_into_a_pipe_keeps_long_values(tmp_path):
    """A custom axis value of 240 characters reaches the plan printed into a pipe whole."""
    value = "v" * 240
    study = tmp_path / "s.yaml"
    study.write_text(f"name: wide\napplications:\n  app:\n    command: [./app, '{{size}}']\naxes:\n  custom:\n"
                     f"    size: ['{value}']\n")
    out = subprocess.run([sys.executable, "-m", "scalewise.cli.main", "study", "plan", str(study)],
                         capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"}, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert value in out.stdout and "\u2026" not in out.stdout
