#!/usr/bin/env python3
"""What-if accuracy on the emulated cluster: each proxy traced with one rank on
each of 2 emulated nodes at several link rates (and with both ranks on this
one machine), every link calibrated as `scalewise calibrate --cluster` does
(ranges, shaping with its measured payload share, collectives);
each trace is then predicted on every other link and compared with the run
of the same round measured there (wall time, MPI share).  A round runs every
app once in every place, the link reshaped in place between places.  Every
round's error is printed and summarised over all rounds; cells with a
held-out app or link rate (never used while the model was fitted or changed)
are summarised on their own.  Root; holds the cluster lock.  ``--tcp-defaults``: each MPI's own TCP
settings (`cluster up --tcp-defaults`); ``--no-duplex``: calibrations without the both-ways
exchanges (`calibrate --no-duplex`), as before calibrate measured them by default.  The last lines
replay the same rounds with each link's payload share from its fastest round trips (calibrate's median
ones are the term): what that term changes on the same runs.

usage: whatif_cluster.py [--apps sem,ocean,amr,dft] [--size small] [--rates 100mbit,1gbit,10gbit]
                         [--flavours openmpi,mpich] [--repeats 5] [--held-out ocean,amr,400mbit]
                         [--tcp-defaults] [--no-duplex]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

from common import ROOT, on_emulated_cluster
from scalewise.cluster.emulated import cluster_up
from scalewise.cluster.launching import pair_launcher
from scalewise.cluster.links import parse_rate, rate_text
from scalewise.launch.profiled import run_profiled
from scalewise.logfile.reader import read_profile
from scalewise.whatif import read_trace, replay
from scalewise.whatif.calibrate.pingpong import eager_limit, launch, payload_share
from scalewise.whatif.calibrate.collbench import calibrate_with_collectives
from scalewise.whatif.calibrate.measure import cluster_shaping
from scalewise.whatif.compare import compare, against_measured, measured_compute_scale
from scalewise.whatif.hostcost import host_costs

HERE = "1 node"  # both ranks on this machine, shared memory


FASTEST = "fastest"


def traced(flavour: str, argv: list[str], env: dict[str, str] | None, out: Path) -> tuple[Path, Path]:
    """Run one profiled, traced job; its log and trace."""
    with open(os.devnull, "w") as quiet:
        job = run_profiled(argv, out, flavour, base_env=env, job_stdout=quiet.fileno(), trace=True)
    if job.returncode != 0 or len(job.logs) != 1 or len(job.traces) != 1:
        raise SystemExit(f"{' '.join(argv)}: exit {job.returncode}, logs {job.logs}")
    return job.logs[0], job.traces[0]


def link_network(a, flavour: str, rate: str):
    """The link at ``rate`` as `calibrate --cluster` measures it: the ping-pong and the collectives
    between the first two of 2 emulated nodes (brought up, or reshaped, at that rate)."""
    c = cluster_up(2, parse_rate(rate), tcp_defaults=a.tcp_defaults)
    return calibrate_with_collectives(flavour, eager_limit(flavour, False), rate, "", reps=30, shaping=cluster_shaping(c),
                                      launcher=pair_launcher(c, flavour, "whatif_cluster"),
                                      measure_duplex=not a.no_duplex)


def calibrated(a, flavour: str) -> dict:
    """A network per link rate, measured with the ping-pong between the two nodes; beside each, under
    (rate, FASTEST), the same network with the payload share of the fastest round trips, as calibrate
    took it before round 5 (docs/decisions.md), to compare on the same runs."""
    nets = {}
    for rate in a.rates:
        cal = link_network(a, flavour, rate)
        s = cal.network.shaping
        nets[rate] = cal.network
        nets[(rate, FASTEST)] = cal.network.model_copy(update={"shaping": s.model_copy(
            update={"payload_share": round(payload_share(cal.points["best"], s), 4)})}) if s else cal.network
    return nets


def record_round(a, flavour: str, k: int, runs: dict, tmp: Path) -> None:
    """Round k: every app once on one node, then once on every link rate (reshaped in place), so each
    round's runs are minutes apart and a slow spell of this machine falls on sources and targets alike."""
    for app in a.apps:
        exe = [str(ROOT / "build" / flavour / "proxies" / app), "--size", a.size]
        cmd, env = launch(flavour, None, exe)
        runs.setdefault((HERE, app), []).append(traced(flavour, cmd, env, tmp / f"{flavour}-here-{app}-{k}"))
    for rate in a.rates:
        on_nodes = pair_launcher(cluster_up(2, parse_rate(rate), tcp_defaults=a.tcp_defaults), flavour, "whatif_cluster")
        for app in a.apps:
            exe = [str(ROOT / "build" / flavour / "proxies" / app), "--size", a.size]
            out = tmp / f"{flavour}-{rate}-{app}-{k}"
            runs.setdefault((rate, app), []).append(traced(flavour, *on_nodes(exe), out))


