#!/usr/bin/env python3
"""Each MPI_Alltoallv of dft between two emulated nodes (one rank on each), timed by an interposer
(bench/alltoallv_times.c): per call, from the later rank's arrival to the later rank's return, its
percentiles, its mean, and the calls over 150 ms (a TCP retransmission timeout is at least 200 ms),
for each queue at the nodes' sending ends.  With ``--profiled`` each run is followed by the same run
under the profiler with its trace on (as bench/whatif_self.py records it), whose log gives the
exchanges' sum over the ranks beside.  What the self-replay's link model must add up to: a run's
exchanges sum to their mean, not their median.  Root; takes the cluster lock.

usage: dft_exchanges.py [--flavours mpich,openmpi] [--rate 1gbit] [--sending-queues 2ms,12ms,100ms] [--runs 4]
                        [--profiled]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from common import ROOT, on_emulated_cluster

from scalewise.cluster.emulated import cluster_up
from scalewise.cluster.launching import pair_launcher
from scalewise.cluster.links import DEFAULT_QUEUE_US, parse_queue, parse_rate, queue_text
from scalewise.launch.profiled import run_profiled
from scalewise.logfile.reader import read_profile

STALL = 0.150  # seconds: a call this long waited for a retransmission timeout


def interposer(flavour: str, outdir: Path) -> Path:
    lib = outdir / f"liballtoallv_times-{flavour}.so"
    subprocess.run([f"mpicc.{flavour}", "-std=c11", "-O2", "-shared", "-fPIC", "-o", str(lib),
                    str(ROOT / "bench" / "alltoallv_times.c")], check=True)
    return lib


def exchanges(stem: Path) -> tuple[list[float], float]:
    """Per call: the later arrival to the later return (seconds); and the ranks' time in the calls,
    waits included, summed over the ranks (what a profile's MPI_Alltoallv time is)."""
    ranks = [[tuple(map(float, line.split())) for line in Path(f"{stem}.{r}").read_text().splitlines()] for r in (0, 1)]
    return ([max(a[1], b[1]) - max(a[0], b[0]) for a, b in zip(*ranks)],
            sum(t1 - t0 for rank in ranks for t0, t1 in rank))


def one_run(flavour: str, argv: list[str], env: dict[str, str], lib: Path, stem: Path) -> tuple[list[float], float]:
    env = {**os.environ, **env, "ALLTOALLV_TIMES": str(stem)}
    if flavour == "openmpi":  # mpirun hands a variable on only when named
        argv = [argv[0], "-x", f"LD_PRELOAD={lib}", "-x", "ALLTOALLV_TIMES", *argv[1:]]
    else:
        env["LD_PRELOAD"] = str(lib)
    done = subprocess.run(argv, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"dft_exchanges: {flavour} run failed: {done.stderr.strip()[-500:]}")
    return exchanges(stem)


def profiled_sum(argv: list[str], env: dict[str, str], outdir: Path) -> float:
    """The same run under the profiler, trace on: its MPI_Alltoallv time summed over the ranks (s)."""
    with open(os.devnull, "w") as quiet:
        job = run_profiled(argv, outdir, base_env=env, job_stdout=quiet.fileno(), trace=True)
    if job.returncode != 0 or len(job.logs) != 1:
        raise SystemExit(f"dft_exchanges: the profiled run failed: exit {job.returncode}")
    f = read_profile(job.logs[0]).phase_functions
    return float(f[f["function"] == "MPI_Alltoallv"]["time"].sum())


def line(d: list[float], in_calls: float) -> str:
    s = sorted(d)
    ms = [x * 1e3 for x in s]
    return (f"calls {len(s)}, the ranks' time in them {in_calls * 1e3:.0f} ms; exchanges: sum {sum(ms):.0f} ms, p10 {ms[len(s) // 10]:.2f}, median {statistics.median(ms):.2f}, "
            f"p90 {ms[9 * len(s) // 10]:.2f}, max {ms[-1]:.1f}, mean {statistics.mean(ms):.2f} ms; "
            f"over {STALL * 1e3:.0f} ms: {sum(x > STALL for x in s)}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flavours", default="mpich,openmpi", type=lambda s: s.split(","))
    ap.add_argument("--rate", default="1gbit")
    ap.add_argument("--sending-queues", default=[DEFAULT_QUEUE_US, 12000, 100000],
                    type=lambda s: [parse_queue(x) for x in s.split(",")])
    ap.add_argument("--runs", type=int, default=4)
    ap.add_argument("--iters", default="4", help="dft's iterations (67 transposes at 4)")
    ap.add_argument("--profiled", action="store_true", help="each run followed by the same run profiled and traced")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for flavour in a.flavours:
            lib = interposer(flavour, Path(tmp))
            for sq in a.sending_queues:
                with on_emulated_cluster():
                    c = cluster_up(2, parse_rate(a.rate), queue_us=DEFAULT_QUEUE_US,
                                   sending_queue_us=None if sq == DEFAULT_QUEUE_US else sq)
                    argv, env = pair_launcher(c, flavour, "dft_exchanges")(
                        [str(ROOT / "build" / flavour / "proxies" / "dft"), "--size", "small", "--iters", a.iters])
                    load = os.getloadavg()[0]
                    for k in range(a.runs):
                        d, in_calls = one_run(flavour, argv, env, lib, Path(tmp) / f"{flavour}-{k}")
                        print(f"{flavour} {a.rate}, sending end {queue_text(sq)}, run {k + 1} (load {load:.2f}): {line(d, in_calls)}",
                              flush=True)
                        if a.profiled:
                            took = profiled_sum(argv, env, Path(tmp) / f"profiled-{flavour}-{k}")
                            print(f"    the same run profiled, traced: the ranks' time in MPI_Alltoallv {took * 1e3:.0f} ms", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
