"""``scalewise study plan|run|status FILE``: thin commands over scalewise.campaign."""

from __future__ import annotations

import json
import sys

import click
from rich.console import Console
from rich.table import Table

from scalewise.campaign.expand import expand
from scalewise.campaign.progress import Reporter
from scalewise.campaign.runner import open_store, run_study, store_path
from scalewise.campaign.study import load_study
from scalewise.cli.group import OneLineErrors

_COLUMNS = ["run_id", "repetition", "app", "variant", "mpi", "transport", "params", "nodes", "ranks", "threads"]


@click.group(cls=OneLineErrors)
def study() -> None:
    """Benchmark campaigns: sweep an application over MPI settings, record every run."""


@study.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="One JSON object per run instead of a table.")
def plan(file: str, as_json: bool) -> None:
    """Show the expanded run list with stable run IDs."""
    loaded = load_study(file)
    runs = expand(loaded)
    custom = list(loaded.model.axes.custom())
    if as_json:
        for run in runs:
            row = {c: getattr(run, c) for c in _COLUMNS} | dict(run.custom)
            row["settings"] = [list(a) for a in run.applied]
            click.echo(json.dumps(row))
        return
    table = Table(title=f"{loaded.model.name}: {len(runs)} runs", box=None)
    for column in _COLUMNS + custom:
        table.add_column(column)
    for run in runs:
        table.add_row(*(str(getattr(run, c)) for c in _COLUMNS), *(str(v) for _, v in run.custom))
    Console(width=200).print(table)


@study.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--launcher", type=click.Choice(["local", "slurm"]), default="local", show_default=True,
              help="Run on this machine, or submit each run to Slurm.")
@click.option("--retry-failed", is_flag=True, help="Run failed and timed-out runs again.")
@click.option("--quiet", is_flag=True, help="No progress bar or per-run lines.")
def run(file: str, launcher: str, retry_failed: bool, quiet: bool) -> None:
    """Run the runs not done yet (re-running resumes). Exit 1 if any run failed."""
    loaded = load_study(file)
    summary = run_study(loaded, launcher, retry_failed, Reporter(quiet=quiet))
    counts = ", ".join(f"{n} {s}" for s, n in sorted(summary.counts.items())) or "nothing to run"
    click.echo(f"{loaded.model.name}: {summary.planned} planned, {summary.skipped} already done; ran {counts}")
    click.echo(f"results: {store_path(loaded)}")
    if any(s in ("failed", "timeout") for s in summary.counts):
        sys.exit(1)


@study.command()
@click.argument("file", type=click.Path(dir_okay=False))
def status(file: str) -> None:
    """Count runs by status and list the failed ones with their reasons."""
    loaded = load_study(file)
    planned = {r.run_id for r in expand(loaded)}
    if not store_path(loaded).exists():
        click.echo(f"{loaded.model.name}: {len(planned)} planned, none run yet")
        return
    store = open_store(loaded)
    try:
        rows = [r for r in store.runs() if r["run_id"] in planned]
    finally:
        store.close()
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["status"]] = counts.get(row["status"], 0) + 1
    missing = len(planned) - len(rows)
    if missing:
        counts["pending"] = counts.get("pending", 0) + missing
    click.echo(f"{loaded.model.name}: {len(planned)} planned: "
               + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())))
    for row in rows:
        if row["status"] in ("failed", "timeout"):
            click.echo(f"  {row['status']:<7} {row['run_id']} {row['app']} mpi={row['mpi']} ranks={row['ranks']} "
                       f"rep={row['repetition']}: {row['reason']}")
