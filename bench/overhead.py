#!/usr/bin/env python3
"""Profiler cost, measured side by side with bare runs in one session.

For each MPI flavour and rank count, runs bench/overhead.c bare and under
the profiler, alternating, and prints the added time per intercepted call
(min and median over all repetitions) and, for polling (Test*, Iprobe,
Improbe), one-sided and local calls, how much more that is than the
blocking path's (allreduce8), the memory added per rank, and the
log size per rank of bench/logsize.c (20 MPI functions, 6 peers per rank).
"vs blocking, paired" pairs each profiled repetition with the bare one of the
same round and index, minus the blocking path's pair, and gives the median
of those samples with a distribution-free 95% interval (overhead_paired.py's);
bench/overhead_paired.py interleaves the two inside one process instead.

With ``--baseline DIR`` (the build/ folder of another tree, e.g. the last
release's), each round also runs that tree's profiler, and a last table sets
its added cost per call beside this tree's: before vs after, in one session.

With ``--cpu`` the kernels are timed by their thread's CPU time instead of
wall time (OVERHEAD_CLOCK=cpu): on a loaded machine, what waiting for a core
would add is left out.

usage: overhead.py [--iters N] [--rounds R] [--ranks 1,2] [--flavours openmpi,mpich] [--baseline DIR] [--cpu]
"""

from __future__ import annotations

import argparse
import statistics
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

from rich.console import Console

from common import ROOT, build, launcher, run_once, table
from overhead_paired import median_interval
from scalewise.launch.preload import library_path
from scalewise.logfile import layout as L
from scalewise.logfile.reader import read_container

BLOCKING = "allreduce8"  # the reference: a blocking call's added cost


def rank_block_sizes(log: Path) -> list[int]:
    """The stored (compressed) size of each rank block, from the rank index."""
    order, _, secs = read_container(log)
    return [entry[3] for entry in struct.iter_unpack(order + L.RANK_INDEX_ENTRY, secs[L.SEC_RANK_INDEX])]


