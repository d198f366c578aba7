#!/usr/bin/env python3
"""What-if accuracy on the emulated cluster: each proxy traced with one rank on
each of 2 emulated nodes at several link rates (and with both ranks on this
one machine), every link calibrated with `scalewise calibrate --cluster`;
each trace is then predicted on every other link and compared with the run
measured there (wall time, MPI share).  Root; holds the cluster lock.

usage: whatif_cluster.py [--apps sem,ocean,amr,dft] [--size small] [--rates 100mbit,1gbit,10gbit]
                         [--flavours openmpi,mpich] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
from scalewise.cluster import cluster_down  # noqa: E402
from scalewise.cluster.emulated import cluster_up  # noqa: E402
from scalewise.cluster.launching import pair_launcher  # noqa: E402
from scalewise.cluster.links import parse_rate, rate_text  # noqa: E402
from scalewise.cluster.lock import cluster_lock  # noqa: E402
from scalewise.launch.profiled import run_profiled  # noqa: E402
from scalewise.logfile.reader import read_profile  # noqa: E402
from scalewise.whatif import read_trace, replay  # noqa: E402
from scalewise.whatif.calibrate import EAGER, fit, launch, measure  # noqa: E402
from scalewise.whatif.compare import compare, errors  # noqa: E402

HERE = "1 node"  # both ranks on this machine, shared memory


def traced(flavour: str, argv: list[str], env: dict[str, str] | None, out: Path) -> tuple[Path, Path]:
    """Run one profiled, traced job; its log and trace."""
    with open(os.devnull, "w") as quiet:
        job = run_profiled(argv, out, flavour, base_env=env, job_stdout=quiet.fileno(), trace=True)
    if job.returncode != 0 or len(job.logs) != 1 or len(job.traces) != 1:
        raise SystemExit(f"{' '.join(argv)}: exit {job.returncode}, logs {job.logs}")
    return job.logs[0], job.traces[0]


def record(a, flavour: str, tmp: Path) -> tuple[dict, dict]:
    """Runs per (place, app) and a calibrated network per link rate."""
    runs: dict[tuple[str, str], list[tuple[Path, Path]]] = {}
    nets = {}
    for app in a.apps:
        exe = [str(ROOT / "build" / flavour / "proxies" / app), "--size", a.size]
        cmd, env = launch(flavour, None, exe)
        runs[(HERE, app)] = [traced(flavour, cmd, env, tmp / f"{flavour}-here-{app}-{k}") for k in range(a.repeats)]
    for rate in a.rates:
        cluster_down()
        c = cluster_up(2, parse_rate(rate))
        on_nodes = pair_launcher(c, flavour, "whatif_cluster")
        nets[rate] = fit(measure(flavour, reps=30, launcher=on_nodes), EAGER[(flavour, False)], rate, "")
        for app in a.apps:
            exe = [str(ROOT / "build" / flavour / "proxies" / app), "--size", a.size]
            runs[(rate, app)] = [traced(flavour, *on_nodes(exe), tmp / f"{flavour}-{rate}-{app}-{k}")
                                 for k in range(a.repeats)]
        cluster_down()
    return runs, nets


def _median_run(pairs: list[tuple[Path, Path]]):
    """The measured profile of the run with the median wall time, and the spread of the walls."""
    profiles = sorted((read_profile(log) for log, _ in pairs), key=lambda p: float(p.ranks["wall"].max()))
    walls = [float(p.ranks["wall"].max()) for p in profiles]
    return profiles[len(profiles) // 2], (walls[-1] - walls[0]) / walls[len(walls) // 2]


def cells(a, flavour: str, runs: dict, nets: dict) -> list[dict]:
    """Every (source, target) pair: each source trace predicted on the target's calibrated link; the
    prediction with the median wall time against the measured run with the median wall time there
    (single runs on this machine differ by up to a third: docs/benchmarks.md)."""
    out = []
    for app in a.apps:
        for target in a.rates:
            measured, spread = _median_run(runs[(target, app)])
            for source in (HERE, *a.rates):
                if source == target:
                    continue
                predictions = sorted((replay(read_trace(trace), [nets[target]], library=flavour)[0]
                                      for _, trace in runs[(source, app)]), key=lambda p: p.wall_time)
                w = compare([predictions[len(predictions) // 2]], measured)
                e = errors(w).iloc[0]
                out.append({"mpi": flavour, "app": app, "source": source, "target": target,
                            "wall": float(e["wall_error"]), "share": float(e["mpi_share_points"]),
                            "measured": w.summary.iloc[0], "predicted": w.summary.iloc[1], "spread": spread})
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--apps", default="sem,ocean,amr,dft", type=lambda s: s.split(","))
    ap.add_argument("--size", default="small")
    ap.add_argument("--rates", default="100mbit,1gbit,10gbit", type=lambda s: s.split(","))
    ap.add_argument("--flavours", default="openmpi,mpich", type=lambda s: s.split(","))
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    table = []
    with cluster_lock(), tempfile.TemporaryDirectory() as tmp:
        try:
            for flavour in a.flavours:
                runs, nets = record(a, flavour, Path(tmp))
                for rate, net in nets.items():
                    r = net.ranges
                    print(f"{flavour} {rate}: L {r[0].latency_us:.1f} us, small {r[0].bandwidth_gbit_s:.3f} Gbit/s, "
                          f"large {r[-1].bandwidth_gbit_s:.3f} Gbit/s", flush=True)
                table += cells(a, flavour, runs, nets)
        finally:
            cluster_down()
    print("| MPI | app | recorded | predicted for | measured wall | predicted wall | wall error | measured MPI share "
          "| predicted | points | spread of the measured runs |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for c in table:
        m, p = c["measured"], c["predicted"]
        print(f"| {c['mpi']} | {c['app']} | {c['source']} | {rate_text(parse_rate(c['target']))} "
              f"| {m['wall_time']:.3f} s | {p['wall_time']:.3f} s | {100 * c['wall']:+.1f}% "
              f"| {100 * m['mpi_share']:.1f}% | {100 * p['mpi_share']:.1f}% | {c['share']:+.1f} "
              f"| {100 * c['spread']:.0f}% |")
    walls = [abs(c["wall"]) for c in table]
    print(f"\ncells: {len(table)}; wall within 15%: {sum(w <= 0.15 for w in walls)}; "
          f"MPI share within 10 points: {sum(abs(c['share']) <= 10 for c in table)}; "
          f"median absolute wall error: {100 * statistics.median(walls):.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
