"""Report benchmark: load, analyse and render the profile report of a synthetic 16,384-rank log.

    .venv/bin/python bench/bench_report.py [--ranks 16384] [--keep DIR]

The log is written with the Python log writer (not timed against the target):
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
import math
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

import scalewise
from scalewise.analysis.run.findings import analyse
from scalewise.logfile.writer import write_profile
from scalewise.model.profile import FUNCTION_COLUMNS, HIST_COLUMNS, P2P_COLUMNS, RANK_COLUMNS, Profile, bin_bounds
from scalewise.report.run.html import write_html
from scalewise.report.figure import draw_figures
from scalewise.report.run.registry import FIGURES

TARGET_SECONDS = 10.0
STEPS = 500
FACE = 48 * 1024  # bytes per halo face


def synthetic_profile(nranks: int) -> Profile:
    px = 2 ** math.ceil(math.log2(nranks) / 2)
    py = nranks // px
    n = px * py
    rng = np.random.default_rng(20240501)
    r = np.arange(n)
    x, y = r % px, r // px
    compute = 100.0 + 8.0 * rng.random(n)
    waitall = 108.0 - compute + 20.0 + rng.random(n)  # ranks that compute less wait more
    # name, class, calls per rank, seconds per rank, bytes per rank, {bin: count per rank}
    table = [
        ("MPI_Init", "init", 1, np.full(n, 0.8), 0, {}),
        ("MPI_Comm_rank", "comm", 1, np.full(n, 1e-6), 0, {}),
        ("MPI_Comm_size", "comm", 1, np.full(n, 1e-6), 0, {}),
        ("MPI_Isend", "p2p", 4 * STEPS, 0.3 + 0.01 * rng.random(n), 4 * STEPS * FACE, {FACE.bit_length(): 4 * STEPS}),
        ("MPI_Irecv", "p2p", 4 * STEPS, 0.2 + 0.01 * rng.random(n), 0, {}),
        ("MPI_Waitall", "wait", STEPS, waitall, 8 * STEPS * FACE, {FACE.bit_length(): 8 * STEPS}),
        ("MPI_Allreduce", "collective", 2 * STEPS, 6.0 + rng.random(n), 2 * STEPS * 8, {4: 2 * STEPS}),
        ("MPI_Bcast", "collective", 10, np.full(n, 0.05), 10 * 4096, {13: 10}),
        ("MPI_Barrier", "collective", 5, 0.5 + rng.random(n), 0, {0: 5}),
        ("MPI_Wtime", "other", 2 * STEPS, np.full(n, 1e-4), 0, {}),
        ("MPI_Comm_free", "comm", 1, np.full(n, 1e-6), 0, {}),
        ("MPI_Finalize", "init", 1, np.full(n, 0.1), 0, {}),
    ]
    mpi = sum(t for _, _, _, t, _, _ in table)
    ranks = pd.DataFrame({"rank": r, "host": [f"cn{k // 64:04d}" for k in r], "pid": 10000 + r % 64,
                          "wall": compute + mpi, "mpi_time": mpi, "compute_time": compute,
                          "maxrss": 1 << 30, "nthreads": 1, "partial": False})[RANK_COLUMNS]
    functions = pd.concat([pd.DataFrame({"rank": r, "function": name, "fclass": fc, "calls": calls, "time": t,
                                         "tmin": t / calls / 2, "tmax": t / calls * 3, "bytes": nbytes})
                           for name, fc, calls, t, nbytes, _ in table], ignore_index=True)[FUNCTION_COLUMNS]
    hist = pd.concat([pd.DataFrame({"rank": r, "function": name, "bin": b, "lo": bin_bounds(b)[0],
                                    "hi": bin_bounds(b)[1], "count": c})
                      for name, _, _, _, _, bins in table for b, c in bins.items()], ignore_index=True)[HIST_COLUMNS]
    nbrs = np.concatenate([((x + 1) % px) + y * px, ((x - 1) % px) + y * px,
                           x + ((y + 1) % py) * px, x + ((y - 1) % py) * px])
    p2p = pd.DataFrame({"src": np.tile(r, 4), "dst": nbrs, "messages": STEPS, "bytes": STEPS * FACE})
    p2p = p2p.groupby(["src", "dst"], as_index=False)[["messages", "bytes"]].sum()[P2P_COLUMNS]
    meta = {"format": "1.0", "nranks": n, "command": ["./stencil2d", "--grid", f"{px}x{py}", "--steps", str(STEPS)],
            "mpi_library": "Open MPI v4.1.4", "mpi_version": "3.1", "start_time": 1_714_550_400.0,
            "end_time": 1_714_550_400.0 + float(ranks["wall"].max())}
    return Profile(meta, ranks, functions, hist, p2p)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, default=16384)
    ap.add_argument("--keep", type=Path, help="keep the log and the page in this directory")
    args = ap.parse_args()
    out = args.keep or Path(tempfile.mkdtemp(prefix="sw-bench-report-"))
    out.mkdir(parents=True, exist_ok=True)
    log = out / f"stencil-{args.ranks}.swlog"

    t0 = time.perf_counter()
    write_profile(synthetic_profile(args.ranks), log)
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
