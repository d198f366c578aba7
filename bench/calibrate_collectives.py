#!/usr/bin/env python3
"""Collectives measured and replayed: `scalewise calibrate` --repeats times per
MPI on this host, each run's collectives (measured, and replayed on the
network that run fitted) gathered into one markdown table, the median run by
error per row and every run's error in the last column.

usage: calibrate_collectives.py [--flavours openmpi,mpich] [--repeats 3] [--ranks 2] [--reps 50]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from common import ROOT
from scalewise.formatting import human_bytes, seconds
from scalewise.whatif import load_network

SCALEWISE = ROOT / ".venv" / "bin" / "scalewise"


def calibrated(mpi: str, ranks: int, reps: int, out: Path, statistic: str = "median"):
    subprocess.run([str(SCALEWISE), "calibrate", "--mpi", mpi, "--ranks", str(ranks), "--reps", str(reps),
                    "--statistic", statistic, "-o", str(out)], check=True, capture_output=True, text=True)
    return load_network(out).collectives


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flavours", default="openmpi,mpich")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--statistic", default="median",
                    help="calibrate's --statistic (the table was measured with the median)")
    a = ap.parse_args()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("| MPI | collective | size | algorithm | measured | predicted | error | the runs |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for mpi in a.flavours.split(","):
            runs = [calibrated(mpi, a.ranks, a.reps, Path(tmp) / f"{mpi}-{k}.yaml", a.statistic)
                    for k in range(a.repeats)]
            for row in zip(*runs):  # the same collective and size in every run
                ordered = sorted(row, key=lambda c: c.error)
                mid = ordered[len(ordered) // 2]
                size = "" if mid.name == "MPI_Barrier" else human_bytes(mid.bytes)
                print(f"| {mpi} | {mid.name} | {size} | {mid.algorithm.split('_intra_')[-1]} | "
                      f"{seconds(mid.measured_us * 1e-6)} | {seconds(mid.predicted_us * 1e-6)} | "
                      f"{mid.error * 100:+.0f}% | {', '.join(f'{c.error * 100:+.0f}%' for c in row)} |")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"ranks {a.ranks}, {a.reps} repetitions per collective, median of the slowest rank; "
          f"median of {a.repeats} calibrations by error")
    return 0


if __name__ == "__main__":
    sys.exit(main())
