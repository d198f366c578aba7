#!/usr/bin/env python3
"""Observe which algorithm Intel MPI 2021 runs per collective, byte count and rank count, one rank per
node (tests/support/intelmpi_observe.py says how), and write the table the whatif replay reads for the
CPU Intel MPI recognises on this host (src/scalewise/whatif/data/intelmpi-2021-<cpu>-observed.json: its
tuning files are per CPU, tuning_<cpu>_<fabrics>.dat).  Needs the PyPI Intel MPI
(tests/support/pypi_mpis.py installs it), gdb and unshare.

    scripts/intelmpi-observe.py [--ranks 2,3,...] [--sizes 8,24,...] [-o FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from scalewise.whatif.collectives.intelmpi import algorithm  # noqa: E402
from support.intelmpi_observe import COLLECTIVES, build, observe, tuning_file  # noqa: E402
from support.pypi_mpis import loaded_env  # noqa: E402

# 8 B .. 1 MiB: each power of two, and a size inside each interval between two (3 * 2^(k-2)): Intel MPI's
# table can decide a power of two one way and the sizes just off it another (docs/whatif.md)
SIZES = sorted([8 << k for k in range(18)] + [12 << k for k in range(17)])
DATA = Path(__file__).resolve().parent.parent / "src/scalewise/whatif/data"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", default="2,3,4,5,6,7,8")
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("-o", type=Path)
    args = ap.parse_args()
    env = loaded_env("intelmpi")
    sizes = sorted(map(int, args.sizes.split(",")))
    with tempfile.TemporaryDirectory() as tmp:
        exe = build(env, Path(tmp))
        cpu, tuning = tuning_file(env, exe)
        args.o = args.o or DATA / f"intelmpi-2021-{cpu}-observed.json"
        print("tuning file", tuning, "->", args.o, file=sys.stderr, flush=True)
        # rank counts already in the file are kept: each run adds its own (a run per rank count is minutes)
        doc = json.loads(args.o.read_text()) if args.o.is_file() else {}
        table: dict[str, dict[str, dict[str, list[str]]]] = doc.get("observed", {})
        for P in map(int, args.ranks.split(",")):
            seen = observe(env, exe, list(COLLECTIVES), P, sizes)
            for coll, calls in seen.items():
                # keyed by the byte count the trace records (docs/trace-format.md): Alltoallv's is the total
                # sent, Barrier's 0 (one entry: its decision took no size)
                scale = P if coll == "alltoallv" else 1
                cells = {str(n * scale): funcs for n, funcs in calls.items()}
                if coll == "barrier":
                    assert len({tuple(f) for f in cells.values()}) == 1, cells
                    cells = {"0": cells[str(sizes[0])]}
                table.setdefault(coll, {})[str(P)] = cells
                print(coll, P, {n: algorithm(coll, f) for n, f in cells.items()}, file=sys.stderr, flush=True)
            write(args.o, table, cpu, tuning)


def write(path: Path, table: dict, cpu: str, tuning: str) -> None:
    ranks = sorted({int(P) for cells in table.values() for P in cells})
    doc = {"library": "Intel(R) MPI Library 2021.19.0 (PyPI impi-rt 2021.19.0)",
           "setting": f"one rank per node, libfabric tcp;ofi_rxm, CPU {cpu}, tuning file {tuning}",
           "cpu": cpu,
           "command": "scripts/intelmpi-observe.py --ranks " + ",".join(map(str, ranks)),
           "observed": {c: dict(sorted(cells.items(), key=lambda kv: int(kv[0]))) for c, cells in table.items()}}
    path.write_text(json.dumps(doc, indent=1) + "\n")


if __name__ == "__main__":
    main()
