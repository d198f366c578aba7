#!/usr/bin/env python3
"""What-if accuracy on one node: each proxy traced at 2 ranks, then replayed on
the network `scalewise calibrate` measured on the same machine with the same
MPI, and compared with the measured run (wall time, MPI share).

usage: whatif_accuracy.py [--size tiny] [--ranks 2] [--flavours openmpi,mpich] [--repeats 3]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
from scalewise.launch.preload import library_path  # noqa: E402
from scalewise.logfile.reader import read_profile  # noqa: E402
from scalewise.whatif import read_trace, replay  # noqa: E402
from scalewise.whatif.calibrate import EAGER, calibrated_network, launch  # noqa: E402
from scalewise.whatif.compare import compare, against_measured  # noqa: E402

APPS = ("sem", "ocean", "amr", "dft")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="tiny")
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--flavours", default="openmpi,mpich")
    ap.add_argument("--repeats", type=int, default=3, help="traced runs per cell; the median error is shown")
    a = ap.parse_args()
    t = Table(title=f"One node, calibrated: {a.ranks} ranks, --size {a.size}")
    for col in ("MPI", "app", "measured wall", "predicted wall", "wall error", "measured MPI share",
                "predicted MPI share", "share error (points)", "runs"):
        t.add_column(col, justify="right")
    with tempfile.TemporaryDirectory() as tmp:
        tmpd = Path(tmp)
        for flavour in a.flavours.split(","):
            net = calibrated_network(flavour, EAGER[(flavour, True)], f"calibrated-{flavour}", "")
            for app in APPS:
                rows = []
                for k in range(a.repeats):
                    log, trace = tmpd / f"{app}-{flavour}-{k}.swlog", tmpd / f"{app}-{flavour}-{k}.swtrace"
                    cmd, env = launch(flavour, None, [str(ROOT / "build" / flavour / "proxies" / app), "--size", a.size])
                    cmd[cmd.index("2")] = str(a.ranks)
                    env.update(LD_PRELOAD=f"{library_path(flavour)}:{env.get('LD_PRELOAD', '')}".rstrip(":"),
                               SCALEWISE_LOGFILE=str(log), SCALEWISE_TRACE="1", SCALEWISE_TRACEFILE=str(trace),
                               SCALEWISE_QUIET="1")
                    subprocess.run(cmd, env=env, capture_output=True, check=True, timeout=600)
                    w = compare(replay(read_trace(trace), [net], library=flavour), read_profile(log))
                    e = against_measured(w).iloc[0]
                    rows.append((w.summary, e))
                med = sorted(rows, key=lambda r: abs(r[1]["wall_change"]))[len(rows) // 2]
                s, e = med
                m, p = s.loc["measured"], s.iloc[1]
                t.add_row(flavour, app, f"{m['wall_time'] * 1e3:.1f} ms", f"{p['wall_time'] * 1e3:.1f} ms",
                          f"{e['wall_change'] * 100:+.1f}%", f"{m['mpi_share'] * 100:.1f}%",
                          f"{p['mpi_share'] * 100:.1f}%", f"{e['mpi_share_points']:+.1f}",
                          ", ".join(f"{r[1]['wall_change'] * 100:+.1f}%" for r in rows))
    Console().print(t)
    return 0


if __name__ == "__main__":
    sys.exit(main())
