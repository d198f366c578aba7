"""`scalewise cluster check`'s link rate at 100 Mbit/s, many times over: the fastest of ``reps``
round trips of 4 MiB between two emulated nodes, for Debian's Open MPI and MPICH, as
tests/cluster/test_cluster.py::test_links_deliver_the_configured_rate checks it (0.90-1.10).

    python bench/link_check_rate.py RUNS REPS

One JSON line per check; holds the cluster lock throughout."""

import json
import sys

from scalewise.cluster import cluster_down, cluster_up, parse_rate
from scalewise.cluster.checks import check_links
from scalewise.cluster.lock import cluster_lock

runs, reps = int(sys.argv[1]), int(sys.argv[2])
with cluster_lock():
    cluster_down()
    c = cluster_up(2, parse_rate("100mbit"))
    try:
        for mpi in ("openmpi", "mpich"):
            for k in range(runs):
                ratio = check_links(c, mpi, reps=reps).ratio
                print(json.dumps({"mpi": mpi, "run": k, "reps": reps, "ratio": round(ratio, 4)}), flush=True)
    finally:
        cluster_down()
