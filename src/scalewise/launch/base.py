"""Where a job runs (Scheduler) and how its ranks start (Launcher), kept apart.

A scheduler (local, slurm) owns the job's life: starting it, waiting with a
timeout, reporting how it ended.  A launcher (mpirun, mpiexec, srun) only
turns a :class:`Job` into the argument list and environment that start the
ranks.  Each has a small registry filled by ``@register`` decorators, so a
name in a file or on the command line picks the class.

Everything is an argument list: nothing a user wrote ever passes through a
shell unquoted.
"""

from __future__ import annotations

import importlib
import re
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from scalewise.errors import ScalewiseError

# A name a shell reads as a plain variable.  Bash turns an inherited variable
# named BASH_FUNC_<name>%% into a function, i.e. into code: never pass one on.
ENV_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
BASH_FUNCTION_PREFIX = "BASH_FUNC_"


def plain_variables(env: dict[str, str]) -> dict[str, str]:
    """``env`` without entries a shell would not read as plain variables (e.g. ``BASH_FUNC_x%%``)."""
    return {k: v for k, v in env.items() if ENV_NAME_RE.match(k) and not k.startswith(BASH_FUNCTION_PREFIX)}


@dataclass
class Job:
    """One MPI launch: what to start, with how many ranks, where its output goes."""

    name: str
    app_argv: list[str]
    mpi: str
    ranks: int
    nodes: int = 1
    threads: int = 1
    # Full environment of the launch (inherited + what the run sets).
    env: dict[str, str] = field(default_factory=dict)
    # Names of the variables the run itself sets (launchers forward these to remote ranks).
    exported: list[str] = field(default_factory=list)
    mca: dict[str, str] = field(default_factory=dict)
    rundir: Path = Path(".")
    stdout: Path = Path("stdout")
    stderr: Path = Path("stderr")
    timeout: float = 600.0
    # The network the run asks for (a study's `interconnect` axis): a link preset or rate on
    # the emulated cluster, a node constraint under Slurm (docs/cluster.md); None: whatever is there.
    interconnect: str | None = None


@dataclass
class Launch:
    """A launcher's answer: the command and the environment to run it with."""

    argv: list[str]
    env: dict[str, str]
    # What the launcher itself chose beyond the study's settings (e.g. yielding
    # when oversubscribed), as ``{"mca.name" | "env.NAME": value}``: recorded with the run.
    settings: dict[str, str] = field(default_factory=dict)
    # (cores available on a node, ranks placed on the busiest node), when the scheduler knows them.
    placement: tuple[int, int] | None = None


@dataclass
class Outcome:
    """How a job ended, as seen by the scheduler."""

    exit_code: int | None
    timed_out: bool
    started_at: str
    ended_at: str
    wall: float | None
    command: list[str]
    reason: str | None = None
    job_id: str | None = None
    hosts: list[str] | None = None
    settings: dict[str, str] = field(default_factory=dict)  # the launcher's own, see Launch.settings
    placement: tuple[int, int] | None = None  # see Launch.placement
    # Nodes of the job the scheduler lost (e.g. "node n1 is DOWN (Not responding)"): the run failed
    # whatever its exit code (srun can exit 0 after "Node failure").
    lost_nodes: str = ""


class Launcher(ABC):
    """Builds the command that starts the ranks of a job."""

    name = ""

    @abstractmethod
    def launch(self, job: Job, oversubscribe: bool = False) -> Launch:
        """The argument list and environment that start ``job``'s ranks."""


class Scheduler(ABC):
    """Runs jobs somewhere and waits for them."""

    name = ""
    # Where a scheduler says what it is waiting for (e.g. a job pending on down nodes); set by the campaign.
    on_note: Callable[[str], None] | None = None

    def note(self, text: str) -> None:
        if self.on_note is not None:
            self.on_note(text)

    def check(self, runs: list) -> None:
        """Raise :class:`ScalewiseError` if some planned run cannot go through this scheduler."""

    @abstractmethod
    def launcher_for(self, mpi: str) -> Launcher:
        """The launcher this scheduler uses for an ``mpi`` job."""

    @abstractmethod
    def run(self, job: Job) -> Outcome:
        """Start ``job``, wait for it (never longer than its timeout) and report how it ended."""


LAUNCHERS: dict[str, type[Launcher]] = {}
SCHEDULERS: dict[str, type[Scheduler]] = {}
# The built-in ones, by the module that registers each: imported on first use,
# so that a command needing one launcher does not import them all.
BUILTIN_LAUNCHERS = {"mpirun": "scalewise.launch.mpirun", "mpiexec": "scalewise.launch.mpirun",
                     "srun": "scalewise.launch.srun"}
BUILTIN_SCHEDULERS = {"local": "scalewise.launch.local", "slurm": "scalewise.launch.slurm"}


def register_launcher(name: str):
    """Class decorator: make a launcher available by ``name``."""
    def add(cls: type[Launcher]) -> type[Launcher]:
        cls.name = name
        LAUNCHERS[name] = cls
        return cls
    return add


def register_scheduler(name: str):
    """Class decorator: make a scheduler available by ``name``."""
    def add(cls: type[Scheduler]) -> type[Scheduler]:
        cls.name = name
        SCHEDULERS[name] = cls
        return cls
    return add


def _registered(kind: str, name: str, registry: dict, builtin: dict[str, str]) -> type:
    """The class registered as ``name``, importing its built-in module first if it is one."""
    if name not in registry and name in builtin:
        importlib.import_module(builtin[name])
    if name not in registry:
        raise ScalewiseError(f"unknown {kind} '{name}' (known: {', '.join(sorted(set(registry) | set(builtin)))})")
    return registry[name]


def get_launcher(name: str, **options) -> Launcher:
    return _registered("launcher", name, LAUNCHERS, BUILTIN_LAUNCHERS)(**options)


def get_scheduler(name: str, **options) -> Scheduler:
    return _registered("scheduler", name, SCHEDULERS, BUILTIN_SCHEDULERS)(**options)