def paired_vs_blocking(samples: dict[str, dict[str, list[float]]], k: str) -> str:
    """Per repetition, (profiled - bare) of kernel k minus that of the blocking path, both per call:
    the median and its 95% interval."""
    def per_call(name: str) -> list[float]:
        s = samples[name]
        return [(p - b) / s["calls"][0] for p, b in zip(s["prof"], s["bare"])]
    m, lo, hi = median_interval([x - y for x, y in zip(per_call(k), per_call(BLOCKING))])
    return f"{m:+.1f} [{lo:+.1f}, {hi:+.1f}]"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iters", type=int, default=200000)
    ap.add_argument("--reps", type=int, default=5, help="repetitions inside each run")
    ap.add_argument("--rounds", type=int, default=4, help="bare/profiled alternations")
    ap.add_argument("--ranks", default="1,2")
    ap.add_argument("--flavours", default="openmpi,mpich")
    ap.add_argument("--logsize-ranks", type=int, default=8)
    ap.add_argument("--baseline", type=Path, help="build/ folder of another tree, profiled in the same rounds")
    ap.add_argument("--cpu", action="store_true", help="time the kernels by thread CPU time, not wall time")
    a = ap.parse_args()
    console = Console(width=200)  # every column whole, also when piped to a file
    cost = table("Added cost per intercepted call (profiled - bare), ns", "MPI", "ranks", "kernel", "bare min",
                 "profiled min", "added/call min", "bare median", "profiled median", "added/call median",
                 "vs blocking", "vs blocking, paired: median [95%]")
    mem = table("Memory high-water mark of rank 0 (median over runs)", "MPI", "ranks", "bare KiB", "profiled KiB",
                "added KiB")
    versus = table("Before vs after: added cost per call (profiled - bare, min), ns", "MPI", "ranks", "kernel",
                   "baseline", "this tree", "after - before", "baseline vs blocking", "this tree vs blocking")
    size = table(f"Log size, bench/logsize.c at {a.logsize_ranks} ranks (20 functions, 6 peers per rank)",
                 "MPI", "file bytes", "bytes per rank (file / ranks)", "compressed rank block, mean", "max")
    with tempfile.TemporaryDirectory() as tmp:
        tmpd = Path(tmp)
        for flavour in a.flavours.split(","):
            lib = library_path(flavour)
            modes = [("bare", None), ("prof", lib)]
            if a.baseline:
                modes.append(("base", a.baseline / flavour / "libscalewise.so"))
            exe = build(flavour, "overhead.c", tmpd)
            for n in (int(x) for x in a.ranks.split(",")):
                cmd = launcher(flavour, n) + [str(exe), str(a.iters), str(a.reps)]
                samples: dict[str, dict[str, list[float]]] = {}
                hwm: dict[str, list[int]] = {mode: [] for mode, _ in modes}
                for _ in range(a.rounds):
                    for mode, pre in modes:
                        res = run_once(cmd, pre, tmpd / "o.swlog", {"OVERHEAD_CLOCK": "cpu"} if a.cpu else None)
                        hwm[mode].append(res.pop("hwm"))
                        for k, (calls, ts) in res.items():
                            samples.setdefault(k, {"calls": [calls], **{m: [] for m, _ in modes}})[mode] += ts
                added = {k: (min(s["prof"]) - min(s["bare"])) / s["calls"][0] for k, s in samples.items()}
                if a.baseline:
                    added_base = {k: (min(s["base"]) - min(s["bare"])) / s["calls"][0] for k, s in samples.items()}
                for k, s in samples.items():
                    c = s["calls"][0]
                    bmin, pmin = min(s["bare"]), min(s["prof"])
                    bmed, pmed = statistics.median(s["bare"]), statistics.median(s["prof"])
                    # the added cost per call beyond the blocking path's (allreduce8), from the minima
                    cost.add_row(flavour, str(n), k, f"{bmin:.1f}", f"{pmin:.1f}", f"{(pmin - bmin) / c:.1f}",
                                 f"{bmed:.1f}", f"{pmed:.1f}", f"{(pmed - bmed) / c:.1f}",
                                 f"{added[k] - added[BLOCKING]:+.1f}", paired_vs_blocking(samples, k))
                    if s.get("base"):
                        before = (min(s["base"]) - bmin) / c
                        versus.add_row(flavour, str(n), k, f"{before:.1f}", f"{(pmin - bmin) / c:.1f}",
                                       f"{(pmin - min(s['base'])) / c:+.1f}",
                                       f"{added_base[k] - added_base[BLOCKING]:+.1f}",
                                       f"{added[k] - added[BLOCKING]:+.1f}")
                hb, hp = statistics.median(hwm["bare"]), statistics.median(hwm["prof"])
                mem.add_row(flavour, str(n), f"{hb:.0f}", f"{hp:.0f}", f"{hp - hb:.0f}")
            exe = build(flavour, "logsize.c", tmpd)
            log = tmpd / f"logsize-{flavour}.swlog"
            run_once(launcher(flavour, a.logsize_ranks) + [str(exe)], lib, log)
            blocks = rank_block_sizes(log)
            nbytes = log.stat().st_size
            size.add_row(flavour, str(nbytes), f"{nbytes / a.logsize_ranks:.0f}",
                         f"{statistics.mean(blocks):.0f}", str(max(blocks)))
        clock = tmpd / "clockcost"
        subprocess.run(["cc", "-O2", "-o", str(clock), str(ROOT / "bench" / "clockcost.c")], check=True)
        reads = dict(f.split("=") for f in subprocess.run([str(clock)], capture_output=True, text=True,
                                                          check=True).stdout.split())
    for t in (cost, mem, size, *([versus] if a.baseline else [])):
        console.print(t)
    console.print(f"One clock read, same session (min of 5): rdtsc {reads['rdtsc_ns']} ns, "
                  f"clock_gettime {reads['clock_gettime_ns']} ns. The profiler reads rdtsc twice per call.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
