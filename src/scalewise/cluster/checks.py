"""What the emulated links really carry: an MPI ping-pong between the first two nodes.

The rate a link is given and the rate a message stream gets differ by the
headers of each layer (Ethernet, IP, TCP, the MPI library's own); the
latency is whatever the veth pair, the kernel and the MPI library add, since
no delay is configured.  Both are measured here, never assumed.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass

from scalewise.cluster.emulated import Cluster
from scalewise.cluster.launching import pair_launcher
from scalewise.cluster.links import rate_text
from scalewise.errors import ScalewiseError
from scalewise.launch.preload import built_library

LINE = re.compile(r"SCALEWISE_PINGPONG bytes=(\d+) reps=(\d+) half_rtt_us=([0-9.]+) mbit_s=([0-9.]+) "
                  r"best_half_rtt_us=([0-9.]+) best_mbit_s=([0-9.]+) host0=(\S+) host1=(\S+)")
LATENCY_BYTES = 8
BANDWIDTH_BYTES = 4 * 1024 * 1024


@dataclass
class LinkCheck:
    mpi: str
    configured_bits: int
    latency_us: float  # half round trip of an 8-byte message, median
    measured_bits: float  # payload rate of 4 MiB messages, fastest round trip (least disturbed by other load)
    hosts: tuple[str, str]

    @property
    def ratio(self) -> float:
        return self.measured_bits / self.configured_bits

    def text(self) -> str:
        return (f"{self.mpi} between {self.hosts[0]} and {self.hosts[1]}: latency {self.latency_us:.1f} us "
                f"(8 B, median half round trip, measured), bandwidth {rate_text(int(self.measured_bits))} "
                f"with 4 MiB messages (fastest of the round trips) = {100 * self.ratio:.0f}% of the configured {rate_text(self.configured_bits)}")


def check_links(c: Cluster, mpi: str, reps: int = 20) -> LinkCheck:
    """Ping-pong rank 0 on the first node with rank 1 on the second."""
    on_pair = pair_launcher(c, mpi, "cluster check")
    exe = built_library(mpi, "proxies/pingpong", "ping-pong proxy")
    argv, env = on_pair([str(exe), "--sizes", f"{LATENCY_BYTES},{BANDWIDTH_BYTES}", "--reps", str(reps)])
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)
    rows = {int(m.group(1)): m for m in LINE.finditer(done.stdout)}
    if done.returncode != 0 or set(rows) != {LATENCY_BYTES, BANDWIDTH_BYTES}:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        raise ScalewiseError(f"cluster check: the ping-pong failed (exit {done.returncode}): {tail[0]}")
    small, big = rows[LATENCY_BYTES], rows[BANDWIDTH_BYTES]
    return LinkCheck(mpi, c.rate_bits, float(small.group(3)), float(big.group(6)) * 1e6,
                     (big.group(7), big.group(8)))
