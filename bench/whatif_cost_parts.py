#!/usr/bin/env python3
"""Where the `scalewise whatif --json` command's CPU goes, step by step: a fresh interpreter per round
that runs the command's steps in order and prints the CPU seconds (user + system) after each one.

usage: whatif_cost_parts.py TRACE [--network gige,ideal] [--rounds 5]
"""

from __future__ import annotations

import argparse
import ast
import statistics
import subprocess
import sys
from pathlib import Path

PYTHON = Path(__file__).resolve().parents[1] / ".venv" / "bin" / "python"
STEPS = r"""
import resource, sys
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
out = {"interpreter": cpu()}
import numpy
out["+ numpy"] = cpu()
import pydantic, yaml
out["+ pydantic, yaml"] = cpu()
import scalewise.cli.main, scalewise.cli.whatif, scalewise.whatif.predict
out["+ the command's other imports"] = cpu()
from pathlib import Path
from scalewise.whatif.network import network
nets = [network(n) for n in sys.argv[2].split(",")]
out["+ networks"] = cpu()
from scalewise.logfile.tracefile import read_trace
read_trace(sys.argv[1])
out["+ trace read (header, tables)"] = cpu()
from scalewise.cli.output import echo_json
from scalewise.whatif.predict import predict
p = predict(Path(sys.argv[1]), sys.argv[2].split(","))
out["+ predict (log read, decode, templates, replay)"] = cpu()
import io, contextlib
with contextlib.redirect_stdout(io.StringIO()):
    echo_json(p.to_json_dict())
out["+ JSON printed"] = cpu()
print(repr(out))
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace")
    ap.add_argument("--network", default="gige,ideal")
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    rounds = []
    for _ in range(a.rounds):
        done = subprocess.run([str(PYTHON), "-c", STEPS, a.trace, a.network], capture_output=True, text=True,
                              check=True)
        rounds.append(ast.literal_eval(done.stdout.strip().splitlines()[-1]))
    print(f"{'step (cumulative)':50} {'median CPU s':>12}   each round")
    for step in rounds[0]:
        values = [r[step] for r in rounds]
        print(f"{step:50} {statistics.median(values):12.3f}   {' '.join(f'{v:.3f}' for v in values)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
