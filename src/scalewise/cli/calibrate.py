"""`scalewise calibrate`: measure this machine's (or two hosts') network parameters for scalewise whatif."""

from __future__ import annotations

from pathlib import Path

import click

from scalewise.cluster.emulated import Cluster, require_cluster
from scalewise.cluster.launching import pair_launcher
from scalewise.cluster.links import bucket_bytes, rate_text
from scalewise.errors import ScalewiseError
from scalewise.launch.preload import FLAVOURS
from scalewise.whatif.calibrate import EAGER, STATISTICS, calibrated_network, rest_for, write_network
from scalewise.whatif.collbench import (COLLECTIVES, SIZES, measure_collectives, parse_collectives, parse_sizes,
                                        with_collectives)
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
@click.option("--statistic", type=click.Choice(STATISTICS), default="median", show_default=True,
              help="Half round trip fitted per size: the median, or the fastest (on a machine shared with other jobs).")
@click.option("--collectives", "colls", default=",".join(COLLECTIVES), show_default=True,
              help="Collectives to time after the ping-pong and set beside their replay, or none.")
@click.option("--coll-sizes", default=",".join(map(str, SIZES)), show_default=True,
              help="Sizes of the timed collectives, bytes (multiples of 8; Alltoall: the block per rank).")
@click.option("--ranks", default=2, show_default=True, type=click.IntRange(2),
              help="Ranks for the collectives, on this host only (the ping-pong always uses 2).")
@click.option("--name", default="calibrated", show_default=True, help="Network name in the file.")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="The parameter file to write (.yaml; give it to scalewise whatif --network).")
def calibrate(flavour: str, hosts: str | None, on_cluster: bool, eager_limit: int | None, reps: int,
              statistic: str, colls: str, coll_sizes: str, ranks: int, name: str, output: Path) -> None:
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
        shaping = cluster_shaping(c)
    limit = eager_limit or EAGER[(flavour, host_list is None or host_list[0] == host_list[1])]
    where = f"between {' and '.join(host_list)}" if host_list else "on this host"
    net = calibrated_network(flavour, limit, name,
                             f"measured with scalewise calibrate, {flavour}, {where}, {statistic} half round trips",
                             hosts=host_list, launcher=launcher, shaping=shaping, reps=reps, statistic=statistic)
    if names:
        timings = measure_collectives(flavour, names, sizes, reps, host_list, ranks, launcher, rest_for(shaping))
        net = with_collectives(net, flavour, timings, statistic)
    write_network(net, output)
    for r in net.ranges:
        click.echo(f"  up to {r.upto:g} B: L {r.latency_us:.2f} us, o {r.overhead_us:.2f} us, "
                   f"{r.bandwidth_gbit_s:.3g} Gbit/s")
    if shaping:
        click.echo(f"  shaped: {shaping.bucket_bytes} B bucket at {shaping.rate_gbit_s:g} Gbit/s ({shaping.source})")
    if net.collectives:
        _print_collectives(net, flavour, statistic)
    click.echo(f"network: {output}")


def cluster_shaping(c: Cluster) -> Shaping:
    """The token bucket every emulated link is shaped with, as the replay models it."""
    return Shaping(rate_gbit_s=c.rate_bits / 1e9, bucket_bytes=bucket_bytes(c.rate_bits),
                   source=f"tc tbf of the emulated links, {rate_text(c.rate_bits)}")



def _print_collectives(net, library: str, statistic: str) -> None:
    from scalewise.cli.output import console

    from scalewise.report.whatif.calibration import bound_sentence, collectives_table

    console().print(collectives_table(net, library, statistic))
    click.echo(bound_sentence(net))
