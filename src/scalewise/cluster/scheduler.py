"""Studies on the emulated cluster: the local scheduler, with nodes.

A run that asks for more than one node, or for an interconnect, is started
across emulated nodes: the cluster is brought up with the run's node count
and link speed (kept when the next run wants the same shape, so a study
sorted by its axes rebuilds it rarely), and the MPI's own launch line is
turned into one that spans the nodes.  A run on one node without an
interconnect runs as on the local scheduler.
"""

from __future__ import annotations

from scalewise.cluster.emulated import cluster_down, cluster_up, current_cluster
from scalewise.cluster import lock
from scalewise.cluster.launching import cluster_launch
from scalewise.cluster.links import LINK_PRESETS, parse_rate
from scalewise.launch.base import Job, Launch, register_scheduler
from scalewise.launch.local import LocalScheduler

DEFAULT_LINK = "gige"  # the link of a multi-node run that names no interconnect


@register_scheduler("emulated")
class EmulatedScheduler(LocalScheduler):
    """mpirun / mpiexec across emulated nodes (root); single-node runs as on the local scheduler."""

    def __init__(self, cores: int | None = None):
        super().__init__(cores)
        lock.acquire()  # held until close: nobody else reshapes the cluster under this study
        self.found_cluster = current_cluster() is not None  # a user's own cluster is left up at the end

    def close(self) -> None:
        """Take down the cluster this scheduler brought up, and let others have it."""
        try:
            if not self.found_cluster:
                cluster_down()
        finally:
            lock.release()

    def check(self, runs: list) -> None:
        for run in runs:
            if run.interconnect is not None:
                parse_rate(run.interconnect)  # a one-line error naming the bad value, before anything runs

    def prepare_launch(self, job: Job) -> tuple[Launch, list[str]]:
        if job.nodes <= 1 and job.interconnect is None:
            return super().prepare_launch(job)
        bits = parse_rate(job.interconnect or DEFAULT_LINK)
        c = current_cluster()
        if c is None or len(c.nodes) != job.nodes or c.rate_bits != bits or c.alive():
            c = cluster_up(job.nodes, bits)
        own = self.launcher_for(job.mpi).launch(job)
        line = cluster_launch(c, own.argv, base_env=own.env, flavour=job.mpi)
        settings = dict(own.settings, **{"cluster.nodes": str(job.nodes), "cluster.link_bits": str(bits)})
        if line.oversubscribed:
            settings["cluster.oversubscribed"] = "1"
        placement = (line.cores_per_node, line.ranks_per_node) if line.ranks_per_node else None
        return Launch(line.argv, line.env, settings, placement), c.hostnames


def needs_nodes(runs: list) -> bool:
    """Whether a plan needs the emulated cluster (more than one node, or an interconnect axis)."""
    return any(r.nodes > 1 or r.interconnect is not None for r in runs)


__all__ = ["EmulatedScheduler", "LINK_PRESETS", "needs_nodes"]
