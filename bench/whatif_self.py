#!/usr/bin/env python3
"""What-if self-replay on the emulated cluster: each proxy run traced with one rank on each of 2
emulated nodes, then its own trace replayed on its own link's calibration (`scalewise calibrate
--cluster`: ranges, o by message size, shaping with the measured payload share, the link's
duplex, collectives with their per-call cost; each rank's host cost per message from the run's own log, as
`scalewise whatif` takes it), so the computation is the run's own and only the network model is tested.
The cluster's launches keep control messages apart from bulk data (cluster/launching.py) unless
``--tcp-defaults`` (each MPI's own TCP settings).  Every round's
error is printed (and beside it the same trace replayed with exchanges as fast as one way: no
`both_ways`), then a summary over all rounds.  Root; takes the cluster lock for each MPI and link in turn.

With ``--keep DIR`` each round's log and trace and each link's calibrated network (.yaml) are kept there,
to replay the same trace again with one term of the model changed.  ``--by-function`` prints, per round,
each MPI function's replayed time less its measured time and the replay's compute less the run's (ms
summed over the ranks): where the replay is short.  ``--tcp-counters`` reads each node's TCP counters
(its network namespace's /proc/PID/net/netstat and snmp) and its link's tbf drops before and after each
link's calibration and each run, and prints the differences beside the round's error.

usage: whatif_self.py [--apps sem,dft] [--rates 100mbit,1gbit] [--flavours openmpi,mpich] [--repeats 5] [--queue 2ms]
                      [--sending-queue 100ms]
                      [--tcp-defaults] [--keep DIR] [--by-function]
                      [--tcp-counters]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import shutil
import statistics
import sys
from pathlib import Path

import yaml
from common import ROOT, on_emulated_cluster
from scalewise.cluster.emulated import cluster_up
from scalewise.cluster.launching import launch_settings, pair_launcher
from scalewise.cluster.links import DEFAULT_QUEUE_US, parse_queue, parse_rate, queue_text, rate_text
from scalewise.launch.profiled import run_profiled
from scalewise.logfile.reader import read_profile
from scalewise.whatif import read_trace, replay
from scalewise.whatif.calibrate.pingpong import eager_limit
from scalewise.whatif.calibrate.collbench import calibrate_with_collectives
from scalewise.whatif.compare import against_measured, compare
from scalewise.whatif.hostcost import host_costs
from scalewise.whatif.calibrate.measure import cluster_shaping

ARGS = {"sem": ["--size", "small"], "dft": ["--size", "small", "--iters", "4"], "ocean": ["--size", "small"],
        "amr": ["--size", "small"]}


# (file, section, field): each node's losses and how its TCP recovered from them
TCP_COUNTERS = {"retrans": ("snmp", "Tcp", "RetransSegs"), "rto": ("netstat", "TcpExt", "TCPTimeouts"),
                "tlp": ("netstat", "TcpExt", "TCPLossProbes"), "fast": ("netstat", "TcpExt", "TCPFastRetrans"),
                "sack_rec": ("netstat", "TcpExt", "TCPSackRecovery"),
                # a retransmission the peer reports it had already (spurious), reordering seen, and the
                # receiver's own drops: where the retransmissions come from when no tbf dropped
                "dsack": ("netstat", "TcpExt", "TCPDSACKRecv"), "reorder": ("netstat", "TcpExt", "TCPSACKReorder"),
                "rcvq_drop": ("netstat", "TcpExt", "TCPRcvQDrop")}


def proc_counters(text: str) -> dict[tuple[str, str], int]:
    """A /proc net/netstat or net/snmp file's counters by (section, field): each section is a line of names
    followed by a line of values, both starting with "Section:"."""
    lines, out = text.splitlines(), {}
    for names, values in zip(lines[::2], lines[1::2]):
        n, v = names.split(), values.split()
        if not n or n[0] != v[0] or len(n) != len(v):
            raise ValueError(f"not a /proc counters file: {names[:40]!r} / {values[:40]!r}")
        out.update({(n[0].rstrip(":"), k): int(x) for k, x in zip(n[1:], v[1:])})
    return out


def tcp_counters(pid: int) -> dict[str, int]:
    """The TCP_COUNTERS of the network namespace process ``pid`` is in."""
    files = {f: proc_counters(Path(f"/proc/{pid}/net/{f}").read_text()) for f in ("netstat", "snmp")}
    return {name: files[f][(sec, field)] for name, (f, sec, field) in TCP_COUNTERS.items()}


def link_counters(c) -> list[dict[str, int]]:
    """Per node: its TCP counters and the packets its link's tbf dropped at each end: ``drops_out`` in
    the node's own eth0 (what it sends), ``drops_in`` at the host's end (what it is sent)."""
    out = []
    for n in c.nodes:
        drops = {}
        for end, argv in (("drops_out", ["nsenter", "-t", str(n.pid), "-n", "--", "tc", "-s", "qdisc", "show",
                                         "dev", "eth0"]),
                          ("drops_in", ["tc", "-s", "qdisc", "show", "dev", n.veth])):
            text = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
            drops[end] = sum(int(x) for x in re.findall(r"dropped (\d+)", text))
        out.append({**tcp_counters(n.pid), **drops})
    return out


def counters_text(before: list[dict[str, int]], after: list[dict[str, int]]) -> str:
    """What each node's counters did between two readings, node by node."""
    return "; ".join(f"node {i}: " + " ".join(f"{k} {a[k] - b[k]}" for k in a)
                     for i, (b, a) in enumerate(zip(before, after)))


