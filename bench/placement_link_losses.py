#!/usr/bin/env python3
"""The emulated links' losses under the placement bench's job: dft with its arithmetic slept, 4 ranks
at 4 nodes x 1 and 2 nodes x 2, both MPIs, at 100 Mbit/s with 2 ms and 100 ms queues; per run the app's
wall time, the packets the links' tbf dropped (both ends of every node's link) and the nodes' TCP
retransmitted segments and retransmission timeouts.  Root; holds the cluster lock.

usage: placement_link_losses.py
"""

from __future__ import annotations

import re
import subprocess

from common import ROOT, on_emulated_cluster
from whatif_placement import launch_line

from scalewise.cluster.emulated import cluster_up
from scalewise.cluster.links import parse_rate

APP = ["--size", "small", "--compute", "sleep", "--iters", "5"]


def counters(c) -> tuple[int, int, int]:
    """Packets dropped by every link's tbf, TCP segments retransmitted and timeouts, summed over the nodes."""
    drops = retrans = timeouts = 0
    for n in c.nodes:
        ns = ["nsenter", "-t", str(n.pid), "-n", "--"]
        for argv in (["tc", "-s", "qdisc", "show", "dev", n.veth], ns + ["tc", "-s", "qdisc", "show", "dev", "eth0"]):
            out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
            drops += sum(int(x) for x in re.findall(r"dropped (\d+)", out))
        for line in subprocess.run(ns + ["nstat", "-az"], capture_output=True, text=True, check=True).stdout.splitlines():
            words = line.split()
            if len(words) >= 2 and words[0] == "TcpRetransSegs":
                retrans += int(words[1])
            elif len(words) >= 2 and words[0] == "TcpExtTCPTimeouts":
                timeouts += int(words[1])
    return drops, retrans, timeouts


def main() -> None:
    with on_emulated_cluster():
        print("| queue | placement | MPI | app wall | packets dropped | TCP segments retransmitted | retransmission timeouts |")
        print("|---|---|---|---|---|---|---|")
        for queue_us in (2_000, 100_000):
            for nodes in (4, 2):
                c = cluster_up(nodes, parse_rate("100mbit"), queue_us=queue_us, tcp_defaults=False)
                for flavour in ("openmpi", "mpich"):
                    # the placement bench's own 4-rank line
                    argv, env, _ = launch_line(c, flavour, [str(ROOT / "build" / flavour / "proxies" / "dft"), *APP])
                    before = counters(c)
                    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)
                    after = counters(c)
                    app = re.search(r"wall=([\d.]+) .*status=(\w+)", done.stdout)
                    if done.returncode != 0 or not app or app.group(2) != "PASS":
                        raise SystemExit(f"{' '.join(argv)}: exit {done.returncode}: {done.stderr[-300:]}")
                    d, r, t = (a - b for a, b in zip(after, before))
                    print(f"| {queue_us / 1000:g} ms | {nodes} x {4 // nodes} "
                          f"| {flavour} | {float(app.group(1)):.2f} s | {d:,} | {r:,} | {t} |", flush=True)


if __name__ == "__main__":
    main()
