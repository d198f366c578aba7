"""`scalewise pop TRACE_OR_RUN_DIR`: a traced run's POP efficiencies, communication split by the ideal network."""

from __future__ import annotations

from pathlib import Path

import click

from scalewise.cli.output import echo_json, json_option
from scalewise.cli.mpi_names import release_option


@click.command()
@click.argument("source", metavar="TRACE_OR_RUN_DIR", type=click.Path(path_type=Path))
@click.option("--mpi", "library", default=None, callback=release_option,
              help="Library whose collective algorithms the replay uses: openmpi, mpich (Debian's) or an identity such as "
                   "openmpi-5.0.11, mpich-5.0.2, intelmpi-2021.19 [default: the run's, from its log].")
@json_option("the POP efficiencies")
def pop(source: Path, library: str | None, as_json: bool) -> None:
    """POP efficiencies of a run recorded with scalewise run --trace: load balance, communication efficiency and
    its split into serialisation and transfer (the run replayed on the ideal network).  See docs/pop.md.

    \b
    Example: scalewise pop runs/app-20260101-120000.swtrace
    """
    from scalewise.cli.output import console

    from scalewise.report.run.terminal import pop_table
    from scalewise.logfile.reader import load_log
    from scalewise.whatif.collectives import assumption
    from scalewise.whatif.traced_pop import library_of, traced_pop_of

    trace, log, metrics = traced_pop_of(source, library)
    if as_json:
        echo_json({"trace": str(trace), "log": str(log)} | metrics.to_json_dict())
    else:
        console().print(pop_table(metrics))
        note = assumption(library or library_of(load_log(log)))
        if note:
            click.echo(f"note: {note}")
