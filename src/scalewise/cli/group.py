"""The click group every scalewise command group uses: one error style, documented exit statuses."""

from __future__ import annotations

import importlib
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

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """As click's, but a lazy command is listed from its stored help, not imported."""
        if not isinstance(self.commands, LazyCommands):
            return super().format_commands(ctx, formatter)
        names = self.list_commands(ctx)
        if not names:
            return None
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = []
        for name in names:
            summary = self.commands.summary(name)
            if summary is None:
                command = self.commands.get(name)
                if command is None or command.hidden:
                    continue
                rows.append((name, command.get_short_help_str(limit)))
            else:
                # shortened by click's own rule, as the imported command's help would be
                rows.append((name, click.Command(name, help=summary).get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)


class LazyCommands(dict):
    """A group's commands, each imported when first looked up: ``name -> (module:attribute, help)``.

    A dict to click (``get``, ``in``, iteration, ``items``); only ``items``,
    ``values`` and indexing of every name import them all.  A group whose
    commands are lazy lists them in its help with the stored first paragraph
    (:meth:`OneLineErrors.format_commands`), so ``--help`` imports none."""

    def __init__(self, specs: dict[str, tuple[str, str]]):
        super().__init__()
        self.specs = dict(specs)

    def _load(self, name: str) -> None:
        if name in self.specs and not dict.__contains__(self, name):
            module, attribute = self.specs[name][0].split(":")
            value = getattr(importlib.import_module(module), attribute)
            dict.__setitem__(self, name, value() if not isinstance(value, click.Command) else value)

    def __getitem__(self, name):
        self._load(name)
        return dict.__getitem__(self, name)

    def get(self, name, default=None):
        self._load(name)
        return dict.get(self, name, default)

    def __contains__(self, name) -> bool:
        return name in self.specs or dict.__contains__(self, name)

    def __iter__(self):
        return iter(sorted(set(self.specs) | set(dict.keys(self))))

    def __len__(self) -> int:
        return len(set(self.specs) | set(dict.keys(self)))

    def keys(self):
        return list(self)

    def items(self):
        return [(name, self[name]) for name in self]

    def values(self):
        return [self[name] for name in self]

    def summary(self, name: str) -> str | None:
        """The stored first paragraph of a command's help, or None for one added directly."""
        return self.specs[name][1] if name in self.specs else None
