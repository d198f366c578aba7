"""Progress of a campaign on the terminal: a bar with ETA and one status line per run."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from rich.console import Console
from rich.text import Text
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from scalewise.campaign.expand import RunSpec
from scalewise.campaign.store import RunResult
from scalewise.formatting import plural, terminal_text

_STYLE = {"ok": "green", "failed": "red", "timeout": "yellow"}


def status_line(run: RunSpec, result: RunResult) -> str:
    """``ok      3f2a1b0c9d8e sem mpi=openmpi ranks=2 rep=0  wall 0.41 s  fom 12.3 GF/s`` (plain text)."""
    text = f"{result.status:<7} {run.run_id} {run.label()}"
    if result.wall is not None:
        text += f"  wall {result.wall:.3g} s"
    if result.fom is not None and result.fom_name != "wall":
        text += f"  {result.fom_name} {result.fom:.4g}{' ' + result.fom_unit if result.fom_unit else ''}"
    if result.reason:
        text += f"  ({result.reason})"
    return text


class Reporter:
    """Shows progress; ``quiet`` prints nothing (library use, tests)."""

    def __init__(self, console: Console | None = None, quiet: bool = False):
        self.console = console or Console(stderr=True)
        self.quiet = quiet
        self.progress: Progress | None = None
        self.task = None

    @contextmanager
    def campaign(self, total: int, skipped: int) -> Iterator[None]:
        if self.quiet:
            yield
            return
        if skipped:
            self.console.print(f"{plural(skipped, 'run')} already done, {total} to run")
        self.progress = Progress(TextColumn("[bold]study"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                                 TextColumn("eta"), TimeRemainingColumn(), console=self.console, transient=False)
        with self.progress:
            self.task = self.progress.add_task("runs", total=total)
            yield
        self.progress = None

    def note(self, text: str) -> None:
        """A line about the run in progress (e.g. why Slurm has not started it)."""
        if not self.quiet:
            console = self.progress.console if self.progress is not None else self.console
            console.print(Text(f"  {terminal_text(text)}", style="yellow"))

    def finished(self, run: RunSpec, result: RunResult) -> None:
        if self.quiet or self.progress is None:
            return
        style = _STYLE.get(result.status, "white")
        self.progress.console.print(Text(terminal_text(status_line(run, result)), style=style))
        self.progress.advance(self.task)
