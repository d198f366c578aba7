"""Report benchmark: load, analyse and render the profile report of a synthetic 16,384-rank log.

    PYTHONPATH=tests .venv/bin/python bench/bench_report.py [--ranks 16384] [--keep DIR]

The log (tests/support/profiles.py, stencil_profile) is written with the
Python log writer (not timed against the target):
a 128 x 128 periodic 2-D halo exchange (Isend/Irecv to 4 neighbours, Waitall)
plus Allreduce, Bcast and Barrier, 12 MPI functions per rank, with a little
compute imbalance.  Timed phases: load (read the log into a Profile), analyse
(P1-P6 and findings), figures (draw and encode every figure as SVG), render
page (template, embedding and write).  Target: under 10 s in total on a 2-core machine.
Wall and CPU time are printed per phase: on a shared machine the CPU time
shows the cost when the wall time is inflated by other load.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import scalewise
from scalewise.analysis.run.findings import analyse
from scalewise.logfile.writer import write_profile
from scalewise.report.run.html import write_html
from scalewise.report.figure import draw_figures
from scalewise.report.run.registry import FIGURES
from support.profiles import stencil_profile

TARGET_SECONDS = 10.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, default=16384)
    ap.add_argument("--keep", type=Path, help="keep the log and the page in this directory")
    args = ap.parse_args()
    out = args.keep or Path(tempfile.mkdtemp(prefix="sw-bench-report-"))
    out.mkdir(parents=True, exist_ok=True)
    log = out / f"stencil-{args.ranks}.swlog"

    t0 = time.perf_counter()
    write_profile(stencil_profile(args.ranks), log)
    print(f"write synthetic log  {time.perf_counter() - t0:7.2f} s  ({log.stat().st_size / 2**20:.1f} MiB, untimed)")

    phases = []

    def timed(name, fn):
        wall, cpu = time.perf_counter(), time.process_time()
        result = fn()
        phases.append((name, time.perf_counter() - wall, time.process_time() - cpu))
        return result

    profile = timed("load", lambda: scalewise.load(log))
    analysis = timed("analyse", lambda: analyse(profile))
    drawn = timed("figures", lambda: draw_figures(analysis, FIGURES))  # draws and encodes every figure as SVG
    page = timed("render page", lambda: write_html(out / "report.html", profile, analysis, drawn))

    total, total_cpu = sum(p[1] for p in phases), sum(p[2] for p in phases)
    print(f"ranks {profile.nranks:,}, functions {profile.functions['function'].nunique()}, "
          f"p2p pairs {len(profile.p2p):,}, page {page.stat().st_size / 2**20:.2f} MiB, "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"{'phase':<14} {'wall':>8} {'cpu':>8}")
    for name, wall, cpu in phases:
        print(f"{name:<14} {wall:7.2f}s {cpu:7.2f}s")
    verdict = "met" if total < TARGET_SECONDS else "MISSED"
    print(f"{'total':<14} {total:7.2f}s {total_cpu:7.2f}s   target < {TARGET_SECONDS:.0f} s wall: {verdict}")

if __name__ == "__main__":
    main()
