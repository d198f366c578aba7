"""A localhost Slurm for the launcher and campaign tests: slurmctld, N slurmd
emulating nodes n1..nN on this host (``slurmd -N nI``) and munged, started
and stopped by the product's own code (scalewise.cluster.slurm) in a fresh
folder, on free ports."""

from __future__ import annotations

import os
import random
import socket
import tempfile
from contextlib import contextmanager
from pathlib import Path

from scalewise.cluster.slurm import base_config, start_daemons, stop_daemons


def _port_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def pick_ports(count: int) -> int:
    """A base port such that base, base+1 and base+10 .. base+9+count are all free."""
    for _ in range(200):
        base = random.randrange(20000, 60000, 20)
        if all(_port_free(p) for p in [base, base + 1] + [base + 10 + i for i in range(count)]):
            return base
    raise RuntimeError("no free ports for the test Slurm")


@contextmanager
def running_slurm(nodes: int, cpus: int = 2):
    """A started :class:`SlurmCluster`, stopped (daemons and folder) however the block ends."""
    cluster = SlurmCluster(nodes=nodes, cpus=cpus)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


class SlurmCluster:
    """The daemons' folder, ports and the environment that points clients at them."""

    def __init__(self, nodes: int = 4, cpus: int = 2):
        # munged wants every folder above its socket world-executable, and socket
        # paths must stay short: a fresh folder directly in /tmp satisfies both.
        self.base = Path(tempfile.mkdtemp(prefix="swslurm-", dir="/tmp"))
        self.nodes, self.cpus = nodes, cpus
        self.port = pick_ports(nodes)
        self.host = socket.gethostname().split(".")[0]
        self.conf = self.base / "etc" / "slurm.conf"
        self.env = dict(os.environ, SLURM_CONF=str(self.conf))

    def _config(self) -> str:
        b, n, p = self.base, self.nodes, self.port
        return "\n".join([
            *base_config(b, "swtest", f"{self.host}(127.0.0.1)", p, p + 1),
            f"NodeName=n[1-{n}] NodeHostname={self.host} NodeAddr=127.0.0.1 Port=[{p + 10}-{p + 9 + n}] "
            f"CPUs={self.cpus} State=UNKNOWN",
            f"PartitionName=debug Nodes=n[1-{n}] Default=YES MaxTime=INFINITE State=UP", ""])

    def start(self) -> None:
        start_daemons(self.base, self._config(), {f"n{i}": ["slurmd", "-N", f"n{i}"] for i in range(1, self.nodes + 1)})

    def stop(self) -> None:
        stop_daemons(self.base)