def _spread(walls: list[float]) -> float:
    return (max(walls) - min(walls)) / statistics.median(walls)


def replayed(tr, net, flavour: str, truth, host=None):
    """``tr`` replayed on ``net`` against the measured run ``truth``, beside the same replay given the
    measured run's compute (the network model's error alone)."""
    preds = replay(tr, [net], library=flavour, host=host)
    same = replay(tr, [net], library=flavour, host=host, compute_scale=measured_compute_scale(truth, preds[0]))
    return compare(preds, truth, same_compute=same)


def cells(a, flavour: str, runs: dict, nets: dict) -> list[dict]:
    """Every (source, target) pair: round k's source trace predicted on the target's calibrated link
    against round k's run measured there; every round's errors, and the round with the median wall
    error as the cell's secondary summary."""
    out = []
    for app in a.apps:
        for target in a.rates:
            measured = [read_profile(log) for log, _ in runs[(target, app)]]
            spread = _spread([float(p.ranks["wall"].max()) for p in measured])
            for source in (HERE, *a.rates):
                if source == target:
                    continue
                rounds = []
                for (source_log, trace), truth in zip(runs[(source, app)], measured):
                    tr = read_trace(trace)
                    host = host_costs(read_profile(source_log), tr.nranks)  # as `scalewise whatif` takes them
                    w = replayed(tr, nets[target], flavour, truth, host)
                    # without the host cost per message: what that term changes
                    without = against_measured(replayed(tr, nets[target], flavour, truth)).iloc[0]
                    # with the payload share of the fastest round trips
                    fastest = against_measured(replayed(tr, nets[(target, FASTEST)], flavour, truth, host)).iloc[0]
                    rounds.append((against_measured(w).iloc[0], w, without, fastest))
                by_error = sorted(rounds, key=lambda r: r[0]["wall_change"])
                e, w = by_error[len(by_error) // 2][:2]
                out.append({"mpi": flavour, "app": app, "source": source, "target": target,
                            "wall": float(e["wall_change"]), "share": float(e["mpi_share_points"]),
                            "rounds": [float(r[0]["wall_change"]) for r in rounds],
                            "round_shares": [float(r[0]["mpi_share_points"]) for r in rounds],
                            "rounds_same_compute": [float(r[0]["wall_change_same_compute"]) for r in rounds],
                            "rounds_without_host": [float(r[2]["wall_change"]) for r in rounds],
                            "rounds_same_compute_without_host": [float(r[2]["wall_change_same_compute"])
                                                                 for r in rounds],
                            "rounds_fastest_share": [float(r[3]["wall_change"]) for r in rounds],
                            "rounds_same_compute_fastest_share": [float(r[3]["wall_change_same_compute"])
                                                                  for r in rounds],
                            "held_out": bool({app, source, target} & set(a.held_out)),
                            "measured": w.summary.iloc[0], "predicted": w.summary.iloc[1], "spread": spread})
    return out


def summary(label: str, table: list[dict]) -> str:
    """Over every round of every cell: median absolute wall error, share within 15%, worst; MPI share
    within 10 points; then the cells' medians (secondary)."""
    walls = [w for c in table for w in c["rounds"]]
    shares = [p for c in table for p in c["round_shares"]]
    if not walls:
        return f"{label}: no cells"
    absolute = [abs(w) for w in walls]
    return (f"{label}: {len(table)} cells, {len(walls)} rounds; over all rounds: median absolute wall error "
            f"{100 * statistics.median(absolute):.1f}%, within 15% {sum(x <= 0.15 for x in absolute)} "
            f"({100 * sum(x <= 0.15 for x in absolute) / len(walls):.0f}%), worst {100 * max(walls, key=abs):+.1f}%, "
            f"MPI share within 10 points {sum(abs(p) <= 10 for p in shares)}; cells' medians within 15%: "
            f"{sum(abs(c['wall']) <= 0.15 for c in table)} of {len(table)}; given each run's measured compute: "
            f"median absolute wall error {100 * statistics.median(abs(w) for c in table for w in c['rounds_same_compute']):.1f}%")


# The variants every round is replayed with beside the model's own answer: their table key and name.
VARIANTS = {"without_host": "without the host cost per message",
            "fastest_share": "with the fastest round trips' payload share"}


def variant(label: str, table: list[dict], key: str) -> str:
    """The same rounds replayed as variant ``key`` (VARIANTS): median absolute wall error, within 15%,
    and given each run's measured compute."""
    walls = [abs(w) for c in table for w in c[f"rounds_{key}"]]
    same = [abs(w) for c in table for w in c[f"rounds_same_compute_{key}"]]
    if not walls:
        return f"{label}, {VARIANTS[key]}: no cells"
    return (f"{label}, the same runs {VARIANTS[key]}: median absolute wall error "
            f"{100 * statistics.median(walls):.1f}%, within 15% {sum(x <= 0.15 for x in walls)}; given each run's "
            f"measured compute: {100 * statistics.median(same):.1f}%")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--apps", default="sem,ocean,amr,dft", type=lambda s: s.split(","))
    ap.add_argument("--size", default="small")
    ap.add_argument("--rates", default="100mbit,1gbit,10gbit", type=lambda s: s.split(","))
    ap.add_argument("--flavours", default="openmpi,mpich", type=lambda s: s.split(","))
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--held-out", default="ocean,amr,400mbit", type=lambda s: s.split(","),
                    help="apps and link rates never used while fitting or changing the model")
    ap.add_argument("--tcp-defaults", action="store_true", help="each MPI's own TCP settings (cluster up --tcp-defaults)")
    ap.add_argument("--no-duplex", action="store_true", help="calibrate without the both-ways exchanges")
    a = ap.parse_args()
    table = []
    with on_emulated_cluster() as tmp:
        nets = {flavour: calibrated(a, flavour) for flavour in a.flavours}
        for flavour, by_rate in nets.items():
            for rate, net in by_rate.items():
                if isinstance(rate, tuple):
                    continue
                print(f"{flavour} {rate}: payload share {net.shaping.payload_share:.3f} (the fastest round trips': "
                      f"{by_rate[(rate, FASTEST)].shaping.payload_share:.3f}), duplex {net.duplex}, "
                      f"both_ways {net.both_ways}, doubts {net.doubts or 'none'}", flush=True)
        runs: dict[str, dict] = {flavour: {} for flavour in a.flavours}
        for k in range(a.repeats):
            for flavour in a.flavours:
                record_round(a, flavour, k, runs[flavour], Path(tmp))
            print(f"round {k + 1} of {a.repeats} recorded", flush=True)
        for flavour in a.flavours:
            table += cells(a, flavour, runs[flavour], nets[flavour])
    print("| MPI | app | recorded | predicted for | measured wall | predicted wall | wall error, every round "
          "| cell's median | measured MPI share | predicted | points | spread of the measured runs |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for c in table:
        m, p = c["measured"], c["predicted"]
        print(f"| {c['mpi']} | {c['app']}{' (held out)' if c['held_out'] else ''} | {c['source']} "
              f"| {rate_text(parse_rate(c['target']))} | {m['wall_time']:.3f} s | {p['wall_time']:.3f} s "
              f"| {', '.join(f'{100 * r:+.0f}%' for r in c['rounds'])} | {100 * c['wall']:+.1f}% "
              f"| {100 * m['mpi_share']:.1f}% | {100 * p['mpi_share']:.1f}% | {c['share']:+.1f} "
              f"| {100 * c['spread']:.0f}% |")
    print()
    print(summary("development set", [c for c in table if not c["held_out"]]))
    print(summary("held-out set", [c for c in table if c["held_out"]]))
    for key in VARIANTS:
        print(variant("development set", [c for c in table if not c["held_out"]], key))
        print(variant("held-out set", [c for c in table if c["held_out"]], key))
    return 0


if __name__ == "__main__":
    sys.exit(main())
