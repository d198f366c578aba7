"""``scalewise study report FILE_OR_DB``: the study deck, and its tables on request."""

from __future__ import annotations

import time

import click

from scalewise.analysis.study.energy import DEFAULT_PRICE_PER_KWH, DEFAULT_WATTS_PER_NODE
from scalewise.cli.output import echo_json, json_option, say
from scalewise.formatting import plural


@click.command()
@click.argument("source", metavar="FILE_OR_DB", type=click.Path(exists=True))
@click.option("-o", "--output", default=None, type=click.Path(dir_okay=False),
              help="The HTML report to write [default: study.html; with --json, only when given].")
@click.option("--csv", "csv_dir", type=click.Path(file_okay=False), help="Also write every table as DIR/<name>.csv.")
@click.option("--parquet", "parquet_dir", type=click.Path(file_okay=False),
              help="Also write every table as DIR/<name>.parquet.")
@click.option("--base", multiple=True, metavar="AXIS=N",
              help="Scaling base, e.g. ranks=2 or nodes=1 (default: the smallest scale of each series).")
@click.option("--metric", type=click.Choice(["auto", "fom", "jobs/day"]), default="auto", show_default=True,
              help="Performance: the figure of merit, jobs per day (86400 / wall), or auto (FOM when every run has one).")
@click.option("--watts-per-node", type=click.FloatRange(min=0, min_open=True), default=None,
              help=f"Power drawn by one node (or the study file's report: watts_per_node): energy becomes a finding "
                   f"and B9 is drawn (without it the energy section assumes {DEFAULT_WATTS_PER_NODE:g} W and draws "
                   f"no conclusion).")
@click.option("--price-per-kwh", type=click.FloatRange(min=0), default=None,
              help=f"Electricity price per kWh, for the energy section (or the study file's report: price_per_kwh) "
                   f"[default: {DEFAULT_PRICE_PER_KWH:g}].")
@click.option("--include-oversubscribed", is_flag=True,
              help="Draw findings from runs with more ranks than cores on a node too (each says so).")
@click.option("--include-stale", is_flag=True,
              help="Keep runs of points no longer in the study file (left out by default).")
@json_option("the findings and every table of the report")
def report(source: str, output: str | None, csv_dir: str | None, parquet_dir: str | None, base: tuple[str, ...],
           metric: str, watts_per_node: float | None, price_per_kwh: float | None, include_oversubscribed: bool,
           include_stale: bool, as_json: bool) -> None:
    """Write the study report: set-up, performance per setting, scalability, the profile across scale,
    comparisons and the summary of findings.  FILE_OR_DB is a study file, its output folder or results.sqlite."""
    # matplotlib is imported here, not at start-up, so other commands and --help stay quick.
    from scalewise.campaign.analyse import analyse_results
    from scalewise.report.study.html import write_study_html
    from scalewise.report.study.tables import write_tables

    started = time.monotonic()
    analysis = analyse_results(source, base=base, metric=metric, watts_per_node=watts_per_node,
                               price_per_kwh=price_per_kwh, include_oversubscribed=include_oversubscribed,
                               include_stale=include_stale)
    study = analysis.study
    output = output or (None if as_json else "study.html")  # --json alone writes no page
    page = write_study_html(output, analysis) if output else None
    for directory, fmt in ((csv_dir, "csv"), (parquet_dir, "parquet")):
        if directory:
            written = write_tables(analysis, directory, fmt)
            say(f"tables: {plural(len(written), fmt + ' file')} in {directory}", as_json)
    if as_json:
        echo_json(analysis.to_json_dict())
    done = f"report: {page} " if page else ""
    say(f"{study.name}: {plural(len(study.runs), 'run')}, {plural(len(analysis.findings), 'finding')}; "
        f"{done}({time.monotonic() - started:.1f} s)", as_json)

