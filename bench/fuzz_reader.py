"""Fuzz the log reader: structure-aware mutants of valid logs, checksums recomputed.

    PYTHONPATH=tests .venv/bin/python bench/fuzz_reader.py [--mutants 20000] [--seed 1] [--time-limit 20] [--memory-mib 1024]

Seeds: the golden 1.0 log (a real MPICH job), the same log in big-endian byte
order, and a synthetic 16-rank halo-exchange log from the Python writer.
Each mutant is read in a child process whose address space may grow by at
most --memory-mib and which must answer within --time-limit seconds; a read
that succeeds is also analysed and summarised.  Prints how many mutants gave
a clean error, read successfully, or ended in a traceback, a hang or a memory
blow-up, and the first failures.  The fixed-seed short run is
tests/logfile/test_fuzz.py.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from scalewise.logfile.writer import write_profile
from support.fuzzing import read_all
from support.mutants import decode, encode, mutants
from support.profiles import stencil_profile

GOLDEN = Path(__file__).resolve().parents[1] / "tests" / "data" / "golden-1.0-mpich-ring.swlog"


def seeds(workdir: Path) -> list[bytes]:
    big_endian = decode(GOLDEN.read_bytes())
    big_endian.order = ">"
    return [GOLDEN.read_bytes(), encode(big_endian), write_profile(stencil_profile(16), workdir / "s.swlog").read_bytes()]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mutants", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--time-limit", type=float, default=20.0)
    ap.add_argument("--memory-mib", type=int, default=1024)
    args = ap.parse_args()
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="sw-fuzz-") as tmp:
        counts, failures = read_all(mutants(seeds(Path(tmp)), args.mutants, args.seed), Path(tmp), args.time_limit,
                                    args.memory_mib << 20)
    elapsed = time.perf_counter() - start
    print(f"mutants {args.mutants:,} (seed {args.seed}) in {elapsed:.0f} s, load average {os.getloadavg()[0]:.1f}")
    for outcome, n in counts.items():
        print(f"  {outcome:<12} {n:7,}")
    for what, answer in failures[:20]:
        print(f"  FAIL {what}: {answer}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
