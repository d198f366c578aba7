"""`scalewise whatif TRACE --network ...`: predict a recorded run on other interconnects."""

from __future__ import annotations

from pathlib import Path

import click

from scalewise.cli.output import echo_json, json_option
from scalewise.cli.mpi_names import release_option


@click.command()
@click.argument("source", metavar="TRACE_OR_RUN_DIR", type=click.Path(path_type=Path))
@click.option("--network", "networks", default="ideal", show_default=True,
              help="Networks to replay on, comma-separated: presets (gige, 10gige, qdr-ib, fdr-ib, edr-ib, "
                   "hdr-ib, ideal) or parameter files (.yaml, e.g. from scalewise calibrate).")
@click.option("--mpi", "library", default=None, callback=release_option,
              help="Library whose collective algorithms the replay uses: openmpi, mpich (Debian's) or an identity such as "
                   "openmpi-5.0.11, mpich-5.0.2, intelmpi-2021.19 [default: the run's, from its log; "
                   "openmpi without one].")
@click.option("--measured", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="Job log to show beside the predictions (default: the .swlog beside the trace, if any).")
@click.option("--ranks-per-node", type=int, default=None,
              help="Place the ranks on nodes of this many ranks; messages inside a node cost --local's "
                   "parameters [default: every rank on a node of its own].")
@click.option("--placement", type=click.Choice(["slot", "node"]), default="slot", show_default=True,
              help="How ranks fill the nodes: slot (0,1 on the first node...) or node (round robin).")
@click.option("--local", default=None,
              help="Network for messages inside a node: shared memory, a parameter file from scalewise calibrate "
                   "on one node (or a preset).")
@click.option("-o", "--output", type=click.Path(dir_okay=True, path_type=Path), help="Write the HTML page.")
@json_option("the predictions and their changes against the measured run")
def whatif(source: Path, networks: str, library: str | None, measured: Path | None, ranks_per_node: int | None,
           placement: str, local: str | None, output: Path | None, as_json: bool) -> None:
    """Replay a trace (.swtrace from scalewise run --trace, its .swlog, or their run directory) on each
    network and set it beside the measured run.

    \b
    Example: scalewise whatif job.swtrace --network gige,edr-ib,ideal -o whatif.html
    """
    from scalewise.cli.output import console

    from scalewise.whatif.predict import predict

    p = predict(source, [n.strip() for n in networks.split(",") if n.strip()], library, measured,
                ranks_per_node, placement, local)
    if as_json:
        echo_json(p.to_json_dict())
    else:
        from scalewise.report.whatif.table import summary_rows, terminal_table  # no matplotlib: the page's

        console().print(terminal_table(p.library, summary_rows(p.summary, p.changes)))
        if p.capped:
            click.echo("note: the trace is capped (a rank reached SCALEWISE_TRACE_MAX_EVENTS); "
                       "the prediction covers the recorded part only")
        if p.to_json_dict()["assumption"]:
            click.echo(f"note: {p.to_json_dict()['assumption']}")
        if p.measured is not None:
            click.echo("note: the change against the measured run is the prediction's error only for the "
                       "network the run was measured on")
    for n in p.doubted:
        click.echo(f"warning: network {n.name}: its calibration is not trustworthy: {'; '.join(n.doubts)}", err=True)
    if output:
        from scalewise.report.whatif.html import write_whatif_page

        click.echo(f"page: {write_whatif_page(p.frames(), str(p.trace), output)}", err=as_json)
