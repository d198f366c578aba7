#!/usr/bin/env python3
"""Where a 1 MiB exchange between two emulated nodes and `scalewise calibrate`'s measurement of the
link part ways: on one link, calibrate's own functions (the rested ping-pong's one-way half round trips,
measure_both; the rested exchange of one message each way, stream_times, at 1 MiB and at the 4 MiB
calibrate takes both_ways from) beside dft's pattern (bench/exchange_pattern.c: one MPI_Alltoallv of
1 MiB each way after 10 ms of computing, rank 1 arriving --skew-us later or not, and the same with the
receive posted before a barrier as calibrate's exchange does).  Each line gives the median, fastest
and mean time and the median over the fastest and over the median one-way time of that size, and the
nodes' TCP counters during it (bench/whatif_self.py --tcp-counters).  Root; holds the cluster lock.

usage: whatif_exchange.py [--flavours mpich,openmpi] [--rate 1gbit] [--queue 2ms] [--reps 30] [--skews 0,3000]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys

from common import build, on_emulated_cluster
from whatif_self import counters_text, link_counters

from scalewise.cluster.emulated import cluster_up
from scalewise.cluster.launching import pair_launcher
from scalewise.cluster.links import DEFAULT_QUEUE_US, parse_queue, parse_rate, queue_text
from scalewise.whatif.calibrate.measure import cluster_shaping
from scalewise.whatif.calibrate.pingpong import measure_both, rest_for, stream_times

MIB = 1 << 20
_EXCHANGE = re.compile(r"median_us=([\d.]+) best_us=([\d.]+) mean_us=([\d.]+)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flavours", default="mpich,openmpi", type=lambda s: s.split(","))
    ap.add_argument("--rate", default="1gbit")
    ap.add_argument("--queue", type=parse_queue, default=DEFAULT_QUEUE_US)
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--skews", default=[0, 3000], type=lambda s: [int(x) for x in s.split(",")])
    a = ap.parse_args()
    print(f"link {a.rate}, queue {queue_text(a.queue)}", flush=True)
    for flavour in a.flavours:
        with on_emulated_cluster() as tmp:
            exe = build(flavour, "exchange_pattern.c", tmp)
            c = cluster_up(2, parse_rate(a.rate), queue_us=a.queue)
            on_nodes = pair_launcher(c, flavour, "whatif_exchange")
            rest = rest_for(cluster_shaping(c))

            def counted(what: str, take):
                before = link_counters(c)
                got = take()
                ms = {k: v * 1e3 for k, v in got.items()}
                print(f"{flavour} {what}: " + ", ".join(f"{k} {v:.2f} ms" for k, v in ms.items()), flush=True)
                print(f"    {counters_text(before, link_counters(c))}", flush=True)
                return got

            one = counted("one way (ping-pong, rested), 1 MiB", lambda: {
                k: v[MIB] for k, v in measure_both(flavour, sizes=(8, MIB, 4 * MIB), reps=a.reps,
                                                  launcher=on_nodes, pause=rest).items()})
            one4 = measure_both(flavour, sizes=(8, 4 * MIB), reps=a.reps, launcher=on_nodes, pause=rest)
            print(f"{flavour} one way, 4 MiB: " + ", ".join(f"{k} {v[4 * MIB] * 1e3:.2f} ms" for k, v in one4.items()))

            def ratios(got: dict[str, float], way: dict[str, float]) -> str:
                return (f"    median / fastest one way {got['median'] / way['best']:.3f}, "
                        f"median / median one way {got['median'] / way['median']:.3f}, "
                        f"mean / median one way {got['mean'] / way['median']:.3f}")

            for size, way in ((MIB, one), (4 * MIB, {k: v[4 * MIB] for k, v in one4.items()})):
                got = counted(f"calibrate's exchange (stream_times, rested), {size >> 20} MiB",
                              lambda size=size: stream_times(flavour, None, on_nodes, a.reps, 1, size, rest))
                print(ratios(got, way), flush=True)
            for prepost in (False, True):
                for skew in a.skews:
                    argv = [str(exe), "--bytes", str(MIB), "--reps", "67", "--skew-us", str(skew),
                            *(["--prepost"] if prepost else [])]

                    def pattern(argv=argv) -> dict[str, float]:
                        line, env = on_nodes(argv)
                        out = subprocess.run(line, env=env, capture_output=True, text=True, timeout=300, check=True).stdout
                        m = _EXCHANGE.search(out)
                        if not m:
                            raise SystemExit(f"exchange_pattern printed nothing: {out[-300:]}")
                        return {"median": float(m[1]) * 1e-6, "best": float(m[2]) * 1e-6, "mean": float(m[3]) * 1e-6}
                    what = "receive posted, barrier, send" if prepost else "MPI_Alltoallv"
                    got = counted(f"dft's pattern ({what}, 10 ms computing, rank 1 {skew} us later), 1 MiB", pattern)
                    print(ratios(got, one), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
