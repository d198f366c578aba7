#!/usr/bin/env python3
"""The emulated cluster, measured: up/down time per node count, and what each link preset delivers.

For 2, 4 and 8 nodes: the median of --rounds `cluster up` and `cluster down`
times.  For each preset (fe, gige, 10gige, 25gige) and MPI: the ping-pong
between two nodes (docs/cluster.md): median latency of 8-byte messages and
the bandwidth of 4 MiB messages, with its ratio to the configured rate.
Needs root.

usage: cluster.py [--rounds 3] [--presets fe,gige,10gige,25gige] [--mpis openmpi,mpich]
"""

from __future__ import annotations

import argparse
import statistics
import time

from rich.console import Console
from rich.table import Table

from scalewise.cluster import LINK_PRESETS, cluster_down, cluster_up
from scalewise.cluster.checks import check_links
from scalewise.cluster.links import rate_text
from scalewise.cluster.lock import cluster_lock


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--presets", default="fe,gige,10gige,25gige")
    ap.add_argument("--mpis", default="openmpi,mpich")
    args = ap.parse_args()
    console = Console()
    with cluster_lock():
        measure(args, console)


def measure(args, console: Console) -> None:
    cluster_down()
    lifecycle = Table(title=f"cluster up / down, median of {args.rounds}")
    for col in ("nodes", "up", "down"):
        lifecycle.add_column(col, justify="right")
    for nodes in (2, 4, 8):
        ups, downs = [], []
        for _ in range(args.rounds):
            ups.append(timed(lambda: cluster_up(nodes, LINK_PRESETS["gige"][0])))
            downs.append(timed(cluster_down))
        lifecycle.add_row(str(nodes), f"{statistics.median(ups):.2f} s", f"{statistics.median(downs):.2f} s")
    console.print(lifecycle)
    links = Table(title="what a link delivers between two nodes (ping-pong, 40 round trips)")
    for col in ("preset", "configured", "MPI", "latency (8 B, median half RTT)", "bandwidth (4 MiB, fastest)", "ratio"):
        links.add_column(col, justify="right")
    for preset in args.presets.split(","):
        bits = LINK_PRESETS[preset][0]
        c = cluster_up(2, bits)
        for mpi in args.mpis.split(","):
            r = check_links(c, mpi, reps=40)
            links.add_row(preset, rate_text(bits), mpi, f"{r.latency_us:.1f} us", rate_text(int(r.measured_bits)),
                          f"{100 * r.ratio:.0f}%")
    cluster_down()
    console.print(links)


if __name__ == "__main__":
    main()
