#!/usr/bin/env python3
"""Trace mode: its added cost per call beside profile mode, and its size on the proxies.

Cost: bench/overhead.c run bare, profiled, and profiled with SCALEWISE_TRACE=1,
alternating, in one session; prints the time added per call by the profile
and by the trace on top of it (from the minimum and the median iteration).
Size: each proxy app traced at --ranks under both MPIs; prints the file size,
the events and the bytes per event (target at most 8).

usage: bench_trace.py [--iters N] [--rounds R] [--ranks 1,2] [--proxy-ranks 4] [--size tiny]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from rich.console import Console
from rich.table import Table

from common import ENV, ROOT, build, launcher, run_once, table
from scalewise.launch.preload import library_path
from scalewise.logfile.tracefile import read_trace

APPS = ("sem", "ocean", "amr", "dft")


def cost_table(a, tmpd: Path) -> Table:
    t = table("Added cost per intercepted call, ns (profile vs bare; trace on top of profile)",
              "MPI", "ranks", "kernel", "bare min", "profile min", "trace min", "profile added/call min",
              "trace added/call min", "profile added/call median", "trace added/call median")
    for flavour in a.flavours.split(","):
        lib = library_path(flavour)
        exe = build(flavour, "overhead.c", tmpd)
        for n in (int(x) for x in a.ranks.split(",")):
            cmd = launcher(flavour, n) + [str(exe), str(a.iters), str(a.reps)]
            samples: dict[str, dict[str, list[float]]] = {}
            modes = (("bare", None, {}), ("prof", lib, {}),
                     ("trace", lib, {"SCALEWISE_TRACE": "1", "SCALEWISE_TRACEFILE": str(tmpd / "o.swtrace")}))
            for _ in range(a.rounds):
                for mode, pre, extra in modes:
                    res = run_once(cmd, pre, tmpd / "o.swlog", extra)
                    res.pop("hwm")
                    for k, (calls, ts) in res.items():
                        samples.setdefault(k, {"calls": [calls], "bare": [], "prof": [], "trace": []})[mode] += ts
            for k, s in samples.items():
                c = s["calls"][0]
                lo = {m: min(s[m]) for m in ("bare", "prof", "trace")}
                med = {m: statistics.median(s[m]) for m in ("bare", "prof", "trace")}
                t.add_row(flavour, str(n), k, f"{lo['bare']:.1f}", f"{lo['prof']:.1f}", f"{lo['trace']:.1f}",
                          f"{(lo['prof'] - lo['bare']) / c:.1f}", f"{(lo['trace'] - lo['prof']) / c:.1f}",
                          f"{(med['prof'] - med['bare']) / c:.1f}", f"{(med['trace'] - med['prof']) / c:.1f}")
    return t


def size_table(a, tmpd: Path) -> Table:
    t = table(f"Trace size of the proxies, {a.proxy_ranks} ranks, --size {a.size}",
              "MPI", "app", "events", "file bytes", "bytes per event", "capped")
    for flavour in a.flavours.split(","):
        for app in APPS:
            trace = tmpd / f"{app}-{flavour}.swtrace"
            env = {**ENV, "LD_PRELOAD": str(library_path(flavour)), "SCALEWISE_LOGFILE": str(tmpd / "p.swlog"),
                   "SCALEWISE_TRACE": "1", "SCALEWISE_TRACEFILE": str(trace)}
            cmd = launcher(flavour, a.proxy_ranks) + [str(ROOT / "build" / flavour / "proxies" / app), "--size", a.size]
            subprocess.run(cmd, env=env, capture_output=True, check=True, timeout=600)
            tr = read_trace(trace)
            nbytes = trace.stat().st_size
            t.add_row(flavour, app, str(tr.nevents), str(nbytes), f"{nbytes / max(tr.nevents, 1):.2f}",
                      "yes" if tr.capped else "no")
    return t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iters", type=int, default=50000)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--ranks", default="1,2")
    ap.add_argument("--flavours", default="openmpi,mpich")
    ap.add_argument("--proxy-ranks", type=int, default=4)
    ap.add_argument("--size", default="tiny")
    a = ap.parse_args()
    console = Console()
    with tempfile.TemporaryDirectory() as tmp:
        tmpd = Path(tmp)
        console.print(size_table(a, tmpd))
        console.print(cost_table(a, tmpd))
    return 0


if __name__ == "__main__":
    sys.exit(main())
