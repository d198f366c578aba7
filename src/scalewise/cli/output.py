"""The one JSON convention of every command: ``--json`` prints one JSON document to stdout.

Files are named by ``-o``, never by ``--json``; while JSON goes to stdout,
every other line a command prints (``wrote ...``, notes) goes to stderr so
that ``scalewise ... --json | jq`` always reads a single document.

Tables go through :func:`console`: on a terminal they fit its width; into a
pipe or a file they keep every column whole (rich would otherwise squeeze
them to 80 columns and cut "jobs/day" to "jobs/d…").
"""

from __future__ import annotations

import json
import os
from typing import IO, Any

import click

from scalewise.jsonsafe import json_safe


# Width of a table written to a pipe or a file: wide enough for any table scalewise prints, so none is cut.
PIPE_WIDTH = 1000


def console(stderr: bool = False, file: IO[str] | None = None):
    """A rich console: the terminal's width on a terminal, else ``COLUMNS`` when set, else :data:`PIPE_WIDTH`."""
    from rich.console import Console  # here, not at start-up: most commands print no table

    c = Console(stderr=stderr, file=file)
    if c.is_terminal or os.environ.get("COLUMNS"):
        return c
    return Console(stderr=stderr, file=file, width=PIPE_WIDTH)


def json_option(what: str):
    """The ``--json`` flag, spelled and explained the same way on every command."""
    return click.option("--json", "as_json", is_flag=True, help=f"Print {what} as one JSON document to stdout.")


def echo_json(obj: Any) -> None:
    click.echo(json.dumps(json_safe(obj), indent=2, allow_nan=False))


def say(text: str, as_json: bool) -> None:
    """A line for the user: on stdout, or on stderr when stdout carries JSON."""
    click.echo(text, err=as_json)
