"""Seconds of calibrate's collective step on the 100 Mbit/s emulated links, Open MPI and MPICH, 20 rested
repetitions: the default sizes (8, 64 KiB, 1 MiB) against 8 bytes only, alternating, 2 rounds."""
import json
import time
from scalewise.cluster import cluster_down, cluster_up, parse_rate
from scalewise.cluster.launching import pair_launcher
from scalewise.cluster.lock import cluster_lock
from scalewise.whatif.calibrate.collbench import COLLECTIVES, SIZES, measure_collectives
from scalewise.whatif.calibrate.measure import cluster_shaping
from scalewise.whatif.calibrate.pingpong import rest_for
with cluster_lock():
    cluster_down()
    c = cluster_up(2, parse_rate("100mbit"))
    try:
        for k in range(2):
            for mpi in ("openmpi", "mpich"):
                for sizes in (SIZES, (8,)):
                    t0 = time.monotonic()
                    measure_collectives(mpi, tuple(COLLECTIVES), sizes, 20, None, 2, pair_launcher(c, mpi, "bench"),
                                        rest_for(cluster_shaping(c)))
                    print(json.dumps({"round": k, "mpi": mpi, "sizes": list(sizes), "seconds": round(time.monotonic() - t0, 2)}), flush=True)
    finally:
        cluster_down()
