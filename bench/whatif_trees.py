#!/usr/bin/env python3
"""What Open MPI's own trees change in a prediction: the same traces replayed with this tree's
collectives and with another tree's (``--baseline``: its ``src`` directory, e.g. from
``git archive REV src | tar -x -C DIR``), for Open MPI 4.1 and 5.0, one rank per node and ranks
sharing nodes (``--ranks-per-node``, by slot).  Per trace and placement: the predicted wall time of
each, their ratio, and the bytes of the trace's collectives that cross nodes under each.

The replay runs in a child Python per tree (PYTHONPATH set to that tree's src), so both trees'
code runs unchanged; the C engine is this tree's build for both.

usage: whatif_trees.py --baseline DIR/src [--network gige] [--local edr-ib] [--ranks-per-node 2,3] TRACE...
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIBRARIES = ("openmpi-4.1", "openmpi-5.0.11")
ROOTED = {"MPI_Bcast", "MPI_Reduce", "MPI_Gather", "MPI_Scatter"}
COLLECTIVES = ROOTED | {"MPI_Allreduce", "MPI_Barrier", "MPI_Allgather", "MPI_Alltoall"}


def calls(trace) -> dict[tuple[str, int, int], int]:
    """(function, bytes, root) -> calls on the world communicator, from rank 0's events."""
    ev = trace.ranks[0].columns
    out: dict[tuple[str, int, int], int] = {}
    for f, b, comm, root in zip(ev["func"], ev["bytes"], ev["comm"], ev["root"]):
        name = trace.functions[int(f)]
        if name in COLLECTIVES and int(comm) == 0:
            key = (name, int(b), int(root) if name in ROOTED else 0)
            out[key] = out.get(key, 0) + 1
    return out


def crossing(library: str, P: int, rpn: int | None, per_call: dict) -> int:
    """Bytes of these calls' schedules between ranks of different nodes."""
    from scalewise.whatif.api import nodes_of
    from scalewise.whatif.collectives import layout, schedule
    from scalewise.whatif.collectives.algorithms import SEND
    node = nodes_of(P, rpn, "slot") if rpn else list(range(P))
    total = 0
    for (func, nbytes, root), k in per_call.items():
        _, s = schedule(library, func, P, nbytes, root, True, layout(library, tuple(node)))
        total += k * sum(b for r, phases in enumerate(s) for ph in phases for d, q, b in ph
                         if d == SEND and node[r] != node[q])
    return total


def worker(args) -> None:
    from scalewise.whatif import read_trace, replay
    rows = []
    for path in args.traces:
        trace = read_trace(path)
        per_call = calls(trace)
        for library in LIBRARIES:
            for rpn in [None, *args.ranks_per_node]:
                if rpn and rpn >= trace.nranks:
                    continue
                kw = dict(ranks_per_node=rpn, local=args.local) if rpn else {}
                pred = replay(trace, args.network, library=library, **kw)[0]
                rows.append(dict(trace=Path(path).name, P=trace.nranks, library=library, rpn=rpn or 1,
                                 wall=pred.wall_time, crossing=crossing(library, trace.nranks, rpn, per_call)))
    json.dump(rows, sys.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("traces", nargs="+")
    ap.add_argument("--baseline", help="the other tree's src directory")
    ap.add_argument("--network", default="gige")
    ap.add_argument("--local", default="edr-ib", help="network inside a node")
    ap.add_argument("--ranks-per-node", default="2,3", type=lambda t: [int(x) for x in t.split(",")])
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args)
    if not args.baseline:
        ap.error("--baseline: the other tree's src directory is required")
    results = {}
    for label, src in (("before", args.baseline), ("after", str(ROOT / "src"))):
        env = dict(os.environ, PYTHONPATH=src, SCALEWISE_BUILD=str(ROOT / "build"))
        cmd = [sys.executable, __file__, "--worker", "--network", args.network, "--local", args.local,
               "--ranks-per-node", ",".join(map(str, args.ranks_per_node)), *args.traces]
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
        if done.returncode:
            sys.exit(f"whatif_trees.py: the {label} replay failed: {done.stderr.strip().splitlines()[-1]}")
        results[label] = json.loads(done.stdout)
    print(f"network {args.network}, inside a node {args.local}; wall in s, crossing: collective bytes between nodes")
    print(f"{'trace':<44} {'P':>2} {'library':<15} {'rpn':>3} {'wall before':>12} {'wall after':>11} "
          f"{'change':>8} {'crossing before':>16} {'crossing after':>15}")
    for b, a in zip(results["before"], results["after"]):
        change = a["wall"] / b["wall"] - 1
        print(f"{b['trace']:<44} {b['P']:>2} {b['library']:<15} {b['rpn']:>3} {b['wall']:>12.4f} {a['wall']:>11.4f} "
              f"{change:>+8.2%} {b['crossing']:>16} {a['crossing']:>15}")


if __name__ == "__main__":
    main()
