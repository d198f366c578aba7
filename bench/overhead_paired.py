#!/usr/bin/env python3
"""The profiler's added cost per call, from bare and wrapped calls interleaved
in one process (bench/overhead_paired.c), with an interval.

Each repetition of each kernel gives one pair: the library's own PMPI_x and
the profiler's MPI_x, timed back to back in the same process on the same
objects.  Its difference per call is one sample of the added cost; minus the
blocking path's (allreduce8) of the same repetition, one sample of the cost
"vs blocking".  The table gives, per kernel, the median of those samples
over every repetition of every run and a 95% distribution-free interval of
that median (order statistics of the binomial), and the same from runs
without the profiler (both sides then call the library: an A/A test, whose
interval is how far apart the method puts two identical calls).  Runs with
and without the profiler alternate.

usage: overhead_paired.py [--iters N] [--reps R] [--runs K] [--flavours openmpi,mpich] [--cpu]
                          [--build DIR | --preload FILE]

--preload measures another interposer in the profiler's place ("{flavour}" in
FILE is replaced by the MPI's name), e.g. bench/passthrough.c's, which does
nothing but call the library: what interposition alone costs.
"""

from __future__ import annotations

import argparse
import math
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from rich.console import Console

from common import ENV, ROOT, launcher, table
from scalewise.launch.preload import library_path

BLOCKING = "allreduce8"


def median_interval(xs: list[float], level: float = 0.95) -> tuple[float, float, float]:
    """The median of ``xs`` and a distribution-free ``level`` interval for it: the j-th
    smallest and j-th largest samples, j the largest with P(Binomial(n, 1/2) < j) <= (1 - level) / 2."""
    s, n = sorted(xs), len(xs)
    tail, j, cdf = (1 - level) / 2, 0, 0.0
    while j < n:
        nxt = cdf + math.comb(n, j) / 2 ** n
        if nxt > tail:
            break
        cdf, j = nxt, j + 1
    j = max(j, 1)
    return statistics.median(s), s[j - 1], s[n - j]


def run(exe: Path, flavour: str, iters: int, reps: int, preload: Path | None, cpu: bool, log: Path) \
        -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """One run: per kernel, the added ns per call of each repetition (wrapped - bare), and the bare ns per call."""
    env = dict(ENV, **({"OVERHEAD_CLOCK": "cpu"} if cpu else {}))
    if preload:
        env |= {"LD_PRELOAD": str(preload), "SCALEWISE_LOGFILE": str(log)}
    out = subprocess.run(launcher(flavour, 1) + [str(exe), str(iters), str(reps)], env=env, capture_output=True,
                         text=True, check=True).stdout
    added: dict[str, list[float]] = {}
    bare: dict[str, list[float]] = {}
    for line in out.splitlines():
        f = dict(x.split("=", 1) for x in line.split())
        if "kernel" in f:
            calls = int(f["calls_per_iter"])
            added[f["kernel"]] = [(float(w) - float(b)) / calls
                                  for b, w in zip(f["bare"].split(","), f["wrapped"].split(","))]
            bare[f["kernel"]] = [float(b) / calls for b in f["bare"].split(",")]
    return added, bare


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iters", type=int, default=20000, help="calls per timed block")
    ap.add_argument("--reps", type=int, default=10, help="bare/wrapped pairs per kernel in each run")
    ap.add_argument("--runs", type=int, default=6, help="runs with the profiler (as many without)")
    ap.add_argument("--flavours", default="openmpi,mpich")
    ap.add_argument("--cpu", action="store_true", help="time by thread CPU time, not wall time")
    ap.add_argument("--build", type=Path, help="a build/ folder whose libraries to measure (default: this tree's)")
    ap.add_argument("--preload", help="another library to preload in the profiler's place ({flavour}: the MPI)")
    a = ap.parse_args()
    out = table("Added ns per call, bare and wrapped interleaved in one process: median [95% interval of the median]",
                "MPI", "kernel", "bare ns/call, median", "added/call", "added vs blocking",
                "A/A: added vs blocking (no profiler)")
    with tempfile.TemporaryDirectory() as tmp:
        tmpd = Path(tmp)
        for flavour in a.flavours.split(","):
            exe = tmpd / f"overhead_paired-{flavour}"
            subprocess.run([f"mpicc.{flavour}", "-O2", "-o", str(exe), str(ROOT / "bench" / "overhead_paired.c"),
                            "-ldl"], check=True)
            samples: dict[str, dict[str, list[float]]] = {"prof": {}, "none": {}}
            bare: dict[str, list[float]] = {}
            prof = (Path(a.preload.format(flavour=flavour)) if a.preload else
                    a.build / flavour / "libscalewise.so" if a.build else library_path(flavour))
            for _ in range(a.runs):
                for mode, pre in (("none", None), ("prof", prof)):
                    res, bare_ns = run(exe, flavour, a.iters, a.reps, pre, a.cpu, tmpd / "o.swlog")
                    for k, xs in bare_ns.items():
                        bare.setdefault(k, []).extend(xs)
                    for k, xs in res.items():
                        samples[mode].setdefault(k, []).extend(xs)
                        samples[mode].setdefault(k + " vs", []).extend(x - b for x, b in zip(xs, res[BLOCKING]))
            for k in (k for k in samples["prof"] if not k.endswith(" vs")):
                cells = [median_interval(samples["prof"][k]), median_interval(samples["prof"][k + " vs"]),
                         median_interval(samples["none"][k + " vs"])]
                out.add_row(flavour, k, f"{statistics.median(bare[k]):.1f}",
                            *(f"{m:+.1f} [{lo:+.1f}, {hi:+.1f}]" for m, lo, hi in cells))
    Console(width=200).print(out)
    print(f"{a.runs} runs with and {a.runs} without the profiler, {a.reps} pairs of {a.iters} calls per kernel "
          f"in each: {a.runs * a.reps} samples per cell; clock: {'thread CPU' if a.cpu else 'wall'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
