#!/usr/bin/env python3
"""Cost of one profiler feature, side by side: bench/overhead.c under the
profiler with the feature off and on (call sites: SCALEWISE_SITES, time bins:
SCALEWISE_BINS), alternating in one session, plus bare runs for scale; prints
the added time per call of the feature.

usage: feature_overhead.py {sites,bins} [--iters N] [--rounds R] [--ranks 1] [--flavours openmpi,mpich]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

from rich.console import Console

from common import build, launcher, run_once, table
from scalewise.launch.preload import library_path

# Each feature: its variable and its "on" value (the default).
FEATURES = {"sites": ("SCALEWISE_SITES", "1"), "bins": ("SCALEWISE_BINS", "64")}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("feature", choices=sorted(FEATURES))
    ap.add_argument("--iters", type=int, default=200000)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--ranks", default="1")
    ap.add_argument("--flavours", default="openmpi,mpich")
    a = ap.parse_args()
    var, on = FEATURES[a.feature]
    modes = (("bare", None), ("off", {var: "0"}), ("on", {var: on}))
    costs = table(f"{a.feature}: added cost per call (ns), profiled with {var} on vs off",
                  "MPI", "ranks", "kernel", "bare min", "off min", "on min", "per call min", "off median",
                  "on median", "per call median")
    with tempfile.TemporaryDirectory() as tmp:
        tmpd = Path(tmp)
        for flavour in a.flavours.split(","):
            exe, lib = build(flavour, "overhead.c", tmpd), library_path(flavour)
            for n in (int(x) for x in a.ranks.split(",")):
                cmd = launcher(flavour, n) + [str(exe), str(a.iters), str(a.reps)]
                samples: dict[str, dict[str, list[float]]] = {}
                calls: dict[str, int] = {}
                for _ in range(a.rounds):
                    for mode, extra in modes:
                        res = run_once(cmd, lib if extra else None, tmpd / "o.swlog", extra)
                        res.pop("hwm", None)
                        for k, (c, ts) in res.items():
                            calls[k] = c
                            samples.setdefault(k, {m: [] for m, _ in modes})[mode] += ts
                for k, s in samples.items():
                    c = calls[k]
                    mins = {m: min(v) for m, v in s.items()}
                    meds = {m: statistics.median(v) for m, v in s.items()}
                    costs.add_row(flavour, str(n), k, f"{mins['bare']:.1f}", f"{mins['off']:.1f}",
                                  f"{mins['on']:.1f}", f"{(mins['on'] - mins['off']) / c:.1f}",
                                  f"{meds['off']:.1f}", f"{meds['on']:.1f}", f"{(meds['on'] - meds['off']) / c:.1f}")
    Console(width=160).print(costs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
