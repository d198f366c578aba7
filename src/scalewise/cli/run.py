"""`scalewise run -- LAUNCHER ... APP ARGS`: profile one MPI job."""

from __future__ import annotations

import gc
import os
import sys
import threading
from pathlib import Path

import click

from scalewise.cli.output import echo_json, json_option
from scalewise.errors import ApplicationFailed, Interrupted, LogFormatError, ProfilerFailed, ScalewiseError, describe_exit
from scalewise.formatting import plural
from scalewise.launch.mpis import display_name, name_problem
from scalewise.logfile.container import log_counts
from scalewise.launch.profiled import ProfiledJob, run_profiled

# What reading the log will need is imported in a thread once the job has
# started (_import_while_running): after it, the import would add to every
# profiled job's wall time; before it, it would hold the launch back
# (docs/benchmarks.md).  The summary takes the lean path (report/run/lean.py:
# the standard library and rich, no numpy or pandas); --json the full reader;
# --quiet neither: the log's header and rank index say its world size and
# whether it is partial (logfile/container.py).
READER_MODULES = ("scalewise.logfile.reader",)
SUMMARY_MODULES = ("scalewise.report.run.lean",)


def _import_while_running(names: tuple[str, ...]) -> threading.Thread:
    def work() -> None:
        import importlib

        for name in names:
            try:
                importlib.import_module(name)
            except Exception:  # noqa: BLE001 - the main thread's own import reports it
                return

    thread = threading.Thread(target=work, name="scalewise-imports", daemon=True)
    thread.start()
    return thread


def _mpi_name(value: str | None) -> str | None:
    if value and name_problem(value):
        raise click.BadParameter(name_problem(value))
    return value


@click.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option("-o", "--output-dir", "outdir", type=click.Path(file_okay=False, path_type=Path), default=Path("."),
              show_default=True, help="Directory for the job log.")
@click.option("--mpi", "flavour", default=None, callback=lambda _c, _p, v: _mpi_name(v),
              help="The application's MPI: openmpi or mpich (Debian's), or an identity such as "
                   "openmpi-5.0.11 (default: read from the executable).")
@click.option("--mpicc", default=None, type=click.Path(exists=True, dir_okay=False),
              help="The compiler wrapper to build the profiler with on first use (default: the one that builds for "
                   "the application's MPI: $MPICC, mpicc on PATH, beside the library).")
@click.option("--quiet", is_flag=True, help="Print only the log path, no summary.")
@json_option("the profile (as `summary LOG --json`, with the log's path as `log`) instead of the summary")
@click.option("--cluster", "on_cluster", is_flag=True,
              help="Run across the emulated cluster's nodes (scalewise cluster up).")
@click.option("--trace", is_flag=True,
              help="Also record every rank's MPI operations (.swtrace, for scalewise whatif).")
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
def run(outdir: Path, flavour: str | None, mpicc: str | None, quiet: bool, as_json: bool, on_cluster: bool,
        trace: bool, command: tuple[str, ...]) -> None:
    """Run an MPI job under the profiler, then summarise it.

    \b
    Examples: scalewise run -o logs -- mpirun -np 4 ./app --size small
              scalewise run -- ./app          (a singleton: one rank, no launcher)
    \b
    Exit status: 0 done; 1 the application failed (its code or signal is
    named); 2 a user error (options, launch line, MPI mismatch); 3 the
    profiler wrote no readable log; 130/143 stopped by SIGINT/SIGTERM.
    """
    argv, env = list(command), None
    imports = READER_MODULES if as_json else () if quiet else SUMMARY_MODULES  # what reading the log will need
    if mpicc:
        os.environ["SCALEWISE_MPICC"] = os.path.abspath(mpicc)  # read where the profiler is built (mpibuild)
    if on_cluster:
        from scalewise.cluster.emulated import require_cluster
        from scalewise.cluster.launching import cluster_launch

        launch = cluster_launch(require_cluster(), argv, flavour=flavour)
        argv, env = launch.argv, launch.env
    # With --json our stdout carries one JSON document: the job's own output goes to stderr.
    job = run_profiled(argv, outdir, flavour, base_env=env, job_stdout=sys.stderr.fileno() if as_json else None,
                       trace=trace, on_start=(lambda: _import_while_running(imports)) if imports else None)
    if job.stopped_by is not None:
        kept = f"; logs kept: {', '.join(map(str, job.logs))}" if job.logs else ""
        raise Interrupted(job.stopped_by, f"interrupted: the job was stopped{kept}")
    if len(job.logs) > 1:
        raise ScalewiseError(f"the launch started {len(job.logs)} separate MPI jobs instead of one "
                             f"({_sizes(job)}): does the launcher belong to the application's MPI "
                             f"({display_name(job.flavour)})? logs kept: {', '.join(map(str, job.logs))}")
    if not job.logs:
        if job.returncode:
            raise ApplicationFailed(f"no profile was written: the job {describe_exit(job.returncode)} before "
                                    "every rank reached MPI_Finalize")
        raise ProfilerFailed("no profile was written although the job exited with code 0: did the application "
                             f"call MPI_Finalize, and is it built with {job.flavour}?")
    log = job.logs[0]
    profile = rows = None
    try:
        if as_json:
            from scalewise.logfile.reader import read_profile

            profile = read_profile(log)
            nranks, partial = profile.nranks, profile.partial
        elif not quiet:
            from scalewise.logfile.plain import read_plain

            rows = read_plain(log)
            nranks, partial = rows.nranks, rows.partial
        else:
            nranks, partial = log_counts(log)
    except LogFormatError as exc:
        raise ProfilerFailed(f"the profiler wrote an unreadable log: {exc}") from exc
    if job.line.ranks is not None and nranks != job.line.ranks:
        raise ScalewiseError(f"world size mismatch: the launch line asks for {plural(job.line.ranks, 'rank')}, the job ran "
                             f"{nranks} (log kept: {log})")
    if trace and not job.traces:
        raise ProfilerFailed("no trace was written (see the job's messages above)")
    if as_json:
        traces = {"traces": [str(t) for t in job.traces]} if trace else {}
        echo_json({"log": str(log), **traces, **profile.to_json_dict()})
    else:
        if rows is not None:
            from scalewise.report.run.lean import print_lean_summary

            print_lean_summary(rows)
        click.echo(f"profile: {log}")
        for path in job.traces:
            click.echo(f"trace: {path}")
    if profile is not None or rows is not None:
        # The command ends here: the exit need not walk the profile's and the analysis' objects
        # (docs/benchmarks.md).
        gc.freeze()
    if job.returncode:
        state = "partial" if partial else "complete"
        raise ApplicationFailed(f"the application {describe_exit(job.returncode)}; the profile is {state}")


def _sizes(job: ProfiledJob) -> str:
    sizes = []
    for log in job.logs:
        try:
            sizes.append(str(log_counts(log)[0]))
        except LogFormatError:
            sizes.append("?")
    return "world sizes " + ", ".join(sizes)
