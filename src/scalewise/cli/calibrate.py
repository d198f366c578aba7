"""`scalewise calibrate`: measure this machine's (or two hosts') network parameters for scalewise whatif."""

from __future__ import annotations

from pathlib import Path

import click

from scalewise.cluster.emulated import require_cluster
from scalewise.cluster.launching import pair_launcher
from scalewise.cluster.links import link_shaping
from scalewise.errors import ScalewiseError
from scalewise.launch.preload import FLAVOURS
from scalewise.whatif.calibrate import EAGER, STATISTICS, write_network
from scalewise.whatif.collbench import COLLECTIVES, SIZES, calibrate_with_collectives, parse_collectives, parse_sizes
from scalewise.whatif.network import Shaping


@click.command()
@click.option("--mpi", "flavour", type=click.Choice(FLAVOURS), default="openmpi", show_default=True,
              help="MPI library to measure with.")
@click.option("--hosts", help="Two hosts, comma-separated, one rank on each (default: both ranks here).")
@click.option("--cluster", "on_cluster", is_flag=True,
              help="Measure between the first two nodes of the emulated cluster (scalewise cluster up).")
@click.option("--eager-limit", type=click.IntRange(1), help="Bytes up to which messages go eagerly "
              "(default: the transport's: 4096 Open MPI shared memory, 65536 Open MPI TCP, 8192 MPICH over UCX).")
@click.option("--reps", default=50, show_default=True, type=click.IntRange(1),
              help="Round trips per size, and repetitions of each timed collective.")
@click.option("--statistic", type=click.Choice(STATISTICS), default="best", show_default=True,
              help="Half round trip fitted per size: the fastest (robust to other jobs on the machine), or the "
                   "median (on a quiet, dedicated machine).  Both are shown.")
@click.option("--collectives", "colls", default=",".join(COLLECTIVES), show_default=True,
              help="Collectives to time after the ping-pong and set beside their replay, or none.")
@click.option("--coll-sizes", default=",".join(map(str, SIZES)), show_default=True,
              help="Sizes of the timed collectives, bytes (multiples of 8; Alltoall: the block per rank).")
@click.option("--ranks", default=2, show_default=True, type=click.IntRange(2),
              help="Ranks for the collectives, on this host only (the ping-pong always uses 2).")
@click.option("--name", help="Network name in the file [default: the file's name without .yaml].")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="The parameter file to write (.yaml; give it to scalewise whatif --network).")
def calibrate(flavour: str, hosts: str | None, on_cluster: bool, eager_limit: int | None, reps: int,
              statistic: str, colls: str, coll_sizes: str, ranks: int, name: str | None, output: Path) -> None:
    """Ping-pong over message sizes from 0 to 4 MiB, fitted into a network file the replay accepts;
    then a few collectives timed and set beside their replay on that network."""
    host_list = [h.strip() for h in hosts.split(",")] if hosts else None
    if host_list is not None and (len(host_list) != 2 or not all(host_list)):
        raise ScalewiseError(f"--hosts: expected two host names separated by a comma, got '{hosts}'")
    if host_list and on_cluster:
        raise ScalewiseError("--hosts and --cluster: give one of them")
    if output.suffix not in (".yaml", ".yml"):
        raise ScalewiseError(f"{output}: the parameter file must end in .yaml")
    names, sizes = parse_collectives(colls), parse_sizes(coll_sizes)
    if ranks != 2 and (host_list or on_cluster):
        raise ScalewiseError("--ranks: more than 2 ranks only on this host (with --hosts or --cluster: one per host)")
    launcher, shaping = None, None
    if on_cluster:  # the ping-pong's two ranks on the emulated cluster's first two nodes
        c = require_cluster()
        launcher, host_list = pair_launcher(c, flavour, "calibrate --cluster"), c.hostnames[:2]
        shaping = Shaping(**link_shaping(c.rate_bits))
    limit = eager_limit or EAGER[(flavour, host_list is None or host_list[0] == host_list[1])]
    where = f"between {' and '.join(host_list)}" if host_list else "on this host"
    cal = calibrate_with_collectives(
        flavour, limit, name or output.stem, f"measured with scalewise calibrate, {flavour}, {where}, "
        f"{statistic} half round trips", hosts=host_list, launcher=launcher, shaping=shaping, reps=reps,
        statistic=statistic, names=names, sizes=sizes, ranks=ranks)
    net = cal.network
    write_network(net, output)
    _print_points(cal, statistic)
    if net.collectives:
        _print_collectives(net, flavour, statistic)
    for doubt in cal.doubts:
        click.echo(f"warning: calibration not trustworthy: {doubt}", err=True)
    click.echo(f"network: {output} (named {net.name})")


def _print_points(cal, statistic: str) -> None:
    from rich.console import Console

    from scalewise.report.whatif.calibration import points_table, shaping_sentence

    Console().print(points_table(cal, statistic))
    if cal.network.shaping:
        click.echo(shaping_sentence(cal.network.shaping))


def _print_collectives(net, library: str, statistic: str) -> None:
    from scalewise.cli.output import console

    from scalewise.report.whatif.calibration import bound_sentence, collectives_table

    console().print(collectives_table(net, library, statistic))
    click.echo(bound_sentence(net))
