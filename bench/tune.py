#!/usr/bin/env python3
"""`scalewise tune` on the planted program and the proxy apps: the gain found and the noise guard's verdict.

For each case: profile one run with `scalewise run`, then `scalewise tune LOG
--fom result_line` (the app's own figure of merit: the planted program's
median MPI_Allreduce time, each proxy's SCALEWISE_RESULT) and print, side by
side, what dominates, what screening thought and what confirmation on fresh
runs kept, with its gain over the default and the 95% interval.

usage: tune.py [--budget 4] [--cases planted,null,proxies] [--mpi openmpi,mpich] [--size tiny]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
SCALEWISE = ROOT / ".venv" / "bin" / "scalewise"
ENV = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
LAUNCH = {"openmpi": ["mpirun.openmpi", "--oversubscribe", "-n"], "mpich": ["mpiexec.mpich", "-n"]}
PLANTED = {"openmpi": ["--count", "4096", "--iters", "200"], "mpich": ["--count", "131072", "--iters", "60"]}


def cases(which: list[str], mpis: list[str], size: str):
    for mpi in mpis:
        if "planted" in which:
            yield f"collplant {' '.join(PLANTED[mpi][:2])}", mpi, 2, ["collplant", *PLANTED[mpi]]
        if "null" in which:
            yield "collplant, 1 rank", mpi, 1, ["collplant", "--count", "4096", "--iters", "200"]
        if "proxies" in which:
            for app in ("sem", "ocean", "amr", "dft"):
                yield f"{app} --size {size}", mpi, 2, [app, "--size", size]


def tune_case(mpi: str, ranks: int, argv: list[str], budget: float, folder: Path) -> dict:
    exe = ROOT / "build" / mpi / "proxies" / argv[0]
    run = subprocess.run([str(SCALEWISE), "run", "--quiet", "-o", str(folder), "--", *LAUNCH[mpi], str(ranks),
                          str(exe), *argv[1:]], capture_output=True, text=True, env=ENV, timeout=600)
    if run.returncode != 0:
        return {"error": run.stderr.strip().splitlines()[-1]}
    (log,) = folder.glob("*.swlog")
    t0 = time.monotonic()
    out = subprocess.run([str(SCALEWISE), "tune", str(log), "--fom", "result_line", "--budget", str(budget), "--json",
                          "-o", str(folder / "tune")], capture_output=True, text=True, env=ENV, timeout=3600)
    if out.returncode != 0:
        return {"error": out.stderr.strip().splitlines()[-1]}
    return json.loads(out.stdout) | {"seconds": time.monotonic() - t0}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget", type=float, default=4.0)
    ap.add_argument("--cases", default="planted,null,proxies")
    ap.add_argument("--mpi", default="openmpi,mpich")
    ap.add_argument("--size", default="tiny")
    args = ap.parse_args()
    table = Table(title=f"scalewise tune, --budget {args.budget:g} min, 2-core machine", box=None)
    for col in ("case", "mpi", "dominant (share of MPI time, size)", "screening picks", "held-out best",
                "held-out gain (interval, its level)", "runs", "time"):
        table.add_column(col)
    with tempfile.TemporaryDirectory(prefix="scalewise-bench-tune-") as tmp:
        for i, (label, mpi, ranks, argv) in enumerate(cases(args.cases.split(","), args.mpi.split(","), args.size)):
            r = tune_case(mpi, ranks, argv, args.budget, Path(tmp) / str(i))
            if "error" in r:
                table.add_row(label, mpi, r["error"], "", "", "", "", "")
                continue
            targets = ", ".join(f"{t['name']} ({t['pct_mpi']:.0f}%, {t['size']})" for t in r["targets"])
            screen = ", ".join(v for v in r["screening"].values() if v) or "none"
            best = r["best"]
            gain = ("no setting beats the default beyond noise" if best is None else
                    f"{best['gain_pct']:+.1f}% ({best['gain_low_pct']:+.1f}% to {best['gain_high_pct']:+.1f}%, "
                    f"{best['level']:.0%})")
            runs = sum(s["n"] for key in ("sets", "confirmed", "held_out") for s in r[key])
            table.add_row(label, mpi, targets, screen, best["params"] if best else "default", gain, str(runs),
                          f"{r['seconds']:.0f} s")
            Console(width=220).print(table.rows and f"done: {label} {mpi}", style="dim")
    Console(width=220).print(table)


if __name__ == "__main__":
    main()
