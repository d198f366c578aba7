"""Run a study: plan, skip what is done, run the rest one at a time, record each result.

Runs go one at a time on purpose: benchmark runs sharing a machine would
measure each other.  The order is the plan's; a resumed campaign picks up the
runs still ``pending``, left ``running`` by a killed campaign or
``interrupted`` by SIGINT/SIGTERM (and, with ``retry_failed``, the ``failed``
and ``timeout`` ones).

SIGINT and SIGTERM stop the job in progress (its whole process group, or its
Slurm job), mark its run ``interrupted`` and raise :class:`Interrupted`,
carrying how far the campaign got; a signal between runs stops before the next.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from scalewise.campaign.build import Builder
from scalewise.campaign.evaluate import judge
from scalewise.campaign.expand import RunSpec, expand
from scalewise.campaign.placement import placement
from scalewise.campaign.prepare import check_runnable, prepare, run_dir
from scalewise.campaign.progress import Reporter
from scalewise.campaign.provenance import run_provenance, session_columns, session_provenance
from scalewise.campaign.store import FAILED, INTERRUPTED, RunResult, Store, store_path
from scalewise.campaign.study import LoadedStudy
from scalewise.cluster.scheduler import EmulatedScheduler, needs_nodes
from scalewise.errors import Interrupted, ScalewiseError, signal_name
from scalewise.formatting import plural
from scalewise.launch.base import Scheduler, get_scheduler
from scalewise.launch.process import STOP, stop_on_signals
from scalewise.launch.profiled import TEMPORARY_LOGS
from scalewise.launch.timeutil import utc_now

@dataclass
class CampaignSummary:
    planned: int
    skipped: int
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def ran(self) -> int:
        return sum(self.counts.values())


def make_scheduler(loaded: LoadedStudy, name: str) -> Scheduler:
    if name == "slurm":
        opts = loaded.model.slurm
        return get_scheduler("slurm", launcher=opts.launcher, partition=opts.partition, sbatch_args=opts.sbatch_args,
                             pmi=dict(opts.pmi), pending_limit=opts.pending_limit)
    return get_scheduler(name)


def select_todo(runs: list[RunSpec], statuses: dict[str, str], retry_failed: bool) -> list[RunSpec]:
    """Runs still to do: never-finished ones, plus failed/timed-out ones when retrying."""
    wanted = {"pending", "running", INTERRUPTED} | (set(FAILED) if retry_failed else set())
    return [r for r in runs if statuses.get(r.run_id, "pending") in wanted]


class _Lock:
    """One campaign per study output folder at a time (two would double-book the machine and the rows)."""

    def __init__(self, folder: Path):
        folder.mkdir(parents=True, exist_ok=True)
        self.fh = open(folder / ".lock", "w")
        try:
            fcntl.flock(self.fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self.fh.close()
            raise ScalewiseError(f"another 'scalewise study run' is using {folder}") from None

    def release(self) -> None:
        self.fh.close()


def run_study(loaded: LoadedStudy, scheduler_name: str = "local", retry_failed: bool = False,
              reporter: Reporter | None = None) -> CampaignSummary:
    """Run every run of the study not yet done; returns what happened."""
    runs = expand(loaded)
    if scheduler_name == "local" and needs_nodes(runs):
        scheduler_name = "emulated"  # more than one node, or an interconnect: emulated nodes (docs/cluster.md)
    scheduler = make_scheduler(loaded, scheduler_name)
    try:
        scheduler.check(runs)
        lock = _Lock(loaded.output)
        try:
            store = Store(store_path(loaded))
            try:
                with stop_on_signals():
                    return _campaign(loaded, runs, scheduler, store, retry_failed, reporter or Reporter(quiet=True))
            finally:
                store.close()
        finally:
            lock.release()
    finally:
        if isinstance(scheduler, EmulatedScheduler):
            scheduler.close()


def _campaign(loaded: LoadedStudy, runs: list[RunSpec], scheduler: Scheduler, store: Store, retry_failed: bool,
              reporter: Reporter) -> CampaignSummary:
    study_sha = hashlib.sha256(loaded.text).hexdigest()
    store.set_study_info({"name": loaded.model.name, "description": loaded.model.description,
                          "study_path": str(loaded.path), "study_sha256": study_sha,
                          "scaling": loaded.model.scaling})
    store.add_plan(runs)
    todo = select_todo(runs, store.statuses(), retry_failed)
    summary = CampaignSummary(planned=len(runs), skipped=len(runs) - len(todo))
    session = store.begin_session(session_columns(scheduler.name, loaded.path, study_sha, utc_now()),
                                  session_provenance(sorted({r.mpi for r in runs}), scheduler.name))
    builder = Builder(loaded)
    scheduler.on_note = reporter.note
    with reporter.campaign(len(todo), summary.skipped):
        for run in todo:
            _stop_if_asked(summary, store, session, None)
            store.mark_running(run.run_id, session, scheduler.name)
            try:
                result = execute(loaded, run, scheduler, builder, study_sha)
            except Interrupted as stop:
                _stop_if_asked(summary, store, session, run.run_id, stop.signum)
            except Exception as exc:  # noqa: BLE001 - whatever broke this run, it must not stay 'running'
                result = launch_failure(run, scheduler, f"could not run: {type(exc).__name__}: {exc}", loaded.output)
            store.record(run.run_id, result)
            summary.counts[result.status] = summary.counts.get(result.status, 0) + 1
            reporter.finished(run, result)
    store.end_session(session)
    return summary


def _stop_if_asked(summary: CampaignSummary, store: Store, session: int, run_id: str | None,
                   signum: int | None = None) -> None:
    """On a stop request: mark the run in progress interrupted, close the session, raise Interrupted."""
    signum = signum or STOP.signum
    if signum is None:
        return
    if run_id is not None:
        store.mark_interrupted(run_id, f"stopped by {signal_name(signum)}")
    store.end_session(session)
    done = f"{summary.skipped + summary.ran} of {plural(summary.planned, 'run')} done"
    stopped = f"run {run_id} stopped and marked interrupted; " if run_id else ""
    raise Interrupted(signum, f"interrupted by {signal_name(signum)}: {stopped}{done}")


def execute(loaded: LoadedStudy, run: RunSpec, scheduler: Scheduler, builder: Builder, study_sha: str) -> RunResult:
    """Build if needed, launch, judge.  Problems of this run become its recorded reason, never an abort."""
    started = utc_now()
    base = loaded.output
    try:
        if reason := builder.ensure(run.app, run.variant, run.mpi):
            raise ScalewiseError(reason)
        prepared = prepare(loaded, run)
        check_runnable(prepared)
        outcome = scheduler.run(prepared.job)
        for leftover in prepared.job.rundir.glob(TEMPORARY_LOGS):
            leftover.unlink()  # a rank killed while writing its log: never a result
    except ScalewiseError as exc:
        return launch_failure(run, scheduler, str(exc), loaded.output, started)
    job = prepared.job
    stdout = job.stdout.read_text(errors="replace") if job.stdout.exists() else ""
    spec = loaded.model.applications[run.app].fom
    stderr = job.stderr.read_text(errors="replace") if job.stderr.exists() else ""
    verdict = judge(outcome, run.ranks, spec, stdout, prepared.profile_path, prepared.probe_dir, stderr)
    profile = prepared.profile_path
    cores, placed, oversubscribed = placement(run.ranks, run.nodes, run.threads, outcome.placement)
    return RunResult(
        status=verdict.status, reason=verdict.reason, exit_code=outcome.exit_code, wall=outcome.wall,
        started_at=outcome.started_at, ended_at=outcome.ended_at, fom=verdict.fom, fom_name=verdict.fom_name,
        fom_unit=verdict.fom_unit, higher_is_better=verdict.higher_is_better, world_size=verdict.world_size,
        hosts=outcome.hosts or verdict.hosts, stdout_path=_rel(job.stdout, base), stderr_path=_rel(job.stderr, base),
        profile_path=_rel(profile, base) if profile is not None and profile.exists() else None,
        command=outcome.command, scheduler=scheduler.name, job_id=outcome.job_id, cores_per_node=cores,
        placed_per_node=placed, oversubscribed=oversubscribed,
        provenance=run_provenance(run.mpi, loaded.model.applications[run.app].variants[run.variant].flags,
                                  prepared.executable, job.env, study_sha)
        | {f"launcher.{k}": v for k, v in outcome.settings.items()})


def launch_failure(run: RunSpec, scheduler: Scheduler, reason: str, base: Path | None = None,
                   started: str | None = None) -> RunResult:
    """The record of a run that could not be launched or judged: failed, with why, and its output if any."""
    stdout = run_dir(base, run.run_id) / "stdout" if base is not None else None
    return RunResult(status="failed", reason=reason, exit_code=None, wall=None, started_at=started or utc_now(),
                     ended_at=utc_now(), scheduler=scheduler.name,
                     stdout_path=_rel(stdout, base) if stdout is not None and stdout.exists() else None)


def _rel(path: Path, base: Path) -> str:
    """Paths are stored relative to the database's folder, so a study folder can move."""
    return os.path.relpath(path, base)
