#!/usr/bin/env python3
"""What-if accuracy on one node, as a prediction: each proxy traced at 2 ranks over shared memory,
predicted for TCP on the loopback (the network `scalewise calibrate` measures with that transport:
ranges, collectives with their per-call cost) and compared with the run measured over TCP in the
same round (wall time, MPI share).  Every round's error, then a summary over all rounds.

usage: whatif_accuracy.py [--size small] [--apps sem,ocean,amr,dft] [--flavours openmpi,mpich] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from common import ROOT
from scalewise.cluster.dedicated import ahead_of_others
from scalewise.launch.preload import library_path
from scalewise.logfile.reader import read_profile
from scalewise.whatif import read_trace, replay
from scalewise.whatif.calibrate.pingpong import TCP_LOOPBACK, launch
from scalewise.whatif.calibrate.collbench import calibrate_with_collectives
from scalewise.whatif.compare import against_measured, compare

TCP_EAGER = {"openmpi": 65536, "mpich": 8192}


def traced(flavour: str, app: str, size: str, extra: dict[str, str], out: Path) -> tuple[Path, Path]:
    log, trace = out.with_suffix(".swlog"), out.with_suffix(".swtrace")
    cmd, env = launch(flavour, None, [str(ROOT / "build" / flavour / "proxies" / app), "--size", size])
    env.update(extra, LD_PRELOAD=f"{library_path(flavour)}:{env.get('LD_PRELOAD', '')}".rstrip(":"),
               SCALEWISE_LOGFILE=str(log), SCALEWISE_TRACE="1", SCALEWISE_TRACEFILE=str(trace), SCALEWISE_QUIET="1")
    subprocess.run(cmd, env=env, capture_output=True, check=True, timeout=600)
    return log, trace


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="small")
    ap.add_argument("--apps", default="sem,ocean,amr,dft", type=lambda s: s.split(","))
    ap.add_argument("--flavours", default="openmpi,mpich", type=lambda s: s.split(","))
    ap.add_argument("--repeats", type=int, default=3, help="paired rounds per cell")
    a = ap.parse_args()
    ahead_of_others()
    print(f"load before: {os.getloadavg()[0]:.2f}", flush=True)
    rows, walls = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for flavour in a.flavours:
            saved = {k: os.environ.get(k) for k in TCP_LOOPBACK[flavour]}
            os.environ.update(TCP_LOOPBACK[flavour])  # calibrate launches with this process's environment
            try:
                net = calibrate_with_collectives(flavour, TCP_EAGER[flavour], f"tcp-{flavour}", "", reps=30).network
            finally:
                for k, v in saved.items():
                    os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)
            for app in a.apps:
                errs, shares = [], []
                for k in range(a.repeats):
                    _, trace = traced(flavour, app, a.size, {}, Path(tmp) / f"{app}-{flavour}-shm{k}")
                    log, _ = traced(flavour, app, a.size, TCP_LOOPBACK[flavour], Path(tmp) / f"{app}-{flavour}-tcp{k}")
                    w = compare(replay(read_trace(trace), [net], library=flavour), read_profile(log))
                    e = against_measured(w).iloc[0]
                    errs.append(float(e["wall_change"]))
                    shares.append(float(e["mpi_share_points"]))
                m, p = w.summary.iloc[0], w.summary.iloc[1]
                rows.append((flavour, app, m, p, errs, shares))
                walls += errs
                print(f"{flavour} {app}: {', '.join(f'{100 * x:+.1f}%' for x in errs)}", flush=True)
    print(f"load after: {os.getloadavg()[0]:.2f}")
    print("| MPI | app | measured wall over TCP (last round) | predicted | measured MPI share | predicted "
          "| wall error, every round | median | MPI share points, every round |")
    print("|---|---|---|---|---|---|---|---|---|")
    for flavour, app, m, p, errs, shares in rows:
        print(f"| {flavour} | {app} | {m['wall_time']:.3f} s | {p['wall_time']:.3f} s | {100 * m['mpi_share']:.1f}% "
              f"| {100 * p['mpi_share']:.1f}% | {', '.join(f'{100 * x:+.1f}%' for x in errs)} "
              f"| {100 * statistics.median(errs):+.1f}% | {', '.join(f'{x:+.1f}' for x in shares)} |")
    absolute = [abs(x) for x in walls]
    print(f"\nall {len(walls)} rounds: median absolute wall error {100 * statistics.median(absolute):.1f}%, "
          f"within 5%: {sum(x <= 0.05 for x in absolute)}, within 15%: {sum(x <= 0.15 for x in absolute)}, "
          f"worst {100 * max(walls, key=abs):+.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
