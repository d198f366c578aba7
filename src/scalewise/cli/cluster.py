"""`scalewise cluster up|status|check|exec|down`: the emulated multi-node cluster."""

from __future__ import annotations

import subprocess
import sys

import click

from scalewise.cli.mpi_names import given_option
from scalewise.cluster.checks import check_links
from scalewise.cluster.lock import cluster_lock
from scalewise.cluster.emulated import cluster_down, cluster_up, current_cluster, require_cluster
from scalewise.cluster.launching import cluster_launch, launch_settings
from scalewise.cluster.slurm import start_slurm
from scalewise.cluster.links import DEFAULT_QUEUE_US, LINK_PRESETS, SUSTAINED_BITS, parse_queue, queue_text, parse_rate, rate_text
from scalewise.errors import ScalewiseError


@click.group()
def cluster() -> None:
    """Emulated nodes on this machine: network namespaces joined by shaped links (needs root)."""


@cluster.command()
@click.option("--nodes", type=int, required=True, help="Number of nodes.")
@click.option("--link", "preset", type=click.Choice(sorted(LINK_PRESETS)), default=None,
              help="Link speed by the network it stands for.")
@click.option("--rate", default=None, help="Link speed as a rate, e.g. 100mbit, 2.5gbit.")
@click.option("--queue", default=None,
              help=f"How long a packet may wait in a link's queue, e.g. 2ms, 500us (a new cluster: "
                   f"{queue_text(DEFAULT_QUEUE_US)}; a running one keeps its own).")
@click.option("--blocking", type=click.Choice(["2:1"]), default=None,
              help="Two halves joined by an uplink carrying half of what one half can send.")
@click.option("--tcp-defaults/--no-tcp-defaults", default=None,
              help="Launch with each MPI's own TCP settings (Open MPI's exchanges of large messages then take "
                   "turns: a peer's control message waits behind bulk data in one socket); by default the "
                   "nodes stand for an HPC interconnect and Open MPI's TCP transport runs without its put "
                   "protocol (a new cluster: --no-tcp-defaults; a running one keeps its own).")
@click.option("--slurm", "with_slurm", is_flag=True, help="Also start Slurm: slurmctld here, a slurmd in every node.")
def up(nodes: int, preset: str | None, rate: str | None, queue: str | None, blocking: str | None,
       tcp_defaults: bool | None, with_slurm: bool) -> None:
    """Bring up N emulated nodes (a running cluster of the same shape is kept; at another rate
    its links are reshaped in place)."""
    if preset and rate:
        raise ScalewiseError("give --link or --rate, not both")
    bits = parse_rate(rate or preset or "gige")
    queue_us = parse_queue(queue) if queue is not None else None
    with cluster_lock():  # not while a study reshapes it
        c = cluster_up(nodes, bits, blocking, queue_us, tcp_defaults)
    click.echo(f"cluster: {c.describe()}; nodes {', '.join(c.hostnames)}")
    if bits > SUSTAINED_BITS:
        click.echo(f"cluster: note: {rate_text(bits)} is more than links on this machine carried "
                   f"(up to about {rate_text(SUSTAINED_BITS)} shaped); check what they deliver")
    click.echo("cluster: latency is not configured; measure it (and the rate) with `scalewise cluster check`")
    if with_slurm:
        conf = start_slurm(c)
        click.echo(f"cluster: Slurm is up on {', '.join(c.hostnames)}: export SLURM_CONF={conf}")


@cluster.command()
def status() -> None:
    """The nodes, their addresses and cores, and the links."""
    c = current_cluster()
    if c is None:
        click.echo("cluster: none is up")
        return
    dead = set(c.alive())
    click.echo(f"cluster: {c.describe()}, {c.cpus_total} cores shared out")
    click.echo(f"  launches: {launch_settings(c)}")
    for n in c.nodes:
        state = "gone" if n.name in dead else "up"
        click.echo(f"  {n.name:<10} {n.address:<14} cores {','.join(map(str, n.cpus)):<8} "
                   f"link {n.veth} {rate_text(c.rate_bits)} queue {queue_text(c.queue_us)}  {state}")
    if dead:
        sys.exit(1)


@cluster.command()
@click.option("--mpi", "flavour", default="openmpi", show_default=True, callback=given_option("cluster check"),
              help="MPI to measure with: openmpi or mpich (Debian's), or an identity such as mpich-5.0.2 "
                   "(its launcher from PATH).")
def check(flavour: str) -> None:
    """Measure latency and bandwidth between the first two nodes with an MPI ping-pong."""
    result = check_links(require_cluster(), flavour)
    click.echo(result.text())


@cluster.command(name="exec", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option("--mpi", "flavour", default=None, callback=given_option("cluster exec"),
              help="The MPI: openmpi, mpich or an identity such as openmpi-5.0.11 (default: read from the "
                   "launcher or executable).")
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
def exec_(flavour: str | None, command: tuple[str, ...]) -> None:
    """Run an mpirun / mpiexec line across the nodes: scalewise cluster exec -- mpirun -np 4 ./app"""
    launch = cluster_launch(require_cluster(), list(command), flavour=flavour)
    try:
        code = subprocess.run(launch.argv, env=launch.env).returncode
    except FileNotFoundError:
        raise ScalewiseError(f"launcher not found: {command[0]}") from None
    sys.exit(code if 0 <= code < 256 else 1)


@cluster.command()
def down() -> None:
    """Remove every node, link and process the cluster made (safe to repeat)."""
    with cluster_lock():
        removed = cluster_down()
    click.echo("cluster: removed " + ("; ".join(removed) if removed else "nothing (none was up)"))
