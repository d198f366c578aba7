#!/usr/bin/env python3
"""Instructions the profiler adds per call, counted by valgrind (callgrind):
unlike time, the same on a loaded machine as on a quiet one.

Runs bench/overhead.c once per MPI and library under callgrind, one rank
(a singleton), and for each function its kernels call prints the wrapper's
inclusive instruction count minus that of the real MPI function it calls,
per call, and that minus the blocking path's (MPI_Allreduce).  With
``--real``, also a run without the profiler, and per function how many more
instructions the real MPI call itself runs under the profiler than bare
(whether the profiler makes the library do more work, not only its own).  First calls
(symbol lookup, a new call site) and the sampled own-time calls are
included, spread over --iters calls.  With ``--baseline DIR`` (another
tree's build/ folder) the same for that tree's library, side by side.

usage: overhead_instr.py [--iters N] [--flavours openmpi,mpich] [--baseline DIR] [--real]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from rich.console import Console

from common import ENV, build, table
from scalewise.launch.preload import library_path

FUNCTIONS = ["Allreduce", "Test", "Testany", "Testall", "Testsome", "Iprobe", "Improbe", "Put", "Get",
             "Accumulate", "Get_accumulate", "Fetch_and_op", "Win_flush", "Win_flush_all", "Win_lock",
             "Win_unlock", "Comm_test_inter", "Cart_coords", "Type_get_envelope", "Pack"]
LINE = re.compile(r"\s*([\d,]+) \([^)]*\)\s+\S+:P?MPI_(\w+) \[(\S+)\]")


def inclusive_counts(exe: Path, lib: Path | None, iters: int, tmp: Path) -> tuple[dict[str, int], dict[str, int]]:
    """Per function: the inclusive instruction count of the wrapper and of the real call (all calls)."""
    out = tmp / f"callgrind-{lib.parent.name if lib else 'bare'}.out"
    env = {**ENV, "SCALEWISE_LOGFILE": str(tmp / "o.swlog"), "OMPI_MCA_osc": "sm,pt2pt",
           "OMPI_MCA_btl": "self,vader", **({"LD_PRELOAD": str(lib)} if lib else {})}
    subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", str(exe), str(iters), "1"],
                   env=env, capture_output=True, check=True)
    # Run outside the repository: there callgrind_annotate shortens the source
    # paths and leaves the inlined code out of the wrapper's inclusive count.
    text = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", str(out)],
                          capture_output=True, text=True, check=True, cwd=tmp).stdout
    wrapper: dict[str, int] = {}
    real: dict[str, int] = {}
    for m in (LINE.match(line) for line in text.splitlines()):
        if m:
            (wrapper if "libscalewise" in m.group(3) else real)[m.group(2)] = int(m.group(1).replace(",", ""))
    return wrapper, real


def added_instructions(exe: Path, lib: Path, iters: int, tmp: Path) -> dict[str, float]:
    """Per function: instructions inside the wrapper, the real call excluded, per call."""
    wrapper, real = inclusive_counts(exe, lib, iters, tmp)
    return {f: (wrapper[f] - real.get(f, 0)) / iters for f in FUNCTIONS if f in wrapper}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iters", type=int, default=2000)
    ap.add_argument("--flavours", default="openmpi,mpich")
    ap.add_argument("--baseline", type=Path, help="build/ folder of another tree")
    ap.add_argument("--real", action="store_true", help="also the real call's count under the profiler vs bare")
    a = ap.parse_args()
    cols = ["MPI", "function"] + (["baseline", "baseline vs blocking"] if a.baseline else []) + [
        "this tree", "this tree vs blocking"] + (["real call bare", "real call profiled - bare"] if a.real else [])
    out = table("Instructions added per call (wrapper minus the real call), callgrind", *cols)
    with tempfile.TemporaryDirectory() as tmp:
        tmpd = Path(tmp)
        for flavour in a.flavours.split(","):
            exe = build(flavour, "overhead.c", tmpd)
            libs = ([a.baseline / flavour / "libscalewise.so"] if a.baseline else []) + [library_path(flavour)]
            counts = [added_instructions(exe, lib, a.iters, tmpd) for lib in libs]
            if a.real:
                _, bare = inclusive_counts(exe, None, a.iters, tmpd)
                _, profiled = inclusive_counts(exe, library_path(flavour), a.iters, tmpd)
            for f in FUNCTIONS:
                row = [flavour, f]
                for c in counts:
                    row += [f"{c[f]:.1f}", f"{c[f] - c['Allreduce']:+.1f}"]
                if a.real:
                    row += [f"{bare[f] / a.iters:.1f}", f"{(profiled[f] - bare[f]) / a.iters:+.1f}"]
                out.add_row(*row)
    Console(width=200).print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
