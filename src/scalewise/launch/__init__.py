"""Where jobs run (schedulers) and how their ranks start (launchers).

The built-in schedulers and launchers are imported when first asked for by
name (base.BUILTIN_SCHEDULERS, base.BUILTIN_LAUNCHERS), not with the package.
"""

from scalewise.launch.base import Job, Launch, Launcher, Outcome, Scheduler, get_launcher, get_scheduler

__all__ = ["Job", "Launch", "Launcher", "Outcome", "Scheduler", "get_launcher", "get_scheduler"]
