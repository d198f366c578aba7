"""Where jobs run (schedulers) and how their ranks start (launchers).

Importing the package registers the built-in schedulers and launchers.
"""

from scalewise.launch import local, mpirun, slurm, srun  # noqa: F401  (registration)
from scalewise.launch.base import Job, Launch, Launcher, Outcome, Scheduler, get_launcher, get_scheduler

__all__ = ["Job", "Launch", "Launcher", "Outcome", "Scheduler", "get_launcher", "get_scheduler"]
