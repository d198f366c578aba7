"""Exchanges with several nodes at once (Network.both_ways_peers), on an emulated cluster of 3 or more
nodes: the fan-in proxy's all-to-all of k+1 nodes (each sending PEER_MSGS messages of PEER_BYTES to
every other at once) against the same messages into one node from its k peers alone, k = 1 .. nodes - 1.

Measured (docs/benchmarks.md, "Fan-in"): k senders alone fill the receiving link (98-99% of one
stream at 100 Mbit/s, both MPIs), the exchange does not, and the more nodes it spans the less."""

from __future__ import annotations

import math
import re
import statistics

from scalewise.cluster.emulated import Cluster
from scalewise.cluster.launching import cluster_launch
from scalewise.errors import ScalewiseError
from scalewise.launch.preload import built_library
from scalewise.launch.mpirun import MPICH_RUN, OPENMPI_RUN
from scalewise.launch.mpis import family_of
from scalewise.whatif.calibrate.pingpong import run_proxy
from scalewise.whatif.network import Shaping

PEER_BYTES = 256 << 10  # an Alltoallv block of dft's small size at 4 ranks
PEER_MSGS = 8  # messages each sender sends each peer: a stream the link's bucket is a small part of
PEER_REPS = 7
_SECONDS = re.compile(r"rep=\d+ seconds=([\d.]+)")


def peer_times(c: Cluster, flavour: str, k: int, all_to_all: bool, pause_ms: int,
               reps: int = PEER_REPS, msgs: int = PEER_MSGS) -> list[float]:
    """Rank 0's seconds in each repetition: k senders into it, or the all-to-all of ranks 0..k."""
    exe = built_library(flavour, "proxies/fanin", "fan-in proxy")
    ranks = str(len(c.nodes))
    words = [OPENMPI_RUN, "-np", ranks] if family_of(flavour) == "openmpi" else [MPICH_RUN, "-n", ranks]
    argv = [str(exe), str(k), str(PEER_BYTES), str(msgs), str(reps), str(pause_ms)] + (["--all"] if all_to_all else [])
    line = cluster_launch(c, [*words, *argv], flavour=flavour)
    times = [float(x) for x in _SECONDS.findall(run_proxy(line.argv, line.env, "the fan-in proxy"))]
    if len(times) != reps:
        raise ScalewiseError(f"calibrate: the fan-in proxy printed {len(times)} of {reps} repetitions")
    return times


def peers_ratios(fan_in: dict[int, list[float]], exchange: dict[int, list[float]]) -> list[float]:
    """both_ways_peers from the repetitions' seconds by k: the exchange's median over the fan-in's,
    from 1 (faster is noise) to 2, k ascending from 1."""
    ks = sorted(fan_in)
    if ks != list(range(1, len(ks) + 1)) or sorted(exchange) != ks:
        raise ScalewiseError(f"calibrate: peers measured for k = {ks} and {sorted(exchange)}, need 1, 2, ... in both")
    return [round(min(max(statistics.median(exchange[k]) / statistics.median(fan_in[k]), 1.0), 2.0), 4) for k in ks]


def measure_peers(c: Cluster, flavour: str, shaping: Shaping | None, reps: int = PEER_REPS,
                  msgs: int = PEER_MSGS) -> tuple[list[float], dict[int, list[float]], dict[int, list[float]]]:
    """both_ways_peers on ``c`` (every node), and the seconds it was fitted from (fan-in, exchange);
    ``msgs``: messages each sender sends each peer (1: a single burst, as one Alltoallv of dft's)."""
    if len(c.nodes) < 3:
        raise ScalewiseError("calibrate: exchanges with several nodes need a cluster of at least 3 nodes")
    rest = shaping.bucket_bytes / shaping.bytes_per_second if shaping else 0.0
    pause_ms = max(100, math.ceil(1100 * rest))  # the buckets refilled before each repetition
    fan_in = {k: peer_times(c, flavour, k, False, pause_ms, reps, msgs) for k in range(1, len(c.nodes))}
    exchange = {k: peer_times(c, flavour, k, True, pause_ms, reps, msgs) for k in range(1, len(c.nodes))}
    return peers_ratios(fan_in, exchange), fan_in, exchange
