"""One JSON convention over the whole command tree: ``--json`` is a flag that prints to stdout."""

from __future__ import annotations

import click

from scalewise.cli.main import cli


def _commands(group: click.Group, prefix: str = ""):
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            yield from _commands(command, f"{prefix}{name} ")
        else:
            yield f"{prefix}{name}", command


def test_every_json_option_is_the_same_stdout_flag():
    with_json = {}
    for name, command in _commands(cli):
        for p in command.params:
            if "--json" in getattr(p, "opts", []):
                with_json[name] = p
    assert sorted(with_json) == ["memory", "pop", "report", "run", "study plan", "study report", "study run",
                                 "study status", "summary", "tune", "whatif"]
    for name, p in with_json.items():
        assert p.is_flag and p.name == "as_json", name  # never a file name: files are -o
        assert p.help.startswith("Print ") and "as one JSON document to stdout" in p.help, (name, p.help)
