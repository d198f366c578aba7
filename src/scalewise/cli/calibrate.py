"""`scalewise calibrate`: measure this machine's (or two hosts') network parameters for scalewise whatif."""

from __future__ import annotations

from pathlib import Path

import click

from scalewise.cli.mpi_names import measured_option
from scalewise.whatif.calibrate.collbench import COLLECTIVES, SIZES, parse_collectives, parse_sizes
from scalewise.whatif.calibrate.pingpong import STATISTICS


@click.command()
@click.option("--mpi", "flavour", callback=measured_option("calibrate"),
              help="MPI library to measure with: openmpi, mpich (Debian's) or an identity such as openmpi-5.0.11 "
                   "(its launcher first on PATH)  [default: the MPI of mpicc on PATH]")
@click.option("--hosts", help="Two hosts, comma-separated, one rank on each (default: both ranks here).")
@click.option("--cluster", "on_cluster", is_flag=True,
              help="Measure between the first two nodes of the emulated cluster (scalewise cluster up).")
@click.option("--eager-limit", type=click.IntRange(1), help="Bytes up to which messages go eagerly "
              "(default: the transport's: 4096 Open MPI shared memory, 65536 Open MPI TCP, 8192 MPICH over UCX, "
              "4016 Open MPI 5 and 8112 MPICH 5 shared memory, 65536 Intel MPI; docs/whatif.md).")
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
@click.option("--duplex/--no-duplex", default=True, show_default=True,
              help="On a shaped link (--cluster): time a 4 MiB message both ways at once in several launches, "
                   "and record whether the transport moves both directions at once (duplex, both_ways).")
@click.option("--peers/--no-peers", default=False, show_default=True,
              help="On an emulated cluster of 3 or more nodes (--cluster, with --duplex): also time the all-to-all "
                   "of k+1 nodes against k senders alone (both_ways_peers); steady on deep queues (cluster up "
                   "--queue 100ms), scattered on the default 2 ms ones.")
@click.option("--name", help="Network name in the file [default: the file's name without .yaml].")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="The parameter file to write (.yaml; give it to scalewise whatif --network).")
def calibrate(flavour: str, hosts: str | None, on_cluster: bool, eager_limit: int | None, reps: int,
              statistic: str, colls: str, coll_sizes: str, ranks: int, duplex: bool, peers: bool,
              name: str | None, output: Path) -> None:
    """Ping-pong over message sizes from 0 to 4 MiB, fitted into a network file the replay accepts;
    then a few collectives timed and set beside their replay on that network."""
    from scalewise.whatif.calibrate.measure import calibrate as measure

    cal = measure(flavour, output, hosts=hosts, on_cluster=on_cluster, eager_limit=eager_limit, reps=reps,
                  statistic=statistic, names=parse_collectives(colls), sizes=parse_sizes(coll_sizes), ranks=ranks,
                  name=name, duplex=duplex, peers=peers)
    net = cal.network
    _print_points(cal, statistic)
    if net.collectives:
        _print_collectives(net, flavour, statistic)
    for doubt in cal.doubts:
        click.echo(f"warning: calibration not trustworthy: {doubt}", err=True)
    click.echo(f"network: {output} (named {net.name})")


def _print_points(cal, statistic: str) -> None:
    from rich.console import Console

    from scalewise.whatif.calibrate.report import duplex_sentence, points_table, shaping_sentence

    Console().print(points_table(cal, statistic))
    if cal.network.shaping:
        click.echo(shaping_sentence(cal.network.shaping))
    if cal.both_ways_launches:
        click.echo(duplex_sentence(cal))
    if cal.network.both_ways_peers:
        click.echo("an exchange with k nodes at once takes, over the same messages from k nodes alone (k = 1, 2, ...): "
                   + ", ".join(f"{b:g}" for b in cal.network.both_ways_peers))


def _print_collectives(net, library: str, statistic: str) -> None:
    from scalewise.cli.output import console

    from scalewise.whatif.calibrate.report import bound_sentence, collectives_table

    console().print(collectives_table(net, library, statistic))
    click.echo(bound_sentence(net))
