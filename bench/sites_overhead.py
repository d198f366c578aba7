#!/usr/bin/env python3
"""Cost of call sites, side by side: bench/overhead.c under the profiler with
call sites off (SCALEWISE_SITES=0) and on, alternating in one session, plus
bare runs for scale; prints the added time per call of the sites.

usage: sites_overhead.py [--iters N] [--rounds R] [--ranks 1] [--flavours openmpi,mpich]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))
from overhead import ROOT, build, launcher, run_once  # noqa: E402

sys.path.insert(0, str(ROOT / "src"))
from scalewise.launch.preload import library_path  # noqa: E402

MODES = (("bare", None), ("sites off", {"SCALEWISE_SITES": "0"}), ("sites on", {"SCALEWISE_SITES": "1"}))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iters", type=int, default=200000)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--ranks", default="1")
    ap.add_argument("--flavours", default="openmpi,mpich")
    a = ap.parse_args()
    table = Table(title="Call sites: added cost per call (ns), profiled with sites on vs off")
    for col in ("MPI", "ranks", "kernel", "bare min", "off min", "on min", "sites/call min", "off median",
                "on median", "sites/call median"):
        table.add_column(col, justify="right")
    with tempfile.TemporaryDirectory() as tmp:
        tmpd = Path(tmp)
        for flavour in a.flavours.split(","):
            exe, lib = build(flavour, "overhead.c", tmpd), library_path(flavour)
            for n in (int(x) for x in a.ranks.split(",")):
                cmd = launcher(flavour, n) + [str(exe), str(a.iters), str(a.reps)]
                samples: dict[str, dict[str, list[float]]] = {}
                calls: dict[str, int] = {}
                for _ in range(a.rounds):
                    for mode, extra in MODES:
                        res = run_once(cmd, lib if extra else None, tmpd / "o.swlog", extra)
                        res.pop("hwm", None)
                        for k, (c, ts) in res.items():
                            calls[k] = c
                            samples.setdefault(k, {m: [] for m, _ in MODES})[mode] += ts
                for k, s in samples.items():
                    c = calls[k]
                    mins = {m: min(v) for m, v in s.items()}
                    meds = {m: statistics.median(v) for m, v in s.items()}
                    table.add_row(flavour, str(n), k, f"{mins['bare']:.1f}", f"{mins['sites off']:.1f}",
                                  f"{mins['sites on']:.1f}", f"{(mins['sites on'] - mins['sites off']) / c:.1f}",
                                  f"{meds['sites off']:.1f}", f"{meds['sites on']:.1f}",
                                  f"{(meds['sites on'] - meds['sites off']) / c:.1f}")
    Console(width=160).print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
