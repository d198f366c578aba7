"""The one JSON convention of every command: ``--json`` prints one JSON document to stdout.

Files are named by ``-o``, never by ``--json``; while JSON goes to stdout,
every other line a command prints (``wrote ...``, notes) goes to stderr so
that ``scalewise ... --json | jq`` always reads a single document.
"""

from __future__ import annotations

import json
from typing import Any

import click

from scalewise.jsonsafe import json_safe


def json_option(what: str):
    """The ``--json`` flag, spelled and explained the same way on every command."""
    return click.option("--json", "as_json", is_flag=True, help=f"Print {what} as one JSON document to stdout.")


def echo_json(obj: Any) -> None:
    click.echo(json.dumps(json_safe(obj), indent=2, allow_nan=False))


def say(text: str, as_json: bool) -> None:
    """A line for the user: on stdout, or on stderr when stdout carries JSON."""
    click.echo(text, err=as_json)
