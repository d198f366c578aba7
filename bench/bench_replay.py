"""Replay engine speed: synthetic stencil traces (halo exchange with four
neighbours, then an 8-byte Allreduce, every iteration) on 1,024 and 16,384
ranks, at growing lengths, replayed on EDR InfiniBand with Open MPI's
collective algorithms.  Prints events per second of engine CPU time and how
the rate holds as events grow (linear scaling keeps it flat).

    PYTHONPATH=tests .venv/bin/python bench/bench_replay.py [--ranks 1024,16384] [--steps 25,50,100:2,4,8] [--repeat 3]
"""

from __future__ import annotations

import argparse
import time

from scalewise.whatif import engine, network
from scalewise.whatif.streams import build_streams
from support.traces import halo_allreduce


def measure(P: int, steps: int, repeat: int) -> dict:
    trace = halo_allreduce(P, steps, jitter=0.05)
    t0 = time.perf_counter()
    streams = build_streams(trace, "openmpi")
    build = time.perf_counter() - t0
    net = network("edr-ib")
    cpu = []
    for _ in range(repeat):  # least CPU time of the repeats: the machine is shared
        c0 = time.process_time()
        engine.run(streams, net)
        cpu.append(time.process_time() - c0)
    best = min(cpu)
    return {"ranks": P, "steps": steps, "trace_events": trace.nevents, "engine_events": streams.nevents,
            "build_s": build, "engine_cpu_s": best, "rate": streams.nevents / best}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", default="1024,16384")
    ap.add_argument("--steps", default="25,50,100:2,4,8", help="step counts per rank count, ':' between them")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    ranks = [int(x) for x in args.ranks.split(",")]
    steps = [[int(x) for x in group.split(",")] for group in args.steps.split(":")]
    print(f"{'ranks':>6} {'steps':>5} {'trace events':>13} {'engine events':>14} {'build s':>8} "
          f"{'engine CPU s':>12} {'Mevents/s':>10}")
    rows = []
    for P, counts in zip(ranks, steps):
        for n in counts:
            r = measure(P, n, args.repeat)
            rows.append(r)
            print(f"{r['ranks']:>6} {r['steps']:>5} {r['trace_events']:>13,} {r['engine_events']:>14,} "
                  f"{r['build_s']:>8.2f} {r['engine_cpu_s']:>12.3f} {r['rate'] / 1e6:>10.1f}")
    for P in ranks:  # linear in events: the rate stays flat as a run gets longer
        mine = [r["rate"] for r in rows if r["ranks"] == P]
        print(f"{P} ranks: rate at the most events / at the fewest = {mine[-1] / mine[0]:.2f} (1.00 = linear)")
    print(f"slowest {min(r['rate'] for r in rows) / 1e6:.1f} Mevents/s; target >= 10")


if __name__ == "__main__":
    main()
