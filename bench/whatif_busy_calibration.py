#!/usr/bin/env python3
"""`scalewise calibrate --cluster` on a busy machine: the link calibrated (the command itself, at the
machine's usual priority) while two busy loops load both cores, then a held-out proxy traced at one
link rate and predicted on that calibration, against its run measured on the calibrated link in
the same round (these runs ahead of other jobs, as the other accuracy benches).  Each round's error,
and whether calibrate said the calibration is not trustworthy.  Root; holds the cluster lock.

usage: whatif_busy_calibration.py [--apps ocean,amr] [--rate 100mbit] [--source 1gbit] [--flavours openmpi,mpich]
                                  [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from common import ROOT
from scalewise.cluster.dedicated import ahead_of_others, at_usual_priority
from scalewise.cluster import cluster_down
from scalewise.cluster.emulated import cluster_up
from scalewise.cluster.links import parse_rate
from scalewise.launch.mpirun import two_ranks

SW = str(ROOT / ".venv" / "bin" / "scalewise")


def sw(*args: str, **kw) -> subprocess.CompletedProcess:
    done = subprocess.run([SW, *args], capture_output=True, text=True, timeout=900, **kw)
    if done.returncode:
        raise SystemExit(f"scalewise {' '.join(args)}: {done.stderr.strip()}")
    return done


def busy_calibration(flavour: str, out: Path) -> tuple[str, float]:
    """calibrate --cluster while two busy loops run, in sessions of their own at nice 0 (as other
    users' jobs would); calibrate's stderr and the load at its end."""
    loops = [subprocess.Popen(["sh", "-c", "while :; do :; done"], start_new_session=True) for _ in range(2)]
    for p in loops:
        at_usual_priority(p.pid)
    try:
        cal = subprocess.Popen([SW, "calibrate", "--cluster", "--mpi", flavour, "--reps", "30", "-o", str(out)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        at_usual_priority(cal.pid)
        _, err = cal.communicate(timeout=900)
        load = os.getloadavg()[0]
    finally:
        for p in loops:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    done = subprocess.CompletedProcess(cal.args, cal.returncode, "", err)
    if done.returncode:
        raise SystemExit(f"calibrate: {done.stderr.strip()}")
    return done.stderr.strip(), load


def traced(flavour: str, app: str, out: Path) -> Path:
    exe = str(ROOT / "build" / flavour / "proxies" / app)
    done = sw("run", "--cluster", "--trace", "--quiet", "-o", str(out), "--",
              *two_ranks(flavour, one_per_node=True), exe, "--size", "small")
    return Path(re.search(r"profile: (\S+)", done.stdout).group(1))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--apps", default="ocean,amr", type=lambda s: s.split(","))
    ap.add_argument("--rate", default="100mbit")
    ap.add_argument("--source", default="1gbit")
    ap.add_argument("--flavours", default="openmpi,mpich", type=lambda s: s.split(","))
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    ahead_of_others()
    print(f"load before: {os.getloadavg()[0]:.2f}", flush=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmpd = Path(tmp)
        try:
            cluster_down()
            for flavour in a.flavours:
                cluster_up(2, parse_rate(a.rate))
                net = tmpd / f"busy-{flavour}.yaml"
                warning, load = busy_calibration(flavour, net)
                print(f"{flavour}: calibrated at load {load:.1f}: {warning or 'no warning'}", flush=True)
                for app in a.apps:
                    errs = []
                    for k in range(a.repeats):
                        cluster_up(2, parse_rate(a.source))
                        source = traced(flavour, app, tmpd / f"{flavour}-{app}-src{k}")
                        cluster_up(2, parse_rate(a.rate))
                        measured = traced(flavour, app, tmpd / f"{flavour}-{app}-dst{k}")
                        out = json.loads(sw("whatif", str(source.with_suffix(".swtrace")), "--network", str(net),
                                            "--measured", str(measured), "--json").stdout)
                        errs.append(out["vs_measured"][0]["wall_change"])
                    rows.append((flavour, app, load, "not trustworthy" in warning, errs))
                    print(f"{flavour} {app}: {', '.join(f'{100 * e:+.1f}%' for e in errs)}", flush=True)
        finally:
            cluster_down()
    print(f"load after: {os.getloadavg()[0]:.2f}")
    print(f"| MPI | app | load at the calibration's end | calibrate said not trustworthy | wall error recorded at "
          f"{a.source}, predicted for {a.rate}, every round |")
    print("|---|---|---|---|---|")
    for flavour, app, load, doubted, errs in rows:
        print(f"| {flavour} | {app} | {load:.1f} | {'yes' if doubted else 'no'} "
              f"| {', '.join(f'{100 * e:+.1f}%' for e in errs)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
