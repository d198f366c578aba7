"""Run a study: plan, skip what is done, run the rest one at a time, record each result.

Runs go one at a time on purpose: benchmark runs sharing a machine would
measure each other.  The order is the plan's; a resumed campaign picks up the
runs still ``pending`` or left ``running`` by a killed campaign (and, with
``retry_failed``, the ``failed`` and ``timeout`` ones).
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
from scalewise.campaign.prepare import check_runnable, prepare, run_dir
from scalewise.campaign.progress import Reporter
from scalewise.campaign.provenance import run_provenance, session_columns, session_provenance
from scalewise.campaign.store import FAILED, RunResult, Store
from scalewise.campaign.study import LoadedStudy
from scalewise.errors import ScalewiseError
from scalewise.launch.base import Scheduler, get_scheduler
from scalewise.launch.timeutil import utc_now

DB_NAME = "results.sqlite"


@dataclass
class CampaignSummary:
    planned: int
    skipped: int
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def ran(self) -> int:
        return sum(self.counts.values())


def store_path(loaded: LoadedStudy) -> Path:
    return loaded.output / DB_NAME


def open_store(loaded: LoadedStudy) -> Store:
    return Store(store_path(loaded))


def make_scheduler(loaded: LoadedStudy, name: str) -> Scheduler:
    if name == "slurm":
        opts = loaded.model.slurm
        return get_scheduler("slurm", launcher=opts.launcher, partition=opts.partition, sbatch_args=opts.sbatch_args,
                             pmi=dict(opts.pmi))
    return get_scheduler(name)


def select_todo(runs: list[RunSpec], statuses: dict[str, str], retry_failed: bool) -> list[RunSpec]:
    """Runs still to do: never-finished ones, plus failed/timed-out ones when retrying."""
    wanted = {"pending", "running"} | (set(FAILED) if retry_failed else set())
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
    scheduler = make_scheduler(loaded, scheduler_name)
    scheduler.check(runs)
    lock = _Lock(loaded.output)
    store = open_store(loaded)
    try:
        return _campaign(loaded, runs, scheduler, store, retry_failed, reporter or Reporter(quiet=True))
    finally:
        store.close()
        lock.release()


def _campaign(loaded: LoadedStudy, runs: list[RunSpec], scheduler: Scheduler, store: Store, retry_failed: bool,
              reporter: Reporter) -> CampaignSummary:
    study_sha = hashlib.sha256(loaded.text).hexdigest()
    store.set_study_info({"name": loaded.model.name, "description": loaded.model.description,
                          "study_path": str(loaded.path), "study_sha256": study_sha})
    store.add_plan(runs)
    todo = select_todo(runs, store.statuses(), retry_failed)
    summary = CampaignSummary(planned=len(runs), skipped=len(runs) - len(todo))
    session = store.begin_session(session_columns(scheduler.name, loaded.path, study_sha, utc_now()),
                                  session_provenance(sorted({r.mpi for r in runs}), scheduler.name))
    builder = Builder(loaded)
    with reporter.campaign(len(todo), summary.skipped):
        for run in todo:
            store.mark_running(run.run_id, session, scheduler.name)
            result = execute(loaded, run, scheduler, builder, study_sha)
            store.record(run.run_id, result)
            summary.counts[result.status] = summary.counts.get(result.status, 0) + 1
            reporter.finished(run, result)
    store.end_session(session)
    return summary


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
    except ScalewiseError as exc:
        folder = run_dir(base, run.run_id)
        return RunResult(status="failed", reason=str(exc), exit_code=None, wall=None, started_at=started,
                         ended_at=utc_now(), scheduler=scheduler.name,
                         stdout_path=_rel(folder / "stdout", base) if (folder / "stdout").exists() else None)
    job = prepared.job
    stdout = job.stdout.read_text(errors="replace") if job.stdout.exists() else ""
    spec = loaded.model.applications[run.app].fom
    verdict = judge(outcome, run.ranks, spec, stdout, prepared.profile_path, prepared.probe_dir)
    profile = prepared.profile_path
    return RunResult(
        status=verdict.status, reason=verdict.reason, exit_code=outcome.exit_code, wall=outcome.wall,
        started_at=outcome.started_at, ended_at=outcome.ended_at, fom=verdict.fom, fom_name=verdict.fom_name,
        fom_unit=verdict.fom_unit, higher_is_better=verdict.higher_is_better, world_size=verdict.world_size,
        hosts=outcome.hosts or verdict.hosts, stdout_path=_rel(job.stdout, base), stderr_path=_rel(job.stderr, base),
        profile_path=_rel(profile, base) if profile is not None and profile.exists() else None,
        command=outcome.command, scheduler=scheduler.name, job_id=outcome.job_id,
        provenance=run_provenance(run.mpi, loaded.model.applications[run.app].variants[run.variant].flags,
                                  prepared.executable, job.env, study_sha))


def _rel(path: Path, base: Path) -> str:
    """Paths are stored relative to the database's folder, so a study folder can move."""
    return os.path.relpath(path, base)
