"""Log reading speed, side by side with another version of the reader.

    git archive <commit> src | tar -x -C /tmp/base
    PYTHONPATH=tests .venv/bin/python bench/bench_load.py --baseline-src /tmp/base/src [--ranks 16384] [--rounds 3]

Writes the synthetic 16,384-rank log of bench_report.py (tests/support/profiles.py), then alternates
rounds of this tree's reader and the baseline's, each in its own process
(5 timed loads after one warm-up), and prints the CPU time of a load (min and
median) and the ratio of this tree to the baseline.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from common import ROOT
from scalewise.logfile.writer import write_profile
from support.profiles import stencil_profile

SRC = ROOT / "src"
TIMER = """
import sys, time
import scalewise
scalewise.load(sys.argv[1])
for _ in range(5):
    t = time.process_time(); scalewise.load(sys.argv[1]); print(time.process_time() - t)
"""


def cpu_times(src: Path, log: Path) -> list[float]:
    """CPU seconds of five loads in a child process that imports scalewise from ``src`` (first on its path)."""
    env = dict(os.environ, PYTHONPATH=str(src))
    out = subprocess.run([sys.executable, "-c", TIMER, str(log)], capture_output=True, text=True, check=True, env=env)
    return [float(x) for x in out.stdout.split()]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline-src", type=Path, required=True, help="the src/ folder of the reader to compare with")
    ap.add_argument("--ranks", type=int, default=16384)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="sw-bench-load-") as tmp:
        log = write_profile(stencil_profile(args.ranks), Path(tmp) / "stencil.swlog")
        times: dict[str, list[float]] = {"this tree": [], "baseline": []}
        for _ in range(args.rounds):
            times["baseline"] += cpu_times(args.baseline_src, log)
            times["this tree"] += cpu_times(SRC, log)
    for name, ts in times.items():
        print(f"{name:<10} load CPU min {min(ts):.3f} s, median {statistics.median(ts):.3f} s ({len(ts)} loads)")
    ratio = min(times["this tree"]) / min(times["baseline"]), \
        statistics.median(times["this tree"]) / statistics.median(times["baseline"])
    print(f"ratio this tree / baseline: {ratio[0]:.3f} (min), {ratio[1]:.3f} (median)")


if __name__ == "__main__":
    main()
