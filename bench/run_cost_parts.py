#!/usr/bin/env python3
"""The Python side of `scalewise run`, taken apart: CPU seconds of each step.

Each step is a `python -c` that stops after it, every step including the
ones before it, so the difference between two rows is that step's CPU
(user + system, median over the rounds): the interpreter, the command's
imports, the launch preparation (launch line, the application's MPI,
the environment; with and without running `ldd`), `--quiet`'s container
check, the log reader's and the summary's imports, reading the log, the
summary printed, and the same without the interpreter's exit walking it all;
then the lean path's (report/run/lean.py) imports, log read and summary.
The log read is one `scalewise run` of bench/hello_mpi.c on 2 ranks.

usage: run_cost_parts.py [--rounds 7] [--flavour openmpi]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYTHON = ROOT / ".venv" / "bin" / "python"
LAUNCHER = {"openmpi": "mpirun.openmpi", "mpich": "mpirun.mpich"}


def steps(flavour: str, app: Path, log: Path) -> dict[str, str]:
    cli = "import io, os, scalewise.cli.main, scalewise.cli.run\n"
    prep = ("from scalewise.launch.launchline import parse_launch_line, check_flavours\n"
            "from scalewise.launch.preload import preload_env\n"
            f"preload_env(check_flavours(parse_launch_line([{LAUNCHER[flavour]!r}, '-np', '2', {str(app)!r}]), None))\n")
    reader = "import scalewise.logfile.reader\n"
    lean = "import scalewise.logfile.plain, scalewise.report.run.lean\n"
    lean_read = f"rows = scalewise.logfile.plain.read_plain({str(log)!r})\n"
    lean_printed = ("from rich.console import Console\n"
                    "scalewise.report.run.lean.print_lean_summary(rows, Console(file=io.StringIO(), width=100))\n")
    summary = "import scalewise.report.run.terminal\n"
    read = f"p = scalewise.logfile.reader.read_profile({str(log)!r})\n"
    printed = ("from rich.console import Console\n"
               "scalewise.report.run.terminal.print_summary(p, Console(file=io.StringIO(), width=100))\n")
    return {
        "interpreter": "pass",
        "CLI and launch imports": cli,
        "+ launch preparation": cli + prep,
        "+ ldd run once more": cli + f"from scalewise.launch import mpis\nmpis._ldd({str(app)!r})\n" + prep,
        "+ --quiet's container check": cli + prep + f"from scalewise.logfile.container import log_counts\nlog_counts({str(log)!r})\n",
        "+ reader imports": cli + reader + prep,
        "+ summary imports": cli + reader + summary + prep,
        "+ log read": cli + reader + summary + prep + read,
        "+ summary printed": cli + reader + summary + prep + read + printed,
        "same, exit without teardown": cli + reader + summary + prep + read + printed + "os._exit(0)\n",
        # the lean path scalewise run takes (report/run/lean.py)
        "+ lean summary imports": cli + lean + prep,
        "+ lean log read": cli + lean + prep + lean_read,
        "+ lean summary printed": cli + lean + prep + lean_read + lean_printed,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--flavour", default="openmpi", choices=sorted(LAUNCHER))
    a = ap.parse_args()
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    with tempfile.TemporaryDirectory() as tmp:
        app = Path(tmp) / "hello"
        subprocess.run([f"mpicc.{a.flavour}", "-O2", "-o", str(app), str(ROOT / "bench" / "hello_mpi.c")], check=True)
        done = subprocess.run([str(ROOT / ".venv" / "bin" / "scalewise"), "run", "--quiet", "-o", tmp, "--",
                               LAUNCHER[a.flavour], "-np", "2", str(app)], env=env, capture_output=True, text=True,
                              check=True)
        log = Path(done.stdout.strip().splitlines()[-1].removeprefix("profile: "))
        code = steps(a.flavour, app, log)
        cpu: dict[str, list[float]] = {k: [] for k in code}
        for _ in range(a.rounds):
            for name, text in code.items():
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                subprocess.run([str(PYTHON), "-c", text], check=True, env=env)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu[name].append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    print(f"{'step (cumulative)':30} {'CPU s':>7}")
    for name, values in cpu.items():
        print(f"{name:30} {statistics.median(values):7.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
