"""One calibration as `scalewise calibrate` asks for it: where to measure, then ping-pong and collectives."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from scalewise.cluster.emulated import Cluster, require_cluster
from scalewise.cluster.launching import pair_launcher
from scalewise.cluster.links import link_shaping
from scalewise.errors import ScalewiseError
from scalewise.whatif.calibrate.collbench import calibrate_with_collectives
from scalewise.whatif.calibrate.peers import measure_peers
from scalewise.launch.releases import release_line
from scalewise.whatif.calibrate.pingpong import EAGER_ASSUMED, Calibration, write_network
from scalewise.whatif.calibrate.pingpong import eager_limit as default_eager_limit
from scalewise.whatif.network import Shaping


def cluster_shaping(cluster: Cluster) -> Shaping:
    """The shaping the emulated cluster's links apply, as the network file records it."""
    return Shaping(**link_shaping(cluster.rate_bits, cluster.queue_us))


def host_pair(hosts: str | None, on_cluster: bool) -> list[str] | None:
    """``--hosts a,b``: the two hosts; None to measure on this host (or on the cluster)."""
    host_list = [h.strip() for h in hosts.split(",")] if hosts else None
    if host_list is not None and (len(host_list) != 2 or not all(host_list)):
        raise ScalewiseError(f"--hosts: expected two host names separated by a comma, got '{hosts}'")
    if host_list and on_cluster:
        raise ScalewiseError("--hosts and --cluster: give one of them")
    return host_list


def calibrate(flavour: str, output: Path, *, hosts: str | None = None, on_cluster: bool = False,
              eager_limit: int | None = None, reps: int = 50, statistic: str = "best", names: list[str],
              sizes: list[int], ranks: int = 2, name: str | None = None, duplex: bool = True,
              peers: bool = False) -> Calibration:
    """Measure, fit and write the network file ``output``; the calibration with its points and doubts.
    ``duplex``: on a shaped link, measure whether both directions move at once (pingpong.duplex_terms);
    ``peers``: on an emulated cluster of 3 or more nodes, also how much more an exchange with several of
    them costs (peers.py).  Off by default: its ratios were steady only on deep (100 ms) queues; on the
    cluster's default 2 ms queues the repetitions scattered (docs/decisions.md)."""
    host_list = host_pair(hosts, on_cluster)
    if output.suffix not in (".yaml", ".yml"):
        raise ScalewiseError(f"{output}: the parameter file must end in .yaml")
    if ranks != 2 and (host_list or on_cluster):
        raise ScalewiseError("--ranks: more than 2 ranks only on this host (with --hosts or --cluster: one per host)")
    launcher, shaping, c = None, None, None
    if on_cluster:  # the ping-pong's two ranks on the emulated cluster's first two nodes
        c = require_cluster()
        launcher, host_list = pair_launcher(c, flavour, "calibrate --cluster"), c.hostnames[:2]
        shaping = cluster_shaping(c)
    if peers and c is None:
        raise ScalewiseError("--peers: exchanges with several nodes are measured on the emulated cluster (--cluster)")
    if peers and len(c.nodes) < 3:
        raise ScalewiseError(f"--peers: exchanges with several nodes need a cluster of at least 3 nodes "
                             f"(this one has {len(c.nodes)})")
    limit = eager_limit or default_eager_limit(flavour, host_list is None or host_list[0] == host_list[1])
    where = f"between {' and '.join(host_list)}" if host_list else "on this host"
    assumed = "" if eager_limit else EAGER_ASSUMED.get(release_line(flavour, "calibrate --mpi"), "")
    cal = calibrate_with_collectives(
        flavour, limit, name or output.stem, f"measured with scalewise calibrate, {flavour}, {where}, "
        f"{statistic} half round trips" + (f"; {assumed}" if assumed else ""), hosts=host_list, launcher=launcher, shaping=shaping, reps=reps,
        statistic=statistic, names=names, sizes=sizes, ranks=ranks, measure_duplex=duplex)
    if peers and duplex and cal.network.duplex == "full":
        ratios, _, _ = measure_peers(c, flavour, shaping)
        cal = replace(cal, network=cal.network.model_copy(update={"both_ways_peers": ratios}))
    write_network(cal.network, output)
    return cal
