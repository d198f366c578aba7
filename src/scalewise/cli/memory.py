"""`scalewise memory`: how much memory MPI takes per connected peer, projected to a target machine."""

from __future__ import annotations

from pathlib import Path

import click

from scalewise.cli.mpi_names import measured_list_option
from scalewise.cli.output import echo_json, json_option
from scalewise.errors import ScalewiseError


def _list(text: str, what: str) -> list[str]:
    items = [x.strip() for x in text.split(",") if x.strip()]
    if not items:
        raise ScalewiseError(f"{what}: empty list")
    return items


def _ints(text: str, what: str) -> list[int]:
    try:
        return [int(x) for x in _list(text, what)]
    except ValueError:
        raise ScalewiseError(f"{what}: expected whole numbers separated by commas, got '{text}'") from None


def _assumed(node_memory: str, ranks_per_node: int, nodes_text: str, app_peers: int) -> tuple[str, ...]:
    """The target values the user left at their defaults, as the projection states them."""
    ctx = click.get_current_context()
    said = {name: ctx.get_parameter_source(name) != click.core.ParameterSource.DEFAULT
            for name in ("node_memory", "ranks_per_node", "nodes_text", "app_peers")}
    shown = {"node_memory": f"{node_memory} per node", "ranks_per_node": f"{ranks_per_node} ranks per node",
             "nodes_text": f"nodes {nodes_text}", "app_peers": f"{app_peers} peers per rank under on-demand set-up"}
    return tuple(text for name, text in shown.items() if not said[name])


@click.command()
@click.option("--mpi", "mpis", default="openmpi,mpich", show_default=True, callback=measured_list_option("memory"),
              help="MPI libraries to measure: Debian's openmpi and mpich, or identities such as openmpi-5.0.11 "
                   "(one at a time when their launchers share a name: the one first on PATH runs).")
@click.option("--ranks", default="2,4,8,16,32", show_default=True, help="Rank counts (oversubscribing is fine).")
@click.option("--peers", default="none,neighbours,all", show_default=True,
              help="Peers each rank exchanges a message with: none, neighbours (ring), all.")
@click.option("--repeats", default=2, show_default=True, type=click.IntRange(1, 100), help="Runs of each point.")
@click.option("--setting", "settings", multiple=True, metavar="NAME=VALUE",
              help="Added to every run of the library it belongs to: an MCA parameter (lower case), "
                   "an MPICH CVAR (MPIR_CVAR_...) or an environment variable (upper case).")
@click.option("--node-memory", default="256GiB", show_default=True, help="Memory of one target node.")
@click.option("--ranks-per-node", default=128, show_default=True, type=click.IntRange(1), help="Target ranks per node.")
@click.option("--nodes", "nodes_text", default="1..1024", show_default=True, help="Target node counts: 1..1024 or 1,8,64.")
@click.option("--app-peers", default=6, show_default=True, type=click.IntRange(0),
              help="Peers a rank talks to under on-demand set-up in the projection.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Write the HTML page (B10 figure).")
@click.option("--emulated-nodes", default=1, show_default=True, type=click.IntRange(1, 64),
              help="Spread each probe run's ranks over this many emulated nodes (root; docs/cluster.md).")
@json_option("the fits, the projection and the findings")
@click.option("--workdir", type=click.Path(file_okay=False, path_type=Path),
              help="Keep each probe run's output here (default: a temporary folder).")
def memory(mpis, ranks, peers, repeats, settings, node_memory, ranks_per_node, nodes_text, app_peers, output,
           emulated_nodes, as_json, workdir) -> None:
    """Measure MPI's memory per connected peer (eager vs on-demand set-up) and project it to a target machine."""
    from scalewise.memory.analysis import MachineTarget, parse_nodes, parse_size
    from scalewise.memory.measure import measure_memory

    target = MachineTarget(parse_size(node_memory, "--node-memory"), ranks_per_node, parse_nodes(nodes_text),
                           app_peers, _assumed(node_memory, ranks_per_node, nodes_text, app_peers))
    say = None if as_json else (lambda line: click.echo(f"  {line}", err=True))
    a = measure_memory(_list(mpis, "--mpi"), _ints(ranks, "--ranks"), _list(peers, "--peers"), repeats,
                       list(settings), target, workdir, say, emulated_nodes, output)
    if as_json:
        echo_json(a.to_json_dict())
        return
    from scalewise.memory.terminal import fits_lines

    for line in fits_lines(a):
        click.echo(line)
    for f in a.findings:
        click.echo(f"- {f.text}")
    if target.assumed:
        click.echo(f"assumed, not given: {', '.join(target.assumed)} (--node-memory, --ranks-per-node, --nodes, "
                   "--app-peers set them)")
    if output:
        click.echo(f"page: {output}")
