"""`scalewise calibrate --cluster` under a PyPI MPI, many times, as
tests/cluster/test_pypi_nodes.py::test_calibrate_measures_a_pypi_mpi_between_two_emulated_nodes runs it
(--reps 3, barrier at 8 bytes, without the both-ways exchanges): each time the payload share written
and the 4 MiB one way the file replays at 100 Mbit/s (the test's bound: 80-105 Mbit/s).

    python bench/calibrate_share_rate.py --mpi mpich5 --runs 20

One JSON line per calibration, then a summary; holds the cluster lock throughout."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from support.pypi_mpis import IDENTITIES, loaded_env  # noqa: E402

from scalewise import whatif  # noqa: E402
from scalewise.cluster import cluster_down, cluster_up, parse_rate  # noqa: E402
from scalewise.cluster.lock import cluster_lock  # noqa: E402
from scalewise.whatif.network import load_network  # noqa: E402
from scalewise.whatif.trace import Call  # noqa: E402

SW = str(Path(sys.executable).with_name("scalewise"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mpi", default="mpich5", choices=list(IDENTITIES))
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args()
    identity = IDENTITIES[args.mpi]
    os.environ.update(loaded_env(args.mpi))
    rates = []
    with cluster_lock(), tempfile.TemporaryDirectory() as tmp:
        cluster_down()
        cluster_up(2, parse_rate("100mbit"))
        try:
            for run in range(args.runs):
                out = Path(tmp) / f"fe{run}.yaml"
                t0 = time.monotonic()
                done = subprocess.run([SW, "calibrate", "--cluster", "--mpi", identity, "--reps", "3", "--collectives",
                                       "barrier", "--coll-sizes", "8", "--no-duplex", "-o", str(out)],
                                      capture_output=True, text=True, timeout=900)
                took = time.monotonic() - t0
                if done.returncode:
                    print(json.dumps({"run": run, "error": done.stderr.strip().splitlines()[-1:]}), flush=True)
                    continue
                net = load_network(out)
                n = 4 << 20
                [one_way] = whatif.replay(whatif.from_calls([[Call("MPI_Send", 1, n)], [Call("MPI_Recv", 0, n)]]), net)
                rate = 8 * n / one_way.wall_time / 1e6
                rates.append(rate)
                print(json.dumps({"run": run, "share": net.shaping.payload_share, "replayed_4mib_mbit": round(rate, 1),
                                  "doubts": net.doubts or [], "seconds": round(took, 1)}), flush=True)
        finally:
            cluster_down()
    print(json.dumps({"mpi": identity, "runs": len(rates), "min_mbit": round(min(rates), 1),
                      "max_mbit": round(max(rates), 1), "outside_80_105": sum(not 80 <= r <= 105 for r in rates)}))


if __name__ == "__main__":
    main()
