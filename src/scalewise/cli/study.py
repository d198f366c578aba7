"""``scalewise study plan|run|status FILE``: thin commands over scalewise.campaign.

``--json`` prints one JSON document to stdout, as in every scalewise command.
"""

from __future__ import annotations

import sys

import click
from rich.table import Table
from rich.text import Text

from scalewise.campaign.expand import expand, idle_axes
from scalewise.campaign.progress import Reporter
from scalewise.campaign.runner import run_study
from scalewise.campaign.status import study_status
from scalewise.campaign.store import FAILED, store_path
from scalewise.campaign.study import load_study
from scalewise.cli.group import OneLineErrors
from scalewise.cli.output import console, echo_json, json_option
from scalewise.errors import Interrupted
from scalewise.formatting import plural, terminal_text

_COLUMNS = ["run_id", "repetition", "app", "variant", "mpi", "transport", "params", "nodes", "ranks", "threads"]


@click.group(cls=OneLineErrors)
def study() -> None:
    """Benchmark campaigns: sweep an application over MPI settings, record every run."""


@study.command()
@click.argument("file", type=click.Path(dir_okay=False))
@json_option("the runs (an array) instead of a table")
def plan(file: str, as_json: bool) -> None:
    """Show the expanded run list with stable run IDs."""
    loaded = load_study(file)
    runs = expand(loaded)
    _warn_idle(loaded, runs)
    columns = _COLUMNS + (["interconnect"] if loaded.model.axes.interconnect else [])
    if as_json:
        echo_json([{c: getattr(run, c) for c in columns} | dict(run.custom)
                    | {"settings": [list(a) for a in run.applied]} for run in runs])
        return
    table = Table(title=Text(f"{loaded.model.name}: {plural(len(runs), 'run')}"), box=None)
    for column in columns + list(loaded.model.axes.custom):
        table.add_column(column)
    for run in runs:
        # Text, not str: a value such as "[red]" is the user's, not rich markup.
        table.add_row(*(Text(str(getattr(run, c))) for c in columns), *(Text(str(v)) for _, v in run.custom))
    console().print(table)


def _warn_idle(loaded, runs) -> None:
    """Axes that cannot change some runs, said before the plan or the runs (on stderr: stdout may be JSON)."""
    for text in idle_axes(loaded, runs):
        click.echo(f"warning: {terminal_text(text)}", err=True)


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))


@study.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--launcher", type=click.Choice(["local", "slurm"]), default="local", show_default=True,
              help="Run on this machine, or submit each run to Slurm.")
@click.option("--retry-failed", is_flag=True, help="Run failed and timed-out runs again.")
@click.option("--quiet", is_flag=True, help="No progress bar or per-run lines.")
@json_option("what ran (implies --quiet)")
def run(file: str, launcher: str, retry_failed: bool, quiet: bool, as_json: bool) -> None:
    """Run the runs not done yet; re-running resumes (also after Ctrl-C).

    Exit status: 0 every run ok; 1 some run failed or timed out; 2 a user
    error; 130/143 stopped by SIGINT/SIGTERM (the run in progress is marked
    interrupted and runs again on resume)."""
    loaded = load_study(file)
    _warn_idle(loaded, expand(loaded))
    try:
        summary = run_study(loaded, launcher, retry_failed, Reporter(quiet=quiet or as_json))
    except Interrupted as stop:
        raise Interrupted(stop.signum, f"{stop}; run `scalewise study run {file}` again to resume") from None
    if as_json:
        echo_json({"name": loaded.model.name, "planned": summary.planned, "skipped": summary.skipped,
                    "counts": summary.counts, "results": str(store_path(loaded))})
    else:
        ran = f"ran {_counts(summary.counts)}" if summary.counts else "nothing left to run"
        click.echo(f"{loaded.model.name}: {summary.planned} planned, {summary.skipped} already done; {ran}")
        click.echo(f"results: {store_path(loaded)}")
    if any(s in FAILED for s in summary.counts):
        sys.exit(1)


@study.command()
@click.argument("file", type=click.Path(dir_okay=False))
@json_option("the counts by status and the failed runs")
def status(file: str, as_json: bool) -> None:
    """Count runs by status and list the failed ones with their reasons."""
    loaded = load_study(file)
    now = study_status(loaded)
    if as_json:
        keys = ("run_id", "status", "app", "mpi", "ranks", "repetition", "reason")
        echo_json({"name": loaded.model.name, "planned": now.planned, "started": now.started,
                    "counts": now.counts or {"pending": now.planned}, "stale": now.stale,
                    "failed": [{k: row[k] for k in keys} for row in now.failed]})
        return
    if not now.started:
        click.echo(f"{loaded.model.name}: {now.planned} planned, none run yet")
        return
    click.echo(f"{loaded.model.name}: {now.planned} planned: {_counts(now.counts)}")
    if now.stale:
        click.echo(f"  {now.stale} stale runs kept in the store: their points are no longer in the study file "
                   "(reports leave them out; `study report --include-stale` keeps them)")
    for row in now.failed:
        click.echo(f"  {row['status']:<7} {row['run_id']} {row['app']} mpi={row['mpi']} ranks={row['ranks']} "
                   f"rep={row['repetition']}: {terminal_text(row['reason'])}")
    if now.counts.get("interrupted") or now.counts.get("pending") or now.counts.get("running"):
        click.echo(f"run `scalewise study run {file}` to run the rest")
