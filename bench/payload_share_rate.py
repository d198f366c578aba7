"""How often `scalewise calibrate --cluster` measures a shaped link's payload share far below what the
packets' headers allow: the ping-pong sweep of a calibration (rested, ``--reps`` repetitions) run many
times between two emulated nodes, each time the share its median round trips give, the share the
fastest give, the 4 MiB one way the calibrated model replays, and the TCP retransmissions and
timeouts the two nodes counted meanwhile (what a slow 4 MiB round trip was).

    python bench/payload_share_rate.py --mpi mpich5 --runs 50 --reps 3

One JSON line per run, then a summary line; holds the cluster lock throughout."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from support.pypi_mpis import IDENTITIES, loaded_env  # noqa: E402

from scalewise import whatif  # noqa: E402
from scalewise.cluster import cluster_down, cluster_up, parse_rate  # noqa: E402
from scalewise.cluster.launching import pair_launcher  # noqa: E402
from scalewise.cluster.lock import cluster_lock  # noqa: E402
from scalewise.whatif.calibrate import pingpong  # noqa: E402
from scalewise.whatif.calibrate.measure import cluster_shaping  # noqa: E402
from scalewise.whatif.trace import Call  # noqa: E402

COUNTERS = ("TcpRetransSegs", "TcpExtTCPTimeouts", "TcpExtTCPLossProbes", "TcpExtTCPSackRecovery")
MIB = 1 << 20


def _counters(pid: int) -> dict[str, int]:
    """The node's TCP counters (its network namespace's nstat, absolute values)."""
    out = subprocess.run(["nsenter", "-t", str(pid), "-n", "--", "nstat", "-az", *COUNTERS],
                         capture_output=True, text=True, check=True).stdout
    found = {}
    for line in out.splitlines():
        parts = line.split()
        if parts and parts[0] in COUNTERS:
            found[parts[0]] = int(parts[1])
    return found


def _replayed_mbit(both, shaping, share: float, limit: int) -> float:
    """The 4 MiB one way the fit of the sweep's fastest round trips (``o`` 0) replays, in Mbit/s, at ``share``."""
    net = pingpong.fit(both["best"], limit, "fe", "bench", shaping.model_copy(update={"payload_share": share}), 0.0)
    n = 4 * MIB
    [one_way] = whatif.replay(whatif.from_calls([[Call("MPI_Send", 1, n)], [Call("MPI_Recv", 0, n)]]), net)
    return round(8 * n / one_way.wall_time / 1e6, 1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mpi", default="mpich5", choices=list(IDENTITIES))
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--rate", default="100mbit")
    args = ap.parse_args()
    identity = IDENTITIES[args.mpi]
    os.environ.update(loaded_env(args.mpi))
    limit = pingpong.eager_limit(identity, False)
    shares = []
    with cluster_lock():
        cluster_down()
        c = cluster_up(2, parse_rate(args.rate))
        shaping = cluster_shaping(c)
        launcher = pair_launcher(c, identity, "bench")
        try:
            for run in range(args.runs):
                before = [_counters(n.pid) for n in c.nodes]
                both = pingpong.measure_both(identity, reps=args.reps, launcher=launcher,
                                             pause=pingpong.rest_for(shaping))
                after = [_counters(n.pid) for n in c.nodes]  # the sweep's, not a second measurement's
                again_used = []

                def again(sizes):
                    again_used.append(sizes)
                    return pingpong.measure_both(identity, None, sizes, pingpong.SHARE_REPS, launcher,
                                                 pause=pingpong.rest_for(shaping))

                # from the sweep's medians alone (before 2026-11-27, round 7), and as calibrate_link takes it now
                sweep_share = round(pingpong.payload_share(both["median"], shaping), 4)
                share = pingpong.link_payload_share(both, shaping, again if args.reps < pingpong.SHARE_REPS else None)
                row = {"run": run, "sweep_share": sweep_share, "share": share, "measured_again": bool(again_used),
                       "share_of_best": round(pingpong.payload_share(both["best"], shaping), 4),
                       "sweep_replayed_4mib_mbit": _replayed_mbit(both, shaping, sweep_share, limit),
                       "replayed_4mib_mbit": _replayed_mbit(both, shaping, share, limit),
                       **{f"{k}_{s >> 20}mib_ms": round(both[k][s] * 1e3, 1) for k in ("best", "median", "mean")
                          for s in (MIB, 4 * MIB)},
                       "tcp": {k: sum(a.get(k, 0) - b.get(k, 0) for a, b in zip(after, before)) for k in COUNTERS}}
                shares.append((sweep_share, share))
                print(json.dumps(row), flush=True)
        finally:
            cluster_down()
    for k, name in enumerate(("sweep_share", "share")):
        got = [s[k] for s in shares]
        print(json.dumps({"mpi": identity, "runs": len(got), "reps": args.reps, "of": name, "min": min(got),
                          "max": max(got), f"below_{pingpong.LEAST_PAYLOAD_SHARE}":
                          sum(s < pingpong.LEAST_PAYLOAD_SHARE for s in got)}))


if __name__ == "__main__":
    main()
