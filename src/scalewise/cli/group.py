"""The click group every scalewise command group uses."""

from __future__ import annotations

import sys

import click

from scalewise.errors import ScalewiseError


class OneLineErrors(click.Group):
    """Prints user errors (ScalewiseError) as one line on stderr and exits 2,
    also when a sub-group such as `study` is invoked on its own."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except ScalewiseError as exc:
            click.echo(f"scalewise: error: {exc}", err=True)
            sys.exit(2)
