#!/usr/bin/env python3
"""What `scalewise run` adds to a job's wall time, side by side with the bare job.

Alternates bare and wrapped launches of the same line (`mpirun -np 2 APP`
against `scalewise run -o TMP -- mpirun -np 2 APP`, the summary printed to a
pipe) in one session, for a trivial MPI program (bench/hello_mpi.c: Init,
Barrier, Finalize) and NetPIPE with a fixed repeat count when it is
installed; prints each side's median wall time and the difference.

usage: run_cost.py [--rounds 9] [--flavours openmpi,mpich] [--jobs hello,netpipe] [--quiet-too] [--before SRC]
                   [--quiet-env NAME=VALUE] [--preloaded]

--before SRC adds a side: `scalewise run` from another checkout's src/
(e.g. `git archive HEAD~3 src | tar -x -C /tmp/before`), with this
checkout's venv and build, to measure a change side by side (and, with
--quiet-too, its `--quiet` too).  Each side prints its median wall time
minus the bare job's, and its median CPU seconds (user + system of all its
processes) minus the bare job's.

--preloaded adds a side: the launch line with the profiler preloaded as
`scalewise run` preloads it (launch/profiled.py injected_command), without
Python: what the profiler itself adds (its set-up at MPI_Init, the log
written at MPI_Finalize), apart from the command around it.

--quiet-env NAME=VALUE adds a side: `scalewise run --quiet` with that
variable set (it reaches every rank, as every SCALEWISE_* does), e.g.
SCALEWISE_MPIT=all for the runtime's MPI_T as it was before the MTL rule
(docs/mpit.md "Cost").
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCALEWISE = ROOT / ".venv" / "bin" / "scalewise"
LAUNCHER = {"openmpi": ["mpirun.openmpi", "-np", "2"], "mpich": ["mpirun.mpich", "-np", "2"]}
NETPIPE = {"openmpi": "NPopenmpi", "mpich": "NPmpich2"}


def apps(flavour: str, tmp: Path) -> dict[str, list[str]]:
    exe = tmp / f"hello-{flavour}"
    subprocess.run([f"mpicc.{flavour}", "-O2", "-o", str(exe), str(ROOT / "bench" / "hello_mpi.c")], check=True)
    out = {"hello": [str(exe)]}
    if shutil.which(NETPIPE[flavour]):
        out["netpipe -n 20"] = [NETPIPE[flavour], "-n", "20", "-u", "65536", "-o", "/dev/null"]
    return out


def wall(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[float, float]:
    """Wall seconds of one launch, and the CPU seconds (user + system) of all its processes:
    on a loaded machine the CPU time still says how much work a side adds."""
    env = dict(env or os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    for attempt in (1, 2):  # at a load of 30 a launch now and then dies on its own: one more try, said on stderr
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        done = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        elapsed = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if not done.returncode:
            return elapsed, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
        print(f"run_cost: {' '.join(argv)} failed ({done.returncode}), attempt {attempt}", file=sys.stderr)
    raise SystemExit(f"run_cost: {' '.join(argv)} failed ({done.returncode}):\n{done.stdout.decode()[-2000:]}")


def _sides(a: argparse.Namespace) -> list[str]:
    """The wrapped sides, in the order their columns are printed."""
    return ["wrapped"] + (["quiet"] if a.quiet_too else []) + (["before"] if a.before else []) \
        + (["before quiet"] if a.before and a.quiet_too else []) + ([f"quiet {a.quiet_env}"] if a.quiet_env else []) \
        + (["preloaded"] if a.preloaded else [])


def preloaded(line: list[str], logdir: Path) -> tuple[list[str], dict[str, str]]:
    """The launch line and environment `scalewise run` starts, the profiler preloaded, logs into ``logdir``."""
    sys.path.insert(0, str(ROOT / "src"))
    from scalewise.launch.launchline import check_flavours, parse_launch_line
    from scalewise.launch.preload import preload_env
    from scalewise.launch.profiled import injected_command

    parsed = parse_launch_line(line)
    env = preload_env(check_flavours(parsed, None))
    logdir.mkdir(parents=True, exist_ok=True)
    env.update(SCALEWISE_LOGDIR=str(logdir), SCALEWISE_QUIET="1")
    env.pop("SCALEWISE_LOGFILE", None)
    return injected_command(parsed, env)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--flavours", default="openmpi,mpich")
    ap.add_argument("--quiet-too", action="store_true", help="also time `scalewise run --quiet` (no summary)")
    ap.add_argument("--before", type=Path, help="also time `scalewise run` from this source tree's src/")
    ap.add_argument("--jobs", default="hello,netpipe", help="which jobs: hello, netpipe")
    ap.add_argument("--quiet-env", metavar="NAME=VALUE", help="also time `scalewise run --quiet` with this variable set")
    ap.add_argument("--preloaded", action="store_true", help="also time the line with the profiler preloaded, no Python")
    a = ap.parse_args()
    print(f"{'MPI':8} {'job':14} {'bare median s':>14} " + " ".join(f"{s + ': added s':>22} {s + ': added CPU s':>26}"
                                                               for s in _sides(a)))
    with tempfile.TemporaryDirectory() as tmp:
        tmpd = Path(tmp)
        for flavour in a.flavours.split(","):
            for name, app in apps(flavour, tmpd).items():
                if name.split()[0] not in a.jobs.split(","):
                    continue
                line = [*LAUNCHER[flavour], *app]
                sides = {"bare": line, "wrapped": [str(SCALEWISE), "run", "-o", str(tmpd / "logs"), "--", *line]}
                if a.quiet_too:
                    sides["quiet"] = [str(SCALEWISE), "run", "--quiet", "-o", str(tmpd / "logs"), "--", *line]
                if a.before:
                    before = ["env", f"PYTHONPATH={a.before.resolve() / 'src'}", f"SCALEWISE_BUILD={ROOT / 'build'}",
                              str(ROOT / ".venv" / "bin" / "python"), "-c",
                              "import sys; from scalewise.cli.main import cli; sys.exit(cli())", "run"]
                    sides["before"] = [*before, "-o", str(tmpd / "logs"), "--", *line]
                    if a.quiet_too:
                        sides["before quiet"] = [*before, "--quiet", "-o", str(tmpd / "logs"), "--", *line]
                if a.quiet_env:
                    sides[f"quiet {a.quiet_env}"] = ["env", a.quiet_env, str(SCALEWISE), "run", "--quiet", "-o",
                                                     str(tmpd / "logs"), "--", *line]
                envs = {}
                if a.preloaded:
                    sides["preloaded"], envs["preloaded"] = preloaded(line, tmpd / "preloaded")
                times: dict[str, list[float]] = {k: [] for k in sides}
                cpu: dict[str, list[float]] = {k: [] for k in sides}
                wall(line, tmpd)  # warm the page cache
                for _ in range(a.rounds):
                    for side, argv in sides.items():
                        w, c = wall(argv, tmpd, envs.get(side))
                        times[side].append(w)
                        cpu[side].append(c)
                med = {k: statistics.median(v) for k, v in times.items()}
                mcpu = {k: statistics.median(v) for k, v in cpu.items()}
                print(f"{flavour:8} {name:14} {med['bare']:14.3f} "
                      + " ".join(f"{med[s] - med['bare']:22.3f} {mcpu[s] - mcpu['bare']:26.3f}" for s in _sides(a)),
                      flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
