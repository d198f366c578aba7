#!/usr/bin/env python3
"""What-if placement on the emulated cluster: each proxy traced at 4 ranks on one emulated node
(shared memory), predicted for 2 nodes x 2 ranks and 4 nodes x 1 rank (with --ranks 2: traced at
2 ranks on one node, predicted for 2 nodes x 1 rank, a core for every rank on a 2-core host) (`whatif --ranks-per-node`,
by slot: the messages inside a node costed with the shared-memory network `scalewise calibrate`
fits on this host, those between nodes with the link as `calibrate --cluster` fits it) and
compared with the job run at those placements in the same round (wall time, MPI share).  Every
run's ranks are checked to sit on the nodes the prediction places them on.  A round runs every
app once at every placement.  Every round's error is printed with the replay given the measured
run's compute beside it (the network model's error alone), then a summary over all rounds.
Root; holds the cluster lock.

usage: whatif_placement.py [--ranks 4] [--apps sem,ocean,dft] [--size small] [--rate 1gbit]
                           [--flavours openmpi,mpich] [--repeats 3] [--app-args "..."]
                           [--tcp-defaults] [--no-duplex] [--no-peers] [--peer-msgs 8] [--queue 2ms] [--mpich-yield-after N]
                           [--shm-on-one-core | --local-on-node] [--shm-statistic best] [--idle-sleep-us US]
                           [--args-for APP="..."] [--paired] [--by-function]

--app-args adds options to every app's line, e.g. "--compute sleep" (dft: the same messages with
the arithmetic slept, so that 4 ranks do not need 4 cores; docs/decisions.md); --args-for adds options
to one app's line only (dft="--compute sleep --iters 5").  --idle-sleep-us makes every launch of the bench
(the runs, both calibrations) one whose waiting ranks sleep that long instead of polling
(SCALEWISE_IDLE_SLEEP_US, runtime/compat/idle_sleep.c).  Beside each cell: the measured runs' CPU, the
ranks' user and system time and the host's softirq time over the run, as a share of the host's cores
times the wall (whether the ranks' real work fits the cores), the machine's steal time over the same (cores
the hypervisor took away), and with --by-function, per round, each MPI function's replayed time less its
measured time.  Each round's one-node trace is also replayed against the next round's one-node run: a
control, what the runs' own differences make of a prediction with no change of placement.  --local-on-node calibrates the network of messages
inside a node with its 2 ranks on one emulated node as the cluster launches them, not on this host: Debian's
MPICH 4.0 has no shared memory of its own there (UCX kept to TCP on the nodes), and the host's calibration
measures UCX's shared memory, which no run on the nodes uses.  Beside each placement: the replay with the
traced run's host cost per message, as `scalewise whatif` replays it.  The one-node trace against its own
run is replayed with that run's host cost, inside the node where it was measured (and printed without it).
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import sys
from pathlib import Path

from common import ROOT, on_emulated_cluster
from whatif_cluster import link_network, summary, traced
from whatif_self import by_function
from scalewise.cluster import cluster_down
from scalewise.cluster.emulated import cluster_up
from scalewise.cluster.launching import cluster_launch
from scalewise.cluster.links import DEFAULT_QUEUE_US, parse_queue, parse_rate, rate_text
from scalewise.errors import ScalewiseError
from scalewise.launch.mpirun import MPICH_RUN, OPENMPI_RUN, two_ranks
from scalewise.logfile.reader import read_profile
from scalewise.whatif import read_trace, replay
from scalewise.whatif.api import nodes_of
from scalewise.whatif.calibrate.collbench import calibrate_with_collectives
from scalewise.whatif.calibrate.peers import PEER_MSGS, measure_peers
from scalewise.launch.preload import IDLE_SLEEP, YIELD_AFTER_IDLE_POLLS, idle_sleep_us
from scalewise.whatif.calibrate.pingpong import PairCommand, eager_limit, launch
from scalewise.whatif.compare import against_measured, compare, measured_compute_scale
from scalewise.whatif.hostcost import host_costs

RANKS = 4  # the default job
HERE = "1 node"  # the recorded placement: every rank on one emulated node
# per job size, placement -> emulated nodes (the ranks spread evenly, by slot)
PLACEMENTS = {4: {HERE: 1, "2 x 2": 2, "4 x 1": 4},
              2: {HERE: 1, "2 x 1": 2}}  # a core for each rank at every placement on this 2-core host
YIELD = "SCALEWISE_YIELD_WHEN_IDLE"  # set by MPICH's launches on nodes with more ranks than cores
PLACEMENT = "slot"  # how the launchers fill a hostfile of N slots per node: ranks 0..N-1 on the first node


def launch_line(c, flavour: str, exe: list[str], yield_after: int | None = None,
                ranks: int = RANKS) -> tuple[list[str], dict[str, str], int]:
    """The job of ``ranks`` across ``c``'s nodes, as `scalewise run --cluster` launches it; ranks per node.
    ``yield_after``: MPICH's idle polls before a yield where the launch yields (the launch's own 64
    when None; runtime/compat/mpich_ucx.c)."""
    words = [OPENMPI_RUN, "-np", str(ranks)] if flavour == "openmpi" else [MPICH_RUN, "-n", str(ranks)]
    line = cluster_launch(c, [*words, *exe], flavour=flavour)
    if yield_after is not None and YIELD in line.env:
        line.env[YIELD] = str(yield_after)
    return line.argv, line.env, line.ranks_per_node


def check_placement(log: Path, hostnames: list[str], per_node: int, ranks: int = RANKS) -> None:
    """Each rank of the measured run on the node the prediction puts it on; the bench stops otherwise."""
    got = read_profile(log).ranks.set_index("rank")["host"].sort_index().tolist()
    if len(got) != ranks:
        raise SystemExit(f"{log}: {len(got)} ranks, the job has {ranks}")
    want = [hostnames[n] for n in nodes_of(ranks, per_node, PLACEMENT)]
    if got != want:
        raise SystemExit(f"{log}: ranks on {got}, the prediction assumes {want} (by {PLACEMENT})")


def app_line(a, flavour: str, app: str) -> list[str]:
    """The app's own command line, the bench's --app-args and its own --args-for after its size (the pairs as parsed, or a dict)."""
    return [str(ROOT / "build" / flavour / "proxies" / app), "--size", a.size, *a.app_args, *dict(a.args_for).get(app, [])]


def host_seconds() -> tuple[float, float]:
    """The host's softirq time (the kernel's TCP and veth work) and steal time (what the hypervisor ran
    instead of this virtual machine's cores) so far, each summed over its cores (/proc/stat)."""
    with open("/proc/stat") as f:
        fields = f.readline().split()
    return int(fields[7]) / os.sysconf("SC_CLK_TCK"), int(fields[8]) / os.sysconf("SC_CLK_TCK")


def cpu_share(log: Path, softirq: float, steal: float = 0.0) -> tuple[float, float, int, float]:
    """The run's ranks' user and system time, and the host's softirq time, each over the host's cores times
    the run's wall (near 1 together: the ranks' real work did not fit the cores), the ranks' voluntary
    context switches (a rank that sleeps while it waits makes one a sleep; one that polls, few), and the
    steal time over the same (cores the hypervisor took away: the ranks ran slower without knowing it)."""
    r = read_profile(log).ranks
    ranks_cpu = float((r["cpu_user"].astype(float) + r["cpu_sys"].astype(float)).sum())
    cores_wall = len(os.sched_getaffinity(0)) * float(r["wall"].max())
    return ranks_cpu / cores_wall, softirq / cores_wall, int(r["nvcsw"].astype(float).sum()), steal / cores_wall


def record_round(a, k: int, runs: dict, tmp: Path) -> None:
    """Round k: every app of every MPI once at each placement (one cluster shape after the other; with
    --paired, each app's runs at every placement one after the other, the cluster reshaped between them)."""
    order = ([(place, flavour, app) for flavour in a.flavours for app in a.apps for place in a.nodes] if a.paired
             else [(place, flavour, app) for place in a.nodes for flavour in a.flavours for app in a.apps])
    c = None
    for place, flavour, app in order:
        nodes = a.nodes[place]
        if c is None or len(c.nodes) != nodes:
            c = cluster_up(nodes, parse_rate(a.rate), queue_us=a.queue, tcp_defaults=a.tcp_defaults)
        exe = app_line(a, flavour, app)
        argv, env, per_node = launch_line(c, flavour, exe, a.mpich_yield_after, a.ranks)
        before = host_seconds()
        log, trace = traced(flavour, argv, env, tmp / f"{flavour}-{nodes}-{app}-{k}")
        check_placement(log, c.hostnames, per_node, a.ranks)
        runs.setdefault((flavour, place, app), []).append((log, trace))
        after = host_seconds()
        a.cpu[(flavour, place, app, k)] = cpu_share(log, after[0] - before[0], after[1] - before[1])


def _spread(walls: list[float]) -> float:
    return (max(walls) - min(walls)) / statistics.median(walls)


def _row(e, w, rounds: list, **extra) -> dict:
    return {"wall": float(e["wall_change"]), "share": float(e["mpi_share_points"]),
            "rounds": [float(r[0]["wall_change"]) for r in rounds],
            "round_shares": [float(r[0]["mpi_share_points"]) for r in rounds],
            "measured": w.summary.iloc[0], "predicted": w.summary.iloc[1], **extra}


def cells(a, flavour: str, runs: dict, link, shm) -> list[dict]:
    """Round k's one-node trace predicted at each placement against round k's run measured there; beside
    it the same replay given the measured run's compute, the replay without placement (every rank on a
    node of its own), and the change from one node, measured and predicted.  First, per app, the trace
    replayed at its own placement (all its ranks on shared memory) against its own run, and against the next
    round's run there (a control: what the runs' own differences alone make of a prediction)."""
    out = []
    for app in a.apps:
        recorded = runs[(flavour, HERE, app)]
        own, alone, no_host = [], [], []
        for log, trace in recorded:
            tr, prof = read_trace(trace), read_profile(log)
            on_node = dict(library=flavour, ranks_per_node=a.ranks, local=shm)
            # as `scalewise whatif` replays it: the run's host cost, a one-node run's, inside the node
            [p] = replay(tr, [shm], **on_node, host=host_costs(prof, tr.nranks))
            w = compare([p], prof)
            own.append((against_measured(w).iloc[0], w))
            alone.append(p.wall_time)
            [plain] = replay(tr, [shm], **on_node)
            no_host.append(plain.wall_time / float(w.summary.iloc[0]["wall_time"]) - 1)
        for k, (_, w) in enumerate(own):
            if a.by_function:
                print(f"{flavour} {app} {HERE} (its own run) round {k + 1}, replayed less measured, ms: "
                      f"{by_function(w)}", flush=True)
        print(f"{flavour} {app} {HERE}, its own run without the host cost inside the node: {pct(no_host)}",
              flush=True)
        e, w = sorted(own, key=lambda r: r[0]["wall_change"])[len(own) // 2]
        walls = [float(r[1].summary.iloc[0]["wall_time"]) for r in own]
        next_run = [alone[k] / walls[(k + 1) % len(walls)] - 1 for k in range(len(walls))]
        print(f"{flavour} {app} {HERE}: each round's trace against the next round's run there: {pct(next_run)}",
              flush=True)
        # its own run: the trace's compute is the measured run's, so "at the measured compute" is the same
        out.append(_row(e, w, own, mpi=flavour, app=app, source=HERE, target=f"{HERE} (its own run)", own=True,
                        rounds_same_compute=[float(r[0]["wall_change"]) for r in own],
                        cpu=[a.cpu[(flavour, HERE, app, k)] for k in range(len(own))], next_run=next_run,
                        spread=_spread(walls)))
        for target, nodes in a.nodes.items():
            if target == HERE:
                continue
            measured = [read_profile(log) for log, _ in runs[(flavour, target, app)]]
            rounds = []
            for (log_here, trace), truth, (_, w_here), p_here in zip(recorded, measured, own, alone):
                tr = read_trace(trace)
                placed = dict(ranks_per_node=a.ranks // nodes, placement=PLACEMENT, local=shm)
                preds = replay(tr, [link], library=flavour, **placed)
                same = replay(tr, [link], library=flavour, **placed,
                              compute_scale=measured_compute_scale(truth, preds[0]))
                [apart] = replay(tr, [link], library=flavour)
                [plain] = replay(tr, [link.model_copy(update={"both_ways_peers": None})], library=flavour, **placed)
                # as `scalewise whatif` replays it: each rank's host cost per message from the traced run's log
                [hosted] = replay(tr, [link], library=flavour, **placed, host=host_costs(read_profile(log_here), tr.nranks))
                w = compare(preds, truth, same_compute=same)
                m_wall, m_here = float(w.summary.iloc[0]["wall_time"]), float(w_here.summary.iloc[0]["wall_time"])
                rounds.append((against_measured(w).iloc[0], w, apart.wall_time / m_wall - 1,
                               (m_wall / m_here - 1, preds[0].wall_time / p_here - 1), plain.wall_time / m_wall - 1,
                               hosted.wall_time / m_wall - 1))
            for k, r in enumerate(rounds):
                if a.by_function:
                    print(f"{flavour} {app} {target} round {k + 1}, replayed less measured, ms: {by_function(r[1])}",
                          flush=True)
            e, w, *_ = sorted(rounds, key=lambda r: r[0]["wall_change"])[len(rounds) // 2]
            out.append(_row(e, w, rounds, mpi=flavour, app=app, source=HERE, target=target,
                            rounds_same_compute=[float(r[0]["wall_change_same_compute"]) for r in rounds],
                            apart=[r[2] for r in rounds], change=[r[3] for r in rounds],
                            without_peers=[r[4] for r in rounds], with_host=[r[5] for r in rounds],
                            cpu=[a.cpu[(flavour, target, app, k)] for k in range(len(rounds))],
                            spread=_spread([float(p.ranks["wall"].max()) for p in measured])))
    return out


def pair_on_one_core(a, flavour: str) -> PairCommand:
    """The shared-memory calibration's 2 ranks on one of this host's cores, yielding when idle as the
    bench's launches do on nodes with more ranks than cores: what a message inside a node costs when
    its 2 ranks share a core, as at 1 node x 4 ranks on 2 cores and at 2 x 2 on one core per node.
    Debian's MPICH 4.0 (ch4:ucx, no ch4 shared memory) hands messages inside a node to UCX, which sends a
    large one by rendezvous and copies it once (CMA, the receiver's process_vm_readv): the receiver must
    run to take the request and the sender to see it done; Open MPI's receiver copies by CMA too."""
    def launcher(argv: list[str]) -> tuple[list[str], dict[str, str]]:
        cmd, env = launch(flavour, None, argv)
        if flavour == "mpich":
            env[YIELD] = str(a.mpich_yield_after or YIELD_AFTER_IDLE_POLLS)
        else:  # one core for 2 ranks: oversubscribed, as the cluster's launches say it
            env["OMPI_MCA_mpi_yield_when_idle"] = "1"
            cmd = [cmd[0], "--oversubscribe", *cmd[1:]]
        return ["taskset", "-c", str(min(os.sched_getaffinity(0))), *cmd], env
    return launcher


def pair_on_node(c, flavour: str) -> PairCommand:
    """The local network's calibration with its 2 ranks on the first emulated node of ``c``, launched as the
    cluster launches a job's ranks there: what carries a message inside a node of this cluster.  For Open
    MPI that is its shared memory (vader), as on the host; Debian's MPICH 4.0 (ch4:ucx, no ch4 shared
    memory) is kept to UCX's TCP on the nodes (UCX_TLS=tcp,self: UCX's shared memory would join nodes that
    share this machine's memory), so its ranks of one node talk over TCP inside the node, not through the
    shared memory a calibration on the host measures."""
    def launcher(argv: list[str]) -> tuple[list[str], dict[str, str]]:
        line = cluster_launch(c, [*two_ranks(flavour), *argv], flavour=flavour)
        if line.ranks_per_node != 2:
            raise SystemExit(f"the local calibration's launch puts {line.ranks_per_node} ranks on a node, not 2")
        return line.argv, line.env
    return launcher


def local_network(a, flavour: str, node=None):
    """The network of messages inside a node: `scalewise calibrate` on this host (the 2 ranks on one core
    with --shm-on-one-core), or with ``node`` (a cluster) on its first node, as its launches run them."""
    launcher = pair_on_node(node, flavour) if node is not None else (
        pair_on_one_core(a, flavour) if a.shm_on_one_core else None)
    return calibrate_with_collectives(flavour, eager_limit(flavour, True), f"shm-{flavour}", "", reps=30,
                                      statistic=a.shm_statistic, launcher=launcher).network


def calibrate(a) -> tuple[dict, dict]:
    """Per MPI, the link between two emulated nodes and shared memory on this host (2 ranks each; on
    one core with --shm-on-one-core; on one emulated node with --local-on-node)."""
    links, shms = {}, {}
    cluster_up(2, parse_rate(a.rate), queue_us=a.queue, tcp_defaults=a.tcp_defaults)  # link_network keeps its queue
    for flavour in a.flavours:
        links[flavour] = link_network(a, flavour, a.rate).network  # link_network gives the whole calibration
    if not a.no_peers and max(a.nodes.values()) >= 3:
        # exchanges with several nodes at once, on the 4 nodes of 4 x 1 (calibrate --cluster's way); with
        # 2 nodes a rank's messages leave for one node only, and the replay has no use for the term
        c = cluster_up(4, parse_rate(a.rate), queue_us=a.queue, tcp_defaults=a.tcp_defaults)
        for flavour in a.flavours:
            if links[flavour].duplex == "full":
                peers, fan_in, exchange = measure_peers(c, flavour, links[flavour].shaping, msgs=a.peer_msgs)
                links[flavour] = links[flavour].model_copy(update={"both_ways_peers": peers})
                print(f"{flavour} both_ways_peers {peers}; median seconds, k senders alone: "
                      f"{[round(statistics.median(fan_in[k]), 4) for k in sorted(fan_in)]}, the all-to-all of k+1: "
                      f"{[round(statistics.median(exchange[k]), 4) for k in sorted(exchange)]}", flush=True)
    node = cluster_up(1, parse_rate(a.rate), queue_us=a.queue, tcp_defaults=a.tcp_defaults) if a.local_on_node else None
    for flavour in a.flavours:
        shms[flavour] = local_network(a, flavour, node)
    cluster_down()
    for flavour in a.flavours:
        local = "inside a node (one emulated node)" if a.local_on_node else "shared memory"
        for what, net in (("link", links[flavour]), (local, shms[flavour])):
            ranges = "; ".join(f"up to {r.upto:g} B: L {r.latency_us:.2f} us, o {r.overhead_us:.2f} us, "
                               f"{r.bandwidth_gbit_s:.2f} Gbit/s" for r in net.ranges)
            print(f"{flavour} {what}: {ranges}; eager limit {net.eager_limit} B, doubts {net.doubts or 'none'}",
                  flush=True)
    return links, shms


def pct(xs: list[float]) -> str:
    return ", ".join(f"{100 * x:+.0f}%" for x in xs)


def _queue(text: str) -> int:
    try:
        return parse_queue(text)
    except ScalewiseError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _polls(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"--mpich-yield-after: '{text}' is not a count of polls (1 or more)")
    return int(text)


def _msgs(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"--peer-msgs: '{text}' is not a count of messages (1 or more)")
    return int(text)


def _sleep_us(text: str) -> str:
    try:
        idle_sleep_us({IDLE_SLEEP: text})
    except ScalewiseError as e:
        raise argparse.ArgumentTypeError(f"--idle-sleep-us: {e}") from None
    return text


def _args_for(text: str) -> tuple[str, list[str]]:
    app, eq, words = text.partition("=")
    if not eq or not app:
        raise argparse.ArgumentTypeError(f"--args-for: '{text}' is not APP=\"options\"")
    return app, shlex.split(words)


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, choices=sorted(PLACEMENTS), default=RANKS,
                    help="the job's ranks: 4 (1 node, 2 x 2, 4 x 1) or 2 (1 node, 2 x 1: a core for every rank "
                         "on this 2-core host)")
    ap.add_argument("--apps", default="sem,ocean,dft", type=lambda s: s.split(","),
                    help="amr is left out by default: Open MPI took 111 s for it at 4 ranks on one emulated node")
    ap.add_argument("--size", default="small")
    ap.add_argument("--rate", default="1gbit")
    ap.add_argument("--flavours", default="openmpi,mpich", type=lambda s: s.split(","))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--app-args", default=[], type=shlex.split,
                    help='options added to every app\'s line, e.g. "--compute sleep --iters 4" (dft)')
    ap.add_argument("--tcp-defaults", action="store_true", help="each MPI's own TCP settings (cluster up --tcp-defaults)")
    ap.add_argument("--no-duplex", action="store_true", help="calibrate without the both-ways exchanges")
    ap.add_argument("--no-peers", action="store_true",
                    help="calibrate without the exchanges with several nodes at once (both_ways_peers)")
    ap.add_argument("--peer-msgs", type=_msgs, default=PEER_MSGS,
                    help="messages of 256 KiB each node sends each peer in the both_ways_peers calibration "
                         "(calibrate's 8 by default; 1: one burst a pair, as dft's Alltoallv)")
    ap.add_argument("--queue", type=_queue, default=DEFAULT_QUEUE_US,
                    help="how long a packet may wait in a link's queue (cluster up --queue), e.g. 100ms")
    ap.add_argument("--mpich-yield-after", type=_polls, default=None, metavar="N",
                    help="MPICH's idle polls before it yields its core on a node with more ranks than cores "
                         "(the launch's own 64 by default); 1 yields at every idle poll")
    where = ap.add_mutually_exclusive_group()  # where the local calibration's 2 ranks run
    where.add_argument("--shm-on-one-core", action="store_true",
                    help="calibrate shared memory with its 2 ranks on one core, yielding when idle, as the "
                         "placements' ranks share cores (2 ranks a core at 1 node and at 2 x 2 on this host)")
    where.add_argument("--local-on-node", action="store_true",
                    help="calibrate the network of messages inside a node with its 2 ranks on one emulated node, "
                         "launched as the cluster launches them (MPICH 4.0 there: UCX's TCP inside the node), "
                         "instead of on this host")
    ap.add_argument("--shm-statistic", choices=("best", "median", "mean"), default="best",
                    help="which of the shared-memory calibration's repetitions it fits (calibrate's fastest by "
                         "default); on a shared core the fastest round trip is one no switch between the ranks delayed")
    ap.add_argument("--idle-sleep-us", type=_sleep_us, default=None, metavar="US",
                    help="every launch's waiting ranks sleep US microseconds at each idle poll instead of polling "
                         "(SCALEWISE_IDLE_SLEEP_US: the runs and both calibrations); unset: they poll")
    ap.add_argument("--args-for", type=_args_for, action="append", default=[], metavar='APP="..."',
                    help='options added to one app\'s line, e.g. dft="--compute sleep --iters 5"')
    ap.add_argument("--paired", action="store_true",
                    help="run each app at every placement one after the other (the cluster reshaped between), so "
                         "that the trace and the runs it predicts are seconds apart, not all the apps' runs apart")
    ap.add_argument("--by-function", action="store_true",
                    help="print, per cell and round, each MPI function's replayed time less its measured time")
    return ap


def main() -> int:
    a = parser().parse_args()
    a.args_for = dict(a.args_for)
    a.nodes = PLACEMENTS[a.ranks]
    a.cpu = {}  # (flavour, placement, app, round) -> the run's CPU over the host's cores x wall
    if a.idle_sleep_us is not None:
        os.environ[IDLE_SLEEP] = a.idle_sleep_us  # every launch below reads it (preload.with_idle_sleep)
    else:
        os.environ.pop(IDLE_SLEEP, None)
    print(f"{a.ranks} ranks, placements {', '.join(a.nodes)}; waiting ranks: {'sleep ' + a.idle_sleep_us + ' us' if idle_sleep_us(os.environ) else 'poll'}", flush=True)
    table = []
    with on_emulated_cluster() as tmp:
        links, shms = calibrate(a)
        runs: dict = {}
        for k in range(a.repeats):
            record_round(a, k, runs, Path(tmp))
            print(f"round {k + 1} of {a.repeats} recorded (load {os.getloadavg()[0]:.2f})", flush=True)
        for flavour in a.flavours:
            table += cells(a, flavour, runs, links[flavour], shms[flavour])
    print(f"| MPI | app | predicted for ({rate_text(parse_rate(a.rate))}) | measured wall | predicted wall "
          "| wall error, every round | at the measured compute | with the traced run's host cost | without both_ways_peers | every rank on its own node "
          "| change from 1 node, measured / predicted | measured MPI share | predicted | points, every round "
          "| spread of the measured runs | CPU over cores x wall (ranks + softirq), every round "
          "| the ranks' voluntary switches, every round | steal over cores x wall, every round |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for c in table:
        m, p = c["measured"], c["predicted"]
        placed = not c.get("own")
        print(f"| {c['mpi']} | {c['app']} | {c['target']} | {m['wall_time']:.3f} s | {p['wall_time']:.3f} s "
              f"| {pct(c['rounds'])} | {pct(c['rounds_same_compute'])} | {pct(c['with_host']) if placed else ''} "
              f"| {pct(c['without_peers']) if placed else ''} "
              f"| {pct(c['apart']) if placed else ''} "
              f"| {', '.join(f'{100 * x:+.0f}% / {100 * y:+.0f}%' for x, y in c['change']) if placed else ''} "
              f"| {100 * m['mpi_share']:.1f}% | {100 * p['mpi_share']:.1f}% "
              f"| {', '.join(f'{x:+.1f}' for x in c['round_shares'])} | {100 * c['spread']:.0f}% "
              f"| {', '.join(f'{100 * x[0]:.0f}+{100 * x[1]:.0f}%' for x in c['cpu'])} "
              f"| {', '.join(str(x[2]) for x in c['cpu'])} | {', '.join(f'{100 * x[3]:.1f}%' for x in c['cpu'])} |")
    print()
    placed = [c for c in table if not c.get("own")]
    print(summary(f"{HERE}, replayed against its own run", [c for c in table if c.get("own")]))
    other = [x for c in table if c.get("own") for x in c["next_run"]]
    print(f"{HERE}, each round's trace against the next round's run there (the runs' own differences): median "
          f"absolute wall error {100 * statistics.median(abs(x) for x in other):.1f}%, within 15% "
          f"{sum(abs(x) <= 0.15 for x in other)} of {len(other)}, worst {100 * max(other, key=abs):+.1f}%")
    for target in a.nodes:
        if target != HERE:
            print(summary(f"recorded on {HERE}, predicted for {target}", [c for c in placed if c["target"] == target]))
    if len(a.nodes) > 2:
        print(summary("both placements", placed))
    hosted = [abs(x) for c in placed for x in c["with_host"]]
    print(f"the placements with the traced run's host cost (as `scalewise whatif`): median absolute wall error "
          f"{100 * statistics.median(hosted):.1f}%, within 15% {sum(x <= 0.15 for x in hosted)} of {len(hosted)}, "
          f"worst {100 * max((x for c in placed for x in c['with_host']), key=abs):+.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
