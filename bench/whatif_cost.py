#!/usr/bin/env python3
"""CPU seconds of the whole `scalewise whatif` command, this checkout's Python against another
checkout's (``--before DIR``: its ``src``, e.g. from ``git archive``), alternating A B A B in one run,
on each trace given; the engine is the same library (this checkout's build) on both sides, and both
sides' output must be the same bytes.  Each side runs once untimed first (the trace in the page cache,
and the modules' bytecode written, unless PYTHONDONTWRITEBYTECODE is set: then every run compiles
scalewise's modules from source, as the line printed first says).

usage: whatif_cost.py --before /tmp/before TRACE... [--rounds 5] [--network gige,ideal] [--json]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCALEWISE = ROOT / ".venv" / "bin" / "scalewise"


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, bytes]:
    """The command's CPU seconds (user + system of it and its children) and its output."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(argv, env=env, capture_output=True, check=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("traces", nargs="+")
    ap.add_argument("--before", required=True, help="a checkout (or `git archive ... src` extracted) to compare with")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--network", default="gige,ideal")
    ap.add_argument("--json", action="store_true", help="time `--json` (else the table)")
    a = ap.parse_args()
    base = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    base.setdefault("SCALEWISE_BUILD", str(ROOT / "build"))  # one engine for both sides
    sides = {"before": {**base, "PYTHONPATH": str(Path(a.before) / "src")}, "this": base}
    cached = "not written (PYTHONDONTWRITEBYTECODE)" if os.environ.get("PYTHONDONTWRITEBYTECODE") else "cached"
    print(f"bytecode of the modules: {cached}")
    print(f"{'trace':40} {'side':6} {'CPU s, each round':>40} {'median':>7}")
    for trace in a.traces:
        argv = [str(SCALEWISE), "whatif", trace, "--network", a.network, *(["--json"] if a.json else [])]
        cpu: dict[str, list[float]] = {s: [] for s in sides}
        outputs = {timed(argv, env)[1] for env in sides.values()}  # untimed: warm the caches
        for _ in range(a.rounds):
            for side, env in sides.items():
                seconds, out = timed(argv, env)
                cpu[side].append(seconds)
                outputs.add(out)
        for side, values in cpu.items():
            runs = " ".join(f"{v:.3f}" for v in values)
            print(f"{Path(trace).name[-40:]:40} {side:6} {runs:>40} {statistics.median(values):7.3f}")
        ratio = statistics.median(cpu["before"]) / statistics.median(cpu["this"])
        print(f"{'':40} before / this, medians: {ratio:.2f}; outputs {'identical' if len(outputs) == 1 else 'DIFFER'}")
        if len(outputs) != 1:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
