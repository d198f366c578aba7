"""The local scheduler: runs each job on this machine with the MPI's own launcher."""

from __future__ import annotations

import os
import socket

from scalewise.errors import ScalewiseError
from scalewise.launch.base import Job, Launch, Launcher, Outcome, Scheduler, get_launcher, register_scheduler
from scalewise.launch.mpirun import native_launcher
from scalewise.launch.process import run_command
from scalewise.launch.timeutil import utc_now


@register_scheduler("local")
class LocalScheduler(Scheduler):
    """mpirun.openmpi / mpiexec.mpich on this host; oversubscribes when ranks x threads > cores."""

    def __init__(self, cores: int | None = None):
        self.cores = cores or os.cpu_count() or 1

    def check(self, runs: list) -> None:
        multi = [r for r in runs if r.nodes > 1]
        if multi:
            raise ScalewiseError(f"{len(multi)} planned runs ask for more than one node (e.g. run {multi[0].run_id}: "
                                 f"nodes={multi[0].nodes}); the local launcher has one node, use --launcher slurm")

    def launcher_for(self, mpi: str) -> Launcher:
        return get_launcher(native_launcher(mpi))

    def oversubscribed(self, job: Job) -> bool:
        return job.ranks * job.threads > self.cores

    def prepare_launch(self, job: Job) -> tuple[Launch, list[str]]:
        """The launch for ``job`` and the hosts it will run on."""
        launch = self.launcher_for(job.mpi).launch(job, oversubscribe=self.oversubscribed(job))
        launch.placement = (self.cores, job.ranks)
        return launch, [socket.gethostname()]

    def run(self, job: Job) -> Outcome:
        launch, hosts = self.prepare_launch(job)
        started = utc_now()
        done = run_command(launch.argv, launch.env, job.rundir, job.stdout, job.stderr, job.timeout)
        reason = done.error
        if done.timed_out:
            reason = f"timed out after {job.timeout:g} s"
        return Outcome(exit_code=done.returncode, timed_out=done.timed_out, started_at=started, ended_at=utc_now(),
                       wall=done.wall, command=launch.argv, reason=reason, hosts=hosts,
                       settings=launch.settings, placement=launch.placement)
