"""`scalewise pop TRACE_OR_RUN_DIR`: a traced run's POP efficiencies, communication split by the ideal network."""

from __future__ import annotations

from pathlib import Path

import click

from scalewise.cli.output import echo_json, json_option
from scalewise.cli.show import load_log
from scalewise.errors import ScalewiseError
from scalewise.launch.preload import FLAVOURS


def find_trace(source: Path) -> Path:
    """The trace named, the trace beside a job log named, or the one trace in a run directory
    (``scalewise run --trace -o DIR``)."""
    if not source.exists():
        raise ScalewiseError(f"{source}: no such file or directory")
    if source.is_file() and source.suffix == ".swlog":
        beside = source.with_suffix(".swtrace")
        if not beside.is_file():
            raise ScalewiseError(f"{source}: a job log with no trace {beside.name} beside it "
                                 "(record with scalewise run --trace)")
        return beside
    if source.is_file():
        return source
    traces = sorted(source.glob("*.swtrace"))
    if len(traces) != 1:
        found = "no trace" if not traces else f"{len(traces)} traces ({', '.join(t.name for t in traces)})"
        raise ScalewiseError(f"{source}: {found}; name one .swtrace (record with scalewise run --trace)")
    return traces[0]


@click.command()
@click.argument("source", metavar="TRACE_OR_RUN_DIR", type=click.Path(path_type=Path))
@click.option("--mpi", "library", type=click.Choice(FLAVOURS), default=None,
              help="Library whose collective algorithms the replay uses [default: the run's, from its log].")
@json_option("the POP efficiencies")
def pop(source: Path, library: str | None, as_json: bool) -> None:
    """POP efficiencies of a run recorded with scalewise run --trace: load balance, communication efficiency and
    its split into serialisation and transfer (the run replayed on the ideal network).  See docs/pop.md.

    \b
    Example: scalewise pop runs/app-20260101-120000.swtrace
    """
    from scalewise.cli.output import console

    from scalewise.report.run.terminal import pop_table
    from scalewise.whatif import read_trace
    from scalewise.whatif.pop import traced_pop

    trace = find_trace(source)
    log = trace.with_suffix(".swlog")
    if not log.is_file():
        raise ScalewiseError(f"{trace}: no job log {log.name} beside it (scalewise run --trace writes both)")
    metrics = traced_pop(load_log(log), read_trace(trace), library)
    if as_json:
        echo_json({"trace": str(trace), "log": str(log)} | metrics.to_json_dict())
    else:
        console().print(pop_table(metrics))
