"""`scalewise summary LOG` and `scalewise report LOG`: look at one profiled run."""

from __future__ import annotations

from pathlib import Path

import click

from scalewise.cli.output import echo_json, json_option, say
from scalewise.errors import ScalewiseError


@click.command()
@click.argument("log", type=click.Path(path_type=Path))
@json_option("the profile (docs/json-schema.md)")
def summary(log: Path, as_json: bool) -> None:
    """Print the summary of one profiled run: time, MPI share, top functions, bytes."""
    if as_json:
        from scalewise.logfile.reader import load_log

        echo_json(load_log(log).to_json_dict())
        return
    # The lean path: the same text without numpy or pandas (report/run/lean.py).
    from scalewise.logfile.plain import load_plain
    from scalewise.report.run.lean import print_lean_summary

    print_lean_summary(load_plain(log))


@click.command()
@click.argument("log", type=click.Path(path_type=Path))
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The HTML page to write [default: report.html; with --json, only when given].")
@click.option("--figures", "figures_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Also write every figure as PNG and SVG into this directory.")
@json_option("the analysis results (docs/json-schema.md)")
def report(log: Path, output: Path | None, figures_dir: Path | None, as_json: bool) -> None:
    """Write a self-contained HTML report of one profiled run (opens from disk, no network)."""
    # Imported here, not at start-up: drawing loads matplotlib, which the other commands and --help do not need.
    from scalewise.analysis.run.findings import analyse
    from scalewise.logfile.reader import load_log
    from scalewise.report.figure import draw_figures, write_figure_files
    from scalewise.report.run.html import write_html
    from scalewise.report.run.registry import FIGURES

    profile = load_log(log)
    analysis = analyse(profile)
    if output is not None and output.is_dir():
        raise ScalewiseError(f"{output}: is a directory, expected a file name")
    page = output or (None if as_json else Path("report.html"))  # --json alone writes no page
    drawn = draw_figures(analysis, FIGURES) if page is not None or figures_dir is not None else None
    try:
        if page is not None:
            write_html(page, profile, analysis, drawn)
        if figures_dir is not None:
            written = write_figure_files(drawn, figures_dir)
            click.echo(f"wrote {len(written)} figure files to {figures_dir}", err=True)
    except OSError as exc:
        raise ScalewiseError(f"cannot write {exc.filename or 'output'}: {exc.strerror or exc}") from exc
    for note in analysis.notes:
        click.echo(f"note: {note.text}", err=True)
    if as_json:
        echo_json(analysis.to_json_dict())
    if page is not None:
        say(str(page), as_json)