def traced(flavour: str, line: tuple[list[str], dict[str, str]], out: Path) -> tuple[Path, Path]:
    with open(os.devnull, "w") as quiet:
        job = run_profiled(line[0], out, flavour, base_env=line[1], job_stdout=quiet.fileno(), trace=True)
    if job.returncode != 0 or len(job.logs) != 1 or len(job.traces) != 1:
        raise SystemExit(f"{' '.join(line[0])}: exit {job.returncode}, logs {job.logs}")
    return job.logs[0], job.traces[0]


def by_function(w) -> str:
    """Each MPI function's replayed time less its measured time, and the same for compute (ms, all ranks)."""
    f = w.functions.drop(index=[n for n in ("MPI_Init", "MPI_Init_thread", "MPI_Finalize") if n in w.functions.index])
    net = w.networks[0]
    parts = [f"{name} {1e3 * (row[net] - row['measured']):+.1f} of {1e3 * row['measured']:.1f}"
             for name, row in f.iterrows() if abs(row[net] - row["measured"]) >= 5e-4]
    s = w.summary
    parts.append(f"compute {1e3 * (s.loc[net, 'compute'] - s.loc['measured', 'compute']):+.1f} of "
                 f"{1e3 * s.loc['measured', 'compute']:.1f}")
    return "; ".join(parts)


