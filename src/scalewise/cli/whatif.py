"""`scalewise whatif TRACE --network ...`: predict a recorded run on other interconnects."""

from __future__ import annotations

from pathlib import Path

import click

from scalewise.cli.output import echo_json, json_option

from scalewise.errors import ScalewiseError
from scalewise.launch.preload import FLAVOURS


def measured_log(trace: Path, given: Path | None) -> Path | None:
    """The job log to compare with: the one named, else the .swlog written beside the trace."""
    if given is not None:
        return given
    beside = trace.with_suffix(".swlog")
    return beside if beside.is_file() else None


@click.command()
@click.argument("trace", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--network", "networks", default="ideal", show_default=True,
              help="Networks to replay on, comma-separated: presets (gige, 10gige, qdr-ib, fdr-ib, edr-ib, "
                   "hdr-ib, ideal) or parameter files (.yaml, e.g. from scalewise calibrate).")
@click.option("--mpi", "library", type=click.Choice(FLAVOURS), default="openmpi", show_default=True,
              help="Library whose collective algorithms the replay uses.")
@click.option("--measured", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="Job log to show beside the predictions (default: the .swlog beside the trace, if any).")
@click.option("-o", "--output", type=click.Path(dir_okay=True, path_type=Path), help="Write the HTML page.")
@json_option("the predictions and their errors against the measured run")
def whatif(trace: Path, networks: str, library: str, measured: Path | None, output: Path | None,
           as_json: bool) -> None:
    """Replay TRACE (.swtrace, from scalewise run --trace) on each network and compare with the measured run.

    \b
    Example: scalewise whatif job.swtrace --network gige,edr-ib,ideal -o whatif.html
    """
    from scalewise.cli.output import console

    from scalewise.logfile.reader import read_profile
    from scalewise.report.whatif.html import terminal_table, write_whatif_page
    from scalewise.whatif import read_trace, replay
    from scalewise.whatif.compare import compare, errors

    names = [n.strip() for n in networks.split(",") if n.strip()]
    if not names:
        raise ScalewiseError("--network: no network named")
    tr = read_trace(trace)
    log = measured_log(trace, measured)
    w = compare(replay(tr, names, library=library), read_profile(log) if log else None, tr.capped)
    if as_json:
        out = {"library": library, "trace": str(trace), "measured": str(log) if log else None, "capped": tr.capped,
               "summary": w.summary.reset_index().to_dict("records"),
               "errors": errors(w).reset_index(names="source").to_dict("records")}
        echo_json(out)
    else:
        console().print(terminal_table(w))
        if tr.capped:
            click.echo("note: the trace is capped (a rank reached SCALEWISE_TRACE_MAX_EVENTS); "
                       "the prediction covers the recorded part only")
    if output:
        click.echo(f"page: {write_whatif_page(w, str(trace), output)}", err=as_json)
