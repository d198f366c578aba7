#!/usr/bin/env python3
"""Oversubscribed ranks, side by side: MPICH with and without yielding when idle, and Open MPI.

Runs each proxy app at --ranks ranks (more than this machine's cores) in
rounds that alternate the three set-ups, and prints the median of the wall
time each app reports for itself (its SCALEWISE_RESULT line, MPI_Init and
MPI_Finalize excluded) with the ratio to Open MPI:

* mpich, busy: MPICH 4.0 as it comes (ch4 polls without yielding);
* mpich, yield: with runtime/compat/mpich_ucx.c preloaded and
  SCALEWISE_YIELD_WHEN_IDLE set, as scalewise launches oversubscribed runs;
* openmpi: mpirun --oversubscribe (Open MPI yields by itself then).

usage: oversubscribed.py [--ranks 4] [--rounds 5] [--apps sem,ocean,amr,dft] [--size tiny]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess

from rich.console import Console
from rich.table import Table

from scalewise.launch.preload import build_dir, with_mpich_ucx

ENV = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
WALL = re.compile(r"SCALEWISE_RESULT .*\bwall=([0-9.eE+-]+)")
SETUPS = ("mpich, busy", "mpich, yield", "openmpi")


def command(setup: str, app: str, ranks: int, size: str) -> tuple[list[str], dict[str, str]]:
    if setup == "openmpi":
        exe = build_dir() / "openmpi" / "proxies" / app
        return ["mpirun.openmpi", "--oversubscribe", "--bind-to", "none", "-np", str(ranks), str(exe),
                "--size", size], ENV
    exe = build_dir() / "mpich" / "proxies" / app
    env = with_mpich_ucx(ENV, oversubscribed=True)[0] if setup == "mpich, yield" else ENV
    return ["mpiexec.mpich", "-n", str(ranks), str(exe), "--size", size], env


def app_wall(setup: str, app: str, ranks: int, size: str) -> float:
    argv, env = command(setup, app, ranks, size)
    out = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600).stdout
    found = WALL.search(out)
    if not found:
        raise SystemExit(f"oversubscribed: no result line from {' '.join(argv)}")
    return float(found.group(1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--apps", default="sem,ocean,amr,dft")
    ap.add_argument("--size", default="tiny")
    args = ap.parse_args()
    apps = args.apps.split(",")
    times: dict[tuple[str, str], list[float]] = {(a, s): [] for a in apps for s in SETUPS}
    for _ in range(args.rounds):
        for app in apps:
            for setup in SETUPS:
                times[app, setup].append(app_wall(setup, app, args.ranks, args.size))
    table = Table(title=f"{args.ranks} ranks on {os.cpu_count()} cores, {args.size}, median of {args.rounds}: "
                        "the app's own wall time, and its ratio to Open MPI")
    table.add_column("app")
    for setup in SETUPS:
        table.add_column(setup, justify="right")
    for app in apps:
        ref = statistics.median(times[app, "openmpi"])
        cells = []
        for setup in SETUPS:
            med = statistics.median(times[app, setup])
            cells.append(f"{med * 1e3:.2f} ms ({med / ref:.1f}x)")
        table.add_row(app, *cells)
    Console().print(table)


if __name__ == "__main__":
    main()
