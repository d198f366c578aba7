"""The command tree imports a command's module only when it runs: `scalewise --help`
and the launch side of `scalewise run` stay free of the analysis stack."""

from __future__ import annotations

import subprocess
import sys

import click
import pytest

from scalewise.cli.main import COMMANDS, cli

HEAVY = ("pandas", "numpy", "matplotlib", "scalewise.analysis", "scalewise.report")


def _imported_after(code: str) -> list[str]:
    probe = (f"import sys\n{code}\n"
             f"print('imported:', *(m for m in {HEAVY!r} if any(k == m or k.startswith(m + '.') for k in sys.modules)))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return done.stdout.splitlines()[-1].split()[1:]


def test_help_imports_no_command_module():
    code = ("from scalewise.cli.main import cli\n"
            "try:\n    cli(['--help'])\nexcept SystemExit:\n    pass\n"
            "assert not [m for m in sys.modules if m.startswith('scalewise.cli.') and m not in "
            "('scalewise.cli.main', 'scalewise.cli.group')], sorted(sys.modules)")
    assert _imported_after(code) == []


def test_the_run_command_imports_no_analysis_until_it_runs():
    assert _imported_after("import scalewise.cli.run") == []


def test_the_log_container_check_of_run_quiet_imports_no_analysis():
    """What `scalewise run --quiet` reads the log with (tests/runtime/test_run_cli.py runs it whole)."""
    assert _imported_after("from scalewise.logfile.container import log_counts") == []


@pytest.mark.parametrize("width", [60, 80, 120, 200])
def test_help_lists_each_command_with_its_own_help(width):
    """The stored first paragraph shortens exactly as the command's own help would."""
    for name, (_, summary) in COMMANDS.items():
        command = cli.commands[name]
        limit = width - 6 - max(len(n) for n in COMMANDS)
        assert click.Command(name, help=summary).get_short_help_str(limit) == command.get_short_help_str(limit), name


def test_every_command_resolves_and_study_keeps_its_report():
    assert sorted(cli.commands) == sorted(COMMANDS)
    assert "report" in cli.commands["study"].commands
