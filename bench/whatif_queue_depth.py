#!/usr/bin/env python3
"""Whether an MPI's exchanges take turns on the emulated links: a message both ways at once against
one way (as `calibrate` measures duplex), with the links' queue (`cluster up --queue`, tc tbf
`latency`) set to each time given.  One way is the fastest of 5 rested half round trips; both ways
the median of 5 rested exchanges, in each of LAUNCHES launches (an Open MPI launch's exchanges
either all take turns or none do).  Root; takes the cluster lock for each queue in turn and leaves
no cluster up.

Settings from the environment: RATE (100mbit), BYTES (4194304), FLAVOURS (openmpi,mpich),
LAUNCHES (3), NOTSENT_LOWAT (the nodes' net.ipv4.tcp_notsent_lowat; the kernel's default unless
given), TCP_DEFAULTS (1: each MPI's own TCP settings, `cluster up --tcp-defaults`; else the
cluster's, which keep control messages apart from bulk data); OMPI_MCA_* reach Open MPI's ranks
as usual and win over the cluster's.

usage: whatif_queue_depth.py 100ms 10ms 3ms
"""
import os
import subprocess
import sys

from scalewise.cluster.dedicated import ahead_of_others
from scalewise.cluster.lock import cluster_lock
from scalewise.cluster.emulated import cluster_down, cluster_up
from scalewise.cluster.links import parse_queue, parse_rate
from scalewise.cluster.launching import pair_launcher
from scalewise.whatif.calibrate.measure import cluster_shaping
from scalewise.whatif.calibrate.pingpong import measure_both, rest_for, stream_time

ahead_of_others()
rate = os.environ.get("RATE", "100mbit")
size = int(os.environ.get("BYTES", str(4 << 20)))
launches = int(os.environ.get("LAUNCHES", "3"))
lowat = os.environ.get("NOTSENT_LOWAT")
tcp_defaults = os.environ.get("TCP_DEFAULTS") == "1"
mca = " ".join(f"{k}={v}" for k, v in sorted(os.environ.items()) if k.startswith("OMPI_MCA_"))
print(f"load before: {os.getloadavg()[0]:.2f}; {rate}, {size} B, {launches} launches"
      f"{f', tcp_notsent_lowat {lowat}' if lowat else ''}{f', {mca}' if mca else ''}"
      f"{', the MPIs own TCP settings' if tcp_defaults else ''}", flush=True)
for queue in sys.argv[1:]:
    with cluster_lock():
        c = cluster_up(2, parse_rate(rate), queue_us=parse_queue(queue), tcp_defaults=tcp_defaults)
        if lowat:
            for n in c.nodes:
                subprocess.run(["nsenter", "-t", str(n.pid), "-n", "sysctl", "-qw",
                                f"net.ipv4.tcp_notsent_lowat={lowat}"], check=True)
        rest = rest_for(cluster_shaping(c))
        for fl in os.environ.get("FLAVOURS", "openmpi,mpich").split(","):
            L = pair_launcher(c, fl, "exp")
            one = measure_both(fl, sizes=(size,), reps=5, launcher=L, pause=rest)["best"][size]
            both = [stream_time(fl, None, L, 5, "median", 1, size, rest) for _ in range(launches)]
            print(f"queue {queue} {fl}: one way {one * 1e3:.1f} ms; both ways / one way, each launch: "
                  + ", ".join(f"{b / one:.2f}" for b in both), flush=True)
        cluster_down()
print(f"load after: {os.getloadavg()[0]:.2f}")
