"""The click group every scalewise command group uses: one error style, documented exit statuses."""

from __future__ import annotations

import sys

import click

from scalewise.errors import EXIT_USER, Interrupted, ScalewiseError


def fail(message: str, code: int) -> None:
    click.echo(f"scalewise: error: {message}", err=True)
    sys.exit(code)


class OneLineErrors(click.Group):
    """Every error is one line on stderr, ``scalewise: error: ...``, with the exit
    status of its kind (scalewise.errors): user errors, click's own usage errors
    included, exit 2; also when a sub-group such as ``study`` is invoked on its own."""

    def main(self, *args, **kwargs):
        kwargs["standalone_mode"] = False
        try:
            code = super().main(*args, **kwargs)
        except click.exceptions.Abort:  # Ctrl-C while click itself was reading input
            fail("interrupted", 130)
        except click.ClickException as exc:
            fail(exc.format_message().rstrip("."), exc.exit_code if exc.exit_code else EXIT_USER)
        except (ScalewiseError, Interrupted) as exc:
            fail(str(exc), exc.exit_code)
        sys.exit(code if isinstance(code, int) else 0)
