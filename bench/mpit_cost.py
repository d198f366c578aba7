#!/usr/bin/env python3
"""Cost of MPI_T at MPI_Init and MPI_Finalize, side by side: bench/mpit_cost.c
under the profiler with SCALEWISE_MPIT=0 and with MPI_T on, alternating in
one session, plus bare runs for scale; prints the slowest rank's MPI_Init and
MPI_Finalize time (ms) per mode and the differences on - off and all - off
(SCALEWISE_MPIT=all: every MTL component loaded for MPI_T), and the largest
memory high-water mark of a rank (the log's maxrss) off, on and all; and
the slowest rank's "prof. Init" from the log (the profiler's own set-up at
MPI_Init, MPI_T_init_thread in it: timed inside the rank, so less noisy).

usage: mpit_cost.py [--rounds R] [--ranks 2] [--flavours openmpi,mpich]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from rich.console import Console

from common import ENV, build, launcher, table
from scalewise import load
from scalewise.launch.preload import library_path

# "MPI_T all": SCALEWISE_MPIT=all, Open MPI loading its MTL components for MPI_T as before the MTL rule
# (docs/mpit.md "Cost").
MODES = (("bare", None), ("MPI_T off", "0"), ("MPI_T on", "1"), ("MPI_T all", "all"))


def slowest(cmd: list[str], flavour: str, mpit: str | None, log: Path) -> dict[str, float]:
    """The slowest rank's MPI_Init and MPI_Finalize of one run, in ms."""
    env = dict(ENV)
    if mpit is not None:
        env.update(LD_PRELOAD=str(library_path(flavour)), SCALEWISE_LOGFILE=str(log), SCALEWISE_MPIT=mpit)
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True, timeout=120).stdout
    times: dict[str, float] = {}
    for what, _rank, ns in (line.split() for line in out.splitlines() if line.startswith(("init ", "finalize "))):
        times[what] = max(times.get(what, 0.0), int(ns) / 1e6)
    if mpit is not None:
        ranks = load(log).ranks
        times["maxrss"] = float(ranks["maxrss"].max()) / 2**20
        times["prof_init"] = float(ranks["profiler_init"].max()) * 1e3  # the profiler's own set-up, MPI_T in it
    return times


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--flavours", default="openmpi,mpich")
    a = ap.parse_args()
    results = table(f"MPI_T: MPI_Init and MPI_Finalize of the slowest rank (ms, median of {a.rounds} runs)",
                    "MPI", "what", "bare", "MPI_T off", "MPI_T on", "MPI_T all", "on - off", "on - off (min)",
                    "all - off")
    with tempfile.TemporaryDirectory() as tmp:
        tmpd = Path(tmp)
        for flavour in a.flavours.split(","):
            cmd = launcher(flavour, a.ranks) + [str(build(flavour, "mpit_cost.c", tmpd))]
            samples = {m: {"init": [], "finalize": [], "maxrss": [], "prof_init": []} for m, _ in MODES}
            for _ in range(a.rounds):
                for mode, mpit in MODES:
                    for what, ms in slowest(cmd, flavour, mpit, tmpd / "c.swlog").items():
                        samples[mode][what].append(ms)
            for what in ("init", "finalize"):
                med = {m: statistics.median(samples[m][what]) for m, _ in MODES}
                low = {m: min(samples[m][what]) for m, _ in MODES}
                results.add_row(flavour, f"MPI_{what.capitalize()}", f"{med['bare']:.2f}", f"{med['MPI_T off']:.2f}",
                              f"{med['MPI_T on']:.2f}", f"{med['MPI_T all']:.2f}",
                              f"{med['MPI_T on'] - med['MPI_T off']:+.2f}", f"{low['MPI_T on'] - low['MPI_T off']:+.2f}",
                              f"{med['MPI_T all'] - med['MPI_T off']:+.2f}")
            own = {m: statistics.median(samples[m]["prof_init"]) for m, _ in MODES[1:]}
            results.add_row(flavour, "prof. Init (log)", "", f"{own['MPI_T off']:.2f}", f"{own['MPI_T on']:.2f}",
                            f"{own['MPI_T all']:.2f}", f"{own['MPI_T on'] - own['MPI_T off']:+.2f}", "",
                            f"{own['MPI_T all'] - own['MPI_T off']:+.2f}")
            rss = {m: statistics.median(samples[m]["maxrss"]) for m, _ in MODES[1:]}
            results.add_row(flavour, "maxrss MiB", "", f"{rss['MPI_T off']:.1f}", f"{rss['MPI_T on']:.1f}",
                            f"{rss['MPI_T all']:.1f}", f"{rss['MPI_T on'] - rss['MPI_T off']:+.1f}", "",
                            f"{rss['MPI_T all'] - rss['MPI_T off']:+.1f}")
    Console().print(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
