#!/usr/bin/env python3
"""Fan-in on the emulated cluster's links: the payload rate delivered into one node's link when
k = 1..nodes-1 senders on other nodes send to it at once (proxies/fanin, one rank a node), and
the all-to-all of all the nodes, per MPI, link rate and queue; the rate as a share of k = 1's.
Per case the median over the repetitions (each after a slept pause, as dft's transposes follow a
compute) and, with --ss, the receiving node's TCP sockets (`ss -tin`) sampled mid-run.
Root; holds the cluster lock.

usage: fanin_links.py [--rates 100mbit,1gbit] [--queues 100ms,2ms] [--flavours openmpi,mpich]
                      [--bytes 262144] [--msgs 1,8] [--reps 5] [--nodes 4] [--ss] [--pause-ms 100]
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import time

from common import ROOT, on_emulated_cluster

from scalewise.cluster.emulated import cluster_up
from scalewise.cluster.links import parse_queue, parse_rate
from scalewise.launch.mpirun import MPICH_RUN, OPENMPI_RUN
from scalewise.cluster.launching import cluster_launch


def line_for(c, flavour: str, exe: list[str]) -> tuple[list[str], dict[str, str]]:
    """A job of one rank on every node of ``c``."""
    words = [OPENMPI_RUN, "-np", str(len(c.nodes))] if flavour == "openmpi" else [MPICH_RUN, "-n", str(len(c.nodes))]
    line = cluster_launch(c, [*words, *exe], flavour=flavour)
    return line.argv, line.env


def sockets(c, after: float) -> str:
    """Node 0's TCP sockets with data in flight, ``after`` seconds into the run."""
    time.sleep(after)
    out = subprocess.run(["nsenter", "-t", str(c.nodes[0].pid), "-n", "--", "ss", "-tin", "state", "established"],
                         capture_output=True, text=True).stdout
    keep = []
    for line in out.splitlines():
        m = [re.search(p, line) for p in (r"cwnd:(\d+)", r" rtt:([\d.]+)", r"delivery_rate (\S+)", r"bytes_received:(\d+)",
                                           r"rcv_space:(\d+)", r"send (\S+)")]
        if m[0] and m[3] and int(m[3].group(1)) > 1_000_000:
            keep.append("cwnd {} rtt {} ms delivery {} rcv_space {}".format(
                *(x.group(1) if x else "-" for x in (m[0], m[1], m[2], m[4]))))
    return "; ".join(keep) or "(none)"


def one(c, flavour: str, exe, k: int, size: int, msgs: int, reps: int, all_to_all: bool, ss: bool,
        pause_ms: int = 100) -> tuple[float, list[float], str]:
    args = [str(exe), str(k), str(size), str(msgs), str(reps), str(pause_ms)] + (["--all"] if all_to_all else [])
    argv, env = line_for(c, flavour, args)
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen = sockets(c, 1.5) if ss else ""
    out, err = proc.communicate(timeout=600)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)}: exit {proc.returncode}: {err[-300:]}")
    rates = [float(x) for x in re.findall(r"mbit_in=([\d.]+)", out)]
    return statistics.median(rates), rates, seen


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rates", default="100mbit,1gbit")
    p.add_argument("--queues", default="100ms,2ms")
    p.add_argument("--flavours", default="openmpi,mpich")
    p.add_argument("--bytes", type=int, default=262_144)
    p.add_argument("--msgs", default="1,8")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--nodes", type=int, default=4)
    p.add_argument("--ss", action="store_true")
    p.add_argument("--pause-ms", type=int, default=100, help="slept before each repetition (dft: about 10 ms of compute a transpose)")
    a = p.parse_args()
    flavours = a.flavours.split(",")
    with on_emulated_cluster():
        exes = {f: ROOT / "build" / f / "proxies" / "fanin" for f in flavours}
        print("| MPI | rate | queue | msgs of a sender | case | payload Mbit/s into node 0, median | share of k=1 | every rep | node 0's sockets |")
        print("|---|---|---|---|---|---|---|---|---|")
        for rate in a.rates.split(","):
            for queue in a.queues.split(","):
                c = cluster_up(a.nodes, parse_rate(rate), queue_us=parse_queue(queue), tcp_defaults=False)
                for flavour in flavours:
                    for msgs in (int(m) for m in a.msgs.split(",")):
                        base = None
                        cases = [(k, False) for k in range(1, a.nodes)] + [(k, True) for k in range(1, a.nodes)]
                        for k, all_to_all in cases:
                            med, reps, seen = one(c, flavour, exes[flavour], k, a.bytes, msgs, a.reps, all_to_all, a.ss, a.pause_ms)
                            base = base or med
                            what = f"all-to-all of {k + 1}" if all_to_all else f"k={k}"
                            print(f"| {flavour} | {rate} | {queue} | {msgs} x {a.bytes:,} B | {what} | {med:.1f} | "
                                  f"{med / base:.3f} | {', '.join(f'{r:.0f}' for r in reps)} | {seen if a.ss else ''} |",
                                  flush=True)
    sys.exit(0)


if __name__ == "__main__":
    main()
