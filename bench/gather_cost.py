#!/usr/bin/env python3
"""Rank 0's cost of the log phase at MPI_Finalize (pack, gather, write the
log; docs/log-gather.md) as the rank count grows: bench/logsize.c under the
profiler, with bench/gather_clock.c preloaded after it to time rank 0's main
thread from the Barrier that opens the phase to the profiler's PMPI_Finalize.
Per rank count: the batched gather with its default bound, with a tiny bound
(--tiny bytes: every rank's block cut into many batches) and, with --old
LIB, a profiler library built from the one-Gatherv writer, alternating
within each round.  CPU time is the figure to read on a busy machine; the
wall time is printed beside it.

usage: gather_cost.py [--ranks 4,8,16,32] [--rounds 5] [--tiny 256] [--old build/openmpi/libscalewise.so]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from rich.console import Console

from common import ENV, ROOT, build, launcher, table
from scalewise import load
from scalewise.launch.preload import library_path

FLAVOUR = "openmpi"


def clock_library(outdir: Path) -> Path:
    lib = outdir / "gather_clock.so"
    subprocess.run([f"mpicc.{FLAVOUR}", "-O2", "-shared", "-fPIC", "-o", str(lib),
                    str(ROOT / "bench" / "gather_clock.c"), "-ldl"], check=True)
    return lib


def one_run(exe: Path, ranks: int, profiler: Path, clock: Path, log: Path, bound: int | None) -> tuple[float, float]:
    """Rank 0's CPU and wall time of the log phase, in ms."""
    env = {**ENV, "LD_PRELOAD": f"{profiler} {clock}", "SCALEWISE_LOGFILE": str(log)}
    env.pop("SCALEWISE_GATHER_BATCH_BYTES", None)
    if bound:
        env["SCALEWISE_GATHER_BATCH_BYTES"] = str(bound)
    for attempt in (1, 2):
        res = subprocess.run(launcher(FLAVOUR, ranks) + [str(exe), "20"], env=env, capture_output=True, text=True,
                             timeout=600)
        if not res.returncode:
            break
        # Reported, not hidden: on a loaded machine a large oversubscribed launch can fail to start a rank.
        print(f"gather_cost: {ranks} ranks, {profiler.name}, bound {bound}: run failed (exit {res.returncode}, "
              f"attempt {attempt}):\n{res.stderr[-1500:]}", file=sys.stderr, flush=True)
    else:
        sys.exit(1)
    out = res.stdout
    line = next(x for x in out.splitlines() if x.startswith("logphase "))
    fields = dict(f.split("=") for f in line.split()[1:])
    assert load(log).nranks == ranks
    return float(fields["cpu_us"]) / 1e3, float(fields["wall_us"]) / 1e3


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", default="4,8,16,32")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--tiny", type=int, default=256)
    ap.add_argument("--old", type=Path, help="a libscalewise.so (Open MPI) with the one-Gatherv writer")
    a = ap.parse_args()
    modes = [("batched", library_path(FLAVOUR), None), (f"batched, {a.tiny} B bound", library_path(FLAVOUR), a.tiny)]
    if a.old:
        modes.append(("one Gatherv (before)", a.old.resolve(), None))
    t = table(f"Rank 0's log phase at MPI_Finalize, Open MPI, bench/logsize.c (ms; median and min of {a.rounds})",
              "ranks", "mode", "log bytes", "CPU median", "CPU min", "wall median")
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        exe, clock = build(FLAVOUR, "logsize.c", d), clock_library(d)
        for ranks in (int(x) for x in a.ranks.split(",")):
            got: dict[str, list[tuple[float, float]]] = {m[0]: [] for m in modes}
            size: dict[str, int] = {}
            for _ in range(a.rounds):
                for name, lib, bound in modes:
                    log = d / f"{ranks}.swlog"
                    got[name].append(one_run(exe, ranks, lib, clock, log, bound))
                    size[name] = log.stat().st_size
            for name, _, _ in modes:
                cpu = [c for c, _ in got[name]]
                print(ranks, name, size[name], [round(c, 2) for c in cpu], [round(w, 1) for _, w in got[name]],
                      flush=True)
                t.add_row(str(ranks), name, f"{size[name]:,}", f"{statistics.median(cpu):.2f}", f"{min(cpu):.2f}",
                          f"{statistics.median(w for _, w in got[name]):.1f}")
    Console(width=140).print(t)
    return 0


if __name__ == "__main__":
    sys.exit(main())
