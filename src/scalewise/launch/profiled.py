"""Run a user's own launch line with the profiler injected into its ranks (``scalewise run``).

The line is read first (:mod:`launchline`): a launcher or application that does
not exist, or an application built with another MPI than the launcher's, is a
one-line error before anything starts.  Ranks write into a private staging
folder under their default log name (``<exe>-<date>-<pid of rank 0>.swlog``),
so every separate MPI job a wrong launch starts leaves its own log instead of
overwriting one path; the caller sees them all.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from scalewise.launch.launchline import LaunchLine, check_flavours, parse_launch_line
from scalewise.launch.mpis import family
from scalewise.launch.preload import openmpi_forwarding, preload_env, profiler_variables, with_env_list
from scalewise.launch.process import run_foreground
from scalewise.launch.srun import check_srun_app

TEMPORARY_LOGS = "*.swlog.tmp.*"  # what a rank killed while writing leaves (runtime/lib/logwrite.c)
TEMPORARY_TRACES = "*.swtrace.tmp.*"  # and the trace writer (runtime/lib/trace_write.c)


@dataclass
class ProfiledJob:
    """How one profiled launch ended and the logs it left in the output folder."""

    line: LaunchLine
    flavour: str
    returncode: int
    logs: list[Path]
    traces: list[Path]  # with trace=True: the .swtrace of each log (docs/trace-format.md)
    stopped_by: int | None  # SIGINT/SIGTERM that scalewise received and forwarded


def injected_command(line: LaunchLine, env: dict[str, str]) -> tuple[list[str], dict[str, str]]:
    """The user's line with what Open MPI needs to forward the profiler to other nodes."""
    names = profiler_variables(env)
    if line.kind == "openmpi":
        forward, env = openmpi_forwarding(env, names)
        return [line.argv[0], *forward, *line.argv[1:]], env
    if line.kind is None and family(line.flavour_of_app or "") == "openmpi" and "-x" not in line.argv:
        # A wrapper around mpirun (time, env, a script): only the environment reaches it.
        return list(line.argv), with_env_list(env, names)
    return list(line.argv), env


def run_profiled(argv: list[str], outdir: Path, flavour: str | None = None,
                 base_env: dict[str, str] | None = None, job_stdout: int | None = None,
                 trace: bool = False, on_start: Callable[[], object] | None = None) -> ProfiledJob:
    """Check the line, run it with the profiler injected, collect its logs into ``outdir``.

    ``base_env``: the environment to add the profiler to (default: this process's);
    ``job_stdout``: where the job's standard output goes (default: ours);
    ``trace``: record each rank's MPI operations too (SCALEWISE_TRACE);
    ``on_start``: called once the job is started (work to overlap with it)."""
    line = parse_launch_line(argv)
    flavour = check_flavours(line, flavour)
    if line.kind == "srun":  # a PMI plugin that cannot start this library's ranks: say so, start nothing
        check_srun_app(line.argv, line.app, base_env)
    outdir.mkdir(parents=True, exist_ok=True)
    staging = outdir / f".scalewise-run-{os.getpid()}"
    staging.mkdir()
    try:
        env = preload_env(flavour, base=base_env)
        env.pop("SCALEWISE_LOGFILE", None)
        env.pop("SCALEWISE_TRACEFILE", None)  # beside the log, named after it
        if trace:
            env["SCALEWISE_TRACE"] = "1"
        env["SCALEWISE_LOGDIR"] = str(staging.resolve())
        env.setdefault("SCALEWISE_QUIET", "1")  # the path is printed after the summary instead
        command, env = injected_command(line, env)
        code, stopped_by = run_foreground(command, env, stdout=job_stdout, on_start=on_start)
        for pattern in (TEMPORARY_LOGS, TEMPORARY_TRACES):
            for tmp in staging.glob(pattern):
                tmp.unlink()  # a rank aborted while writing: never a log, never to be kept
        logs = [_move_into(log, outdir) for log in sorted(staging.glob("*.swlog"))]
        traces = [_move_into(t, outdir) for t in sorted(staging.glob("*.swtrace"))]
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return ProfiledJob(line, flavour, code, logs, traces, stopped_by)


def _move_into(log: Path, outdir: Path) -> Path:
    target, n = outdir / log.name, 1
    while target.exists():
        n += 1
        target = outdir / f"{log.stem}-{n}{log.suffix}"
    return Path(shutil.move(log, target))