def summary(errors: list[float]) -> str:
    absolute = [abs(e) for e in errors]
    return (f"{len(errors)} rounds: median absolute error {100 * statistics.median(absolute):.1f}%, "
            f"within 3%: {sum(a <= 0.03 for a in absolute)}, within 15%: {sum(a <= 0.15 for a in absolute)}, "
            f"worst {100 * max(errors, key=abs):+.1f}%")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--apps", default="sem,dft", type=lambda s: s.split(","))
    ap.add_argument("--rates", default="100mbit,1gbit", type=lambda s: s.split(","))
    ap.add_argument("--flavours", default="openmpi,mpich", type=lambda s: s.split(","))
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--reps", type=int, default=30, help="round trips per size in the calibration")
    ap.add_argument("--queue", type=parse_queue, default=DEFAULT_QUEUE_US, help="the links' queue (cluster up --queue)")
    ap.add_argument("--sending-queue", type=parse_queue,
                    help="the queue of each node's own sending end (cluster_up sending_queue_us); --queue's if not given")
    ap.add_argument("--tcp-defaults", action="store_true", help="each MPI's own TCP settings (cluster up --tcp-defaults)")
    ap.add_argument("--keep", type=Path, help="keep each round's log and trace and each link's network here")
    ap.add_argument("--by-function", action="store_true", help="print where each round's replay differs, by function")
    ap.add_argument("--tcp-counters", action="store_true",
                    help="print each node's TCP retransmissions and link drops during each calibration and run")
    a = ap.parse_args()
    if a.keep:
        a.keep.mkdir(parents=True, exist_ok=True)
    rows, everything = [], []
    print(f"links' queue: {queue_text(a.queue)}" + (f", {queue_text(a.sending_queue)} at each node's sending end"
                                                     if a.sending_queue is not None else ""), flush=True)
    for flavour in a.flavours:
        for rate in a.rates:
            with on_emulated_cluster() as tmp:  # the lock is let go between MPIs and links
                c = cluster_up(2, parse_rate(rate), queue_us=a.queue, tcp_defaults=a.tcp_defaults,
                               sending_queue_us=a.sending_queue)
                print(f"launches: {launch_settings(c)}", flush=True)
                on_nodes = pair_launcher(c, flavour, "whatif_self")
                counted = link_counters(c) if a.tcp_counters else None
                cal = calibrate_with_collectives(flavour, eager_limit(flavour, False), rate, "", reps=a.reps,
                                                 shaping=cluster_shaping(c), launcher=on_nodes)
                s = cal.network.shaping
                o_text = ", ".join(f"{b} B {o * 1e6:.1f} us" for b, o in (cal.overheads or {}).items())
                mean_one = ", ".join(f"{b >> 20} MiB {cal.points['mean'][b] / cal.points['best'][b]:.2f}"
                                     for b in (1 << 20, 4 << 20))
                print(f"{flavour} {rate}: payload share {s.payload_share:.3f}; o {o_text}; "
                      f"both ways / fastest one way, median exchange {cal.both_ways:.2f} (each launch "
                      f"{', '.join(f'{r:.2f}' for r in cal.both_ways_launches)}), mean exchange "
                      f"{', '.join(f'{r:.2f}' for r in cal.both_ways_means)}; {cal.network.duplex} duplex, "
                      f"both_ways {cal.network.both_ways}; one way, mean over fastest: {mean_one}; "
                      f"doubts {cal.doubts or 'none'}", flush=True)
                if counted:
                    counted, was = link_counters(c), counted
                    print(f"  {flavour} {rate} calibration: {counters_text(was, counted)}", flush=True)
                if a.keep:
                    (a.keep / f"{flavour}-{rate}.yaml").write_text(yaml.safe_dump(cal.network.model_dump()))
                for app in a.apps:
                    errs, shares, hosts, errs_plain = [], [], [], []
                    for k in range(a.repeats):
                        exe = [str(ROOT / "build" / flavour / "proxies" / app), *ARGS[app]]
                        counted = link_counters(c) if a.tcp_counters else None
                        log, trace = traced(flavour, on_nodes(exe), Path(tmp) / f"{flavour}-{rate}-{app}-{k}")
                        run_counts = counters_text(counted, link_counters(c)) if counted else ""
                        profile, tr = read_profile(log), read_trace(trace)
                        host = host_costs(profile, tr.nranks)
                        hosts.append(host.per_message.mean())
                        w = compare(replay(tr, [cal.network], library=flavour, host=host), profile)
                        e = against_measured(w).iloc[0]
                        errs.append(float(e["wall_change"]))
                        if a.by_function:
                            print(f"  {flavour} {app} {rate} round {k + 1}: {100 * errs[-1]:+.1f}%; replay less "
                                  f"measured, ms: {by_function(w)}", flush=True)
                        if run_counts:
                            print(f"  {flavour} {app} {rate} round {k + 1}: {100 * errs[-1]:+.1f}%; {run_counts}",
                                  flush=True)
                        if a.keep:
                            for f in (log, trace):
                                shutil.copy(f, a.keep / f"{flavour}-{rate}-{app}-{k}{''.join(f.suffixes)}")
                        # the same trace with exchanges as fast as one way (no both_ways), beside
                        plain = cal.network.model_copy(update={"both_ways": None})
                        w0 = compare(replay(tr, [plain], library=flavour, host=host), profile)
                        errs_plain.append(float(against_measured(w0).iloc[0]["wall_change"]))
                        shares.append(float(e["mpi_share_points"]))
                        measured = float(w.summary.iloc[0]["wall_time"])
                    rows.append((flavour, app, rate, measured, errs, shares, errs_plain))
                    everything += errs
                    print(f"{flavour} {app} {rate}: {', '.join(f'{100 * x:+.1f}%' for x in errs)}; without both_ways "
                          f"{', '.join(f'{100 * x:+.1f}%' for x in errs_plain)} (host cost per "
                          f"message, mean of the ranks: {', '.join(f'{h * 1e6:.1f} us' for h in hosts)})", flush=True)
    print("| MPI | app | link | measured wall (last round) | wall error, every round | median | "
          "MPI share points, every round | wall error without both_ways |")
    print("|---|---|---|---|---|---|---|---|")
    for flavour, app, rate, measured, errs, shares, plain in rows:
        print(f"| {flavour} | {app} | {rate_text(parse_rate(rate))} | {measured:.3f} s "
              f"| {', '.join(f'{100 * x:+.1f}%' for x in errs)} | {100 * statistics.median(errs):+.1f}% "
              f"| {', '.join(f'{x:+.1f}' for x in shares)} | {', '.join(f'{100 * x:+.1f}%' for x in plain)} |")
    print(f"\nall {summary(everything)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
