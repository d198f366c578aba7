"""Report benchmark: the one-run report and summary of a synthetic stencil log, phase by phase and end to end.

    PYTHONPATH=tests .venv/bin/python bench/bench_report.py [--ranks 16384] [--keep DIR] [--log PATH]
                                                            [--cli-only]

The log (tests/support/profiles.py, stencil_profile) is written with the
Python log writer (not timed against the target; kept and reused with
--log): a periodic 2-D halo exchange (Isend/Irecv to 4 neighbours, Waitall)
plus Allreduce, Bcast and Barrier, 12 MPI functions per rank, with a little
compute imbalance.

In process, per phase: load (read the log into a Profile), analyse (P1-P6
and findings), figures (draw and encode every figure as SVG), render page
(template, embedding and write), summary (the terminal summary, printed to a
buffer).  End to end, each in a process of its own: `scalewise summary LOG`
and `scalewise report LOG -o page.html`, with the child's CPU time
(user + sys) and peak RSS from wait4.  Targets: 131,072 ranks under 10 s,
1,048,576 ranks under 30 s wall, peak RSS at most 4 GiB.  On a shared machine
the wall time is inflated by other load: CPU time and the load average are
printed beside it.
"""

from __future__ import annotations

import argparse
import multiprocessing
import io
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console

import scalewise
from scalewise.analysis.run.findings import analyse
from scalewise.logfile.reader import read_container
from scalewise.logfile.writer import write_profile
from scalewise.report.figure import draw_figures
from scalewise.report.run.html import write_html
from scalewise.report.run.registry import FIGURES
from scalewise.report.run.terminal import print_summary
from support.profiles import stencil_profile

RSS_LIMIT = 4 << 30


def target_seconds(nranks: int) -> float:
    return 10.0 if nranks <= 131072 else 30.0


def phases(log: Path, out: Path) -> None:
    rows = []

    def timed(name, fn):
        wall, cpu = time.perf_counter(), time.process_time()
        result = fn()
        rows.append((name, time.perf_counter() - wall, time.process_time() - cpu))
        return result

    profile = timed("load", lambda: scalewise.load(log))
    analysis = timed("analyse", lambda: analyse(profile))
    drawn = timed("figures", lambda: draw_figures(analysis, FIGURES))  # draws and encodes every figure as SVG
    page = timed("render page", lambda: write_html(out / "report.html", profile, analysis, drawn))
    timed("summary", lambda: print_summary(profile, Console(file=io.StringIO(), width=120), analysis))
    print(f"ranks {profile.nranks:,}, functions {profile.functions['function'].nunique()}, "
          f"p2p pairs {len(profile.p2p):,}, page {page.stat().st_size / 2**20:.2f} MiB")
    print(f"{'phase':<14} {'wall':>8} {'cpu':>8}")
    for name, wall, cpu in rows:
        print(f"{name:<14} {wall:7.2f}s {cpu:7.2f}s")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(f"in-process peak RSS {rss:.2f} GiB (both paths in one process)")


def end_to_end(name: str, argv: list[str], nranks: int) -> None:
    """Run one scalewise command as a child; print its wall, CPU (user + sys) and peak RSS."""
    load = os.getloadavg()[0]
    start = time.perf_counter()
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL)
    _pid, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    if status != 0:
        sys.exit(f"{' '.join(argv)} failed with status {status}")
    cpu, rss = usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024
    target = target_seconds(nranks)
    verdict = "met" if wall < target and rss <= RSS_LIMIT else "MISSED"
    print(f"{name:<8} wall {wall:7.2f}s  cpu {cpu:7.2f}s (user {usage.ru_utime:.2f} + sys {usage.ru_stime:.2f})  "
          f"peak RSS {rss / 2**30:.2f} GiB  load {load:.1f} -> {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores  "
          f"target < {target:.0f} s wall, <= 4 GiB: {verdict}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, default=16384)
    ap.add_argument("--keep", type=Path, help="keep the log and the page in this directory")
    ap.add_argument("--log", type=Path, help="use this log (written first if it does not exist)")
    ap.add_argument("--cli-only", action="store_true", help="only the end-to-end runs, not the in-process phases")
    args = ap.parse_args()
    out = args.keep or Path(tempfile.mkdtemp(prefix="sw-bench-report-"))
    out.mkdir(parents=True, exist_ok=True)
    log = args.log or out / f"stencil-{args.ranks}.swlog"
    if not log.exists():
        # In a process of its own: a child's peak RSS counts its parent's memory before exec, so the
        # writer's (5.9 GiB at a million ranks) would show in the commands measured below.
        t0 = time.perf_counter()
        writer = multiprocessing.get_context("spawn").Process(target=_write_log, args=(args.ranks, log))
        writer.start()
        writer.join()
        if writer.exitcode != 0:
            sys.exit(f"writing the synthetic log {log} failed")
        print(f"write synthetic log  {time.perf_counter() - t0:7.2f} s wall  ({log.stat().st_size / 2**20:.1f} MiB, "
              "untimed)")
    nranks = read_container(log)[1][5]
    exe = Path(sys.executable).with_name("scalewise")
    # The commands first, while this process is small (see above); then the phases in process.
    end_to_end("summary", [str(exe), "summary", str(log)], nranks)
    end_to_end("report", [str(exe), "report", str(log), "-o", str(out / "cli-report.html")], nranks)
    if not args.cli_only:
        phases(log, out)


def _write_log(nranks: int, log: Path) -> None:
    write_profile(stencil_profile(nranks), log)


if __name__ == "__main__":
    main()
