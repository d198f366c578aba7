"""`scalewise whatif TRACE --network ...`: predict a recorded run on other interconnects."""

from __future__ import annotations

from pathlib import Path

import click

from scalewise.cli.output import echo_json, json_option
from scalewise.cli.pop import find_trace
from scalewise.errors import ScalewiseError
from scalewise.launch.preload import FLAVOURS


def measured_log(trace: Path, given: Path | None) -> Path | None:
    """The job log to compare with: the one named, else the .swlog written beside the trace."""
    if given is not None:
        return given
    beside = trace.with_suffix(".swlog")
    return beside if beside.is_file() else None


def distinct_names(nets: list, given: list[str]) -> None:
    """Two networks of one name would be one row: say which files share it."""
    seen: dict[str, str] = {}
    for net, source in zip(nets, given):
        if net.name in seen:
            raise ScalewiseError(f"--network: {seen[net.name]} and {source} are both named '{net.name}'; "
                                 "rename one (its 'name:' line, or calibrate --name)")
        seen[net.name] = source


@click.command()
@click.argument("source", metavar="TRACE_OR_RUN_DIR", type=click.Path(path_type=Path))
@click.option("--network", "networks", default="ideal", show_default=True,
              help="Networks to replay on, comma-separated: presets (gige, 10gige, qdr-ib, fdr-ib, edr-ib, "
                   "hdr-ib, ideal) or parameter files (.yaml, e.g. from scalewise calibrate).")
@click.option("--mpi", "library", type=click.Choice(FLAVOURS), default=None,
              help="Library whose collective algorithms the replay uses [default: the run's, from its log; "
                   "openmpi without one].")
@click.option("--measured", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="Job log to show beside the predictions (default: the .swlog beside the trace, if any).")
@click.option("-o", "--output", type=click.Path(dir_okay=True, path_type=Path), help="Write the HTML page.")
@json_option("the predictions and their changes against the measured run")
def whatif(source: Path, networks: str, library: str | None, measured: Path | None, output: Path | None,
           as_json: bool) -> None:
    """Replay a trace (.swtrace from scalewise run --trace, its .swlog, or their run directory) on each
    network and set it beside the measured run.

    \b
    Example: scalewise whatif job.swtrace --network gige,edr-ib,ideal -o whatif.html
    """
    from scalewise.cli.output import console

    from scalewise.logfile.reader import read_profile
    from scalewise.report.whatif.html import terminal_table, write_whatif_page
    from scalewise.whatif import read_trace, replay
    from scalewise.whatif.compare import against_measured, compare
    from scalewise.whatif.network import network
    from scalewise.whatif.pop import library_of

    names = [n.strip() for n in networks.split(",") if n.strip()]
    if not names:
        raise ScalewiseError("--network: no network named")
    nets = [network(n) for n in names]
    distinct_names(nets, names)
    trace = find_trace(source)
    tr = read_trace(trace)
    log = measured_log(trace, measured)
    profile = read_profile(log) if log else None
    library = library or (library_of(profile) if profile is not None else "openmpi")
    w = compare(replay(tr, nets, library=library), profile, tr.capped)
    doubted = [n for n in nets if n.doubts]
    if as_json:
        out = {"library": library, "trace": str(trace), "measured": str(log) if log else None, "capped": tr.capped,
               "summary": w.summary.reset_index().to_dict("records"),
               "vs_measured": against_measured(w).reset_index(names="source").to_dict("records"),
               "doubts": {n.name: n.doubts for n in doubted}}
        echo_json(out)
    else:
        console().print(terminal_table(w))
        if tr.capped:
            click.echo("note: the trace is capped (a rank reached SCALEWISE_TRACE_MAX_EVENTS); "
                       "the prediction covers the recorded part only")
        if profile is not None:
            click.echo("note: the change against the measured run is the prediction's error only for the "
                       "network the run was measured on")
    for n in doubted:
        click.echo(f"warning: network {n.name}: its calibration is not trustworthy: {'; '.join(n.doubts)}", err=True)
    if output:
        click.echo(f"page: {write_whatif_page(w, str(trace), output)}", err=as_json)
