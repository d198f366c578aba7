#!/usr/bin/env python3
"""Why Open MPI's exchanges take turns on the emulated links: a 4 MiB message both ways at once
against one way (as `calibrate` measures duplex), Open MPI and MPICH, with the links' queue
(`cluster up --queue`, tc tbf `latency`) set to each time given.  Root; takes the cluster lock for
each queue in turn and leaves no cluster up.  RATE=1gbit for another rate.

usage: whatif_queue_depth.py 100ms 10ms 3ms
"""
import os
import sys

from scalewise.cluster.dedicated import ahead_of_others
from scalewise.cluster.lock import cluster_lock
from scalewise.cluster.emulated import cluster_down, cluster_up
from scalewise.cluster.links import parse_queue, parse_rate
from scalewise.cluster.launching import pair_launcher
from scalewise.whatif.calibrate.measure import cluster_shaping
from scalewise.whatif.calibrate.pingpong import BOTH_WAYS_BYTES, measure_both, rest_for, stream_time

ahead_of_others()
rate = os.environ.get("RATE", "100mbit")
print(f"load before: {os.getloadavg()[0]:.2f}", flush=True)
for queue in sys.argv[1:]:
    with cluster_lock():
        c = cluster_up(2, parse_rate(rate), queue_us=parse_queue(queue))
        sh = cluster_shaping(c)
        for fl in ("openmpi", "mpich"):
            L = pair_launcher(c, fl, "exp")
            one = measure_both(fl, sizes=(BOTH_WAYS_BYTES,), reps=5, launcher=L, pause=rest_for(sh))
            both = [stream_time(fl, None, L, 5, st, 1, BOTH_WAYS_BYTES, rest_for(sh)) for st in ("median", "best")]
            o = one["best"][BOTH_WAYS_BYTES]
            print(f"{rate} queue {queue} {fl}: one way best {o*1e3:.1f} ms; both ways median {both[0]*1e3:.1f} ms "
                  f"({both[0]/o:.2f}x), best {both[1]*1e3:.1f} ms ({both[1]/o:.2f}x)", flush=True)
        cluster_down()
print(f"load after: {os.getloadavg()[0]:.2f}")
