#!/usr/bin/env python3
"""CPU seconds of the imports a `scalewise run` summary could need, each in a
fresh interpreter: what a lean summary path may afford within 0.3 s.

Each row is `python -c "import X"` (user + system, median over the rounds,
alternating rows in one session), and the same minus the bare interpreter.

usage: import_cost.py [--rounds 7] [--only TEXT,TEXT]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
from pathlib import Path

PYTHON = Path(__file__).resolve().parents[1] / ".venv" / "bin" / "python"
ROWS = {
    "interpreter": "pass",
    "numpy": "import numpy",
    "pandas (with numpy, pyarrow)": "import pandas",
    "pyarrow": "import pyarrow",
    "pydantic": "import pydantic",
    "rich (console, table)": "import rich.console, rich.table",
    "pyelftools": "import elftools.elf.elffile",
    "log container (struct, zlib)": "import scalewise.logfile.container",
    "log reader": "import scalewise.logfile.reader",
    "log reader + terminal summary": "import scalewise.logfile.reader, scalewise.report.run.terminal",
    "lean summary path (report/run/lean)": "import scalewise.report.run.lean",
    "lean, without rich": "import scalewise.logfile.plain, scalewise.analysis.run.plain",
    "launch package (scalewise.launch)": "import scalewise.launch",
    "scalewise run's command (cli.run)": "import scalewise.cli.run",
    "whatif command (predict, table)": "import scalewise.cli.whatif, scalewise.whatif.predict, "
                                       "scalewise.report.whatif.table",
    "whatif page (frames, figures)": "import scalewise.whatif.compare, scalewise.logfile.reader, "
                                     "scalewise.report.whatif.html",
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--only", help="the interpreter row and the rows whose name contains one of these (commas)")
    a = ap.parse_args()
    rows = {k: v for k, v in ROWS.items() if not a.only or k == "interpreter" or any(t in k for t in a.only.split(","))}
    cpu: dict[str, list[float]] = {k: [] for k in rows}
    for _ in range(a.rounds):
        for name, code in rows.items():
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            subprocess.run([str(PYTHON), "-c", code], check=True)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu[name].append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    base = statistics.median(cpu["interpreter"])
    print(f"{'import':32} {'CPU s':>7} {'minus interpreter':>18}")
    for name, values in cpu.items():
        med = statistics.median(values)
        print(f"{name:32} {med:7.3f} {med - base:18.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
