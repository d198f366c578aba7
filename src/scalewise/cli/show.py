"""`scalewise summary LOG` and `scalewise report LOG`: look at one profiled run."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import click

from scalewise.errors import ScalewiseError


def _load(path: Path):
    """Read a log, turning the usual file-system mistakes into one-line errors."""
    if not path.exists():
        raise ScalewiseError(f"{path}: no such file")
    if path.is_dir():
        raise ScalewiseError(f"{path}: is a directory, expected a scalewise log")
    import scalewise

    try:
        return scalewise.load(path)
    except OSError as exc:
        raise ScalewiseError(f"{path}: cannot read: {exc.strerror or exc}") from exc


def _plain(x: Any) -> Any:
    """JSON-safe copy: numpy scalars become Python numbers, NaN and infinities become null."""
    if isinstance(x, dict):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple, set, frozenset)):
        return [_plain(v) for v in x]
    if hasattr(x, "item") and not isinstance(x, (str, bytes)):
        x = x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, bytes):
        return x.decode("utf-8", "replace")
    return x


def _dump(obj: Any) -> str:
    return json.dumps(_plain(obj), indent=2, allow_nan=False)


@click.command()
@click.argument("log", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the profile as JSON (docs/json-schema.md).")
def summary(log: Path, as_json: bool) -> None:
    """Print the summary of one profiled run: time, MPI share, top functions, bytes."""
    profile = _load(log)
    if as_json:
        click.echo(_dump(profile.to_json_dict()))
        return
    from scalewise.report.terminal import print_summary

    print_summary(profile)


@click.command()
@click.argument("log", type=click.Path(path_type=Path))
@click.option("-o", "--output", type=click.Path(path_type=Path), default=Path("report.html"), show_default=True,
              help="The HTML page to write.")
@click.option("--figures", "figures_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Also write every figure as PNG and SVG into this directory.")
@click.option("--json", "json_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write the analysis results as JSON to this file.")
def report(log: Path, output: Path, figures_dir: Path | None, json_file: Path | None) -> None:
    """Write a self-contained HTML report of one profiled run (opens from disk, no network)."""
    from scalewise.analysis.findings import analyse
    from scalewise.report.html import write_html
    from scalewise.report.images import draw_all, write_figure_files

    profile = _load(log)
    analysis = analyse(profile)
    drawn = draw_all(analysis)
    for target in (output, json_file):
        if target is not None and target.is_dir():
            raise ScalewiseError(f"{target}: is a directory, expected a file name")
    try:
        write_html(output, profile, analysis, drawn)
        if figures_dir is not None:
            written = write_figure_files(drawn, figures_dir)
            click.echo(f"wrote {len(written)} figure files to {figures_dir}", err=True)
        if json_file is not None:
            json_file.write_text(_dump(analysis.to_json_dict()) + "\n", encoding="utf-8")
    except OSError as exc:
        raise ScalewiseError(f"cannot write {exc.filename or 'output'}: {exc.strerror or exc}") from exc
    for note in analysis.notes:
        click.echo(f"note: {note.text}", err=True)
    click.echo(str(output))
