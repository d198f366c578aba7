"""Decide whether a finished launch was a good run, and read its figure of merit.

A run is ``ok`` only if every one of these holds, checked in this order (the
first failure becomes the recorded reason):
1. the launch ended by itself (else ``timeout``) and exited 0;
2. the MPI world had exactly the ranks asked for: the profile log's
   ``nranks`` when profiling, else the world-size probe; and any
   ``SCALEWISE_RESULT`` line agrees (``ranks=P``);
3. the application did not report ``status=FAIL`` (checked first: it is
   the most telling reason when the run also exited non-zero);
4. the figure of merit could be read.

Figure-of-merit sources (docs/studies.md): ``wall``, the launcher's wall
(start to exit, launch and teardown included); ``profile_wall``, the
application's own wall as the profiler measured it (the slowest rank's
MPI_Init return to MPI_Finalize entry; needs ``profile: true``); ``regex``
and ``result_line``, what the application prints.  ``analysis.overhead.launch_overhead`` says
when launch and teardown take more than a third of the launcher's wall.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from scalewise.campaign.failure import failure_reason
from scalewise.campaign.studyfile import Fom
from scalewise.errors import ScalewiseError
from scalewise.launch.base import Outcome
from scalewise.launch.probe import read_probe
from scalewise.logfile.reader import read_profile

RESULT_TAG = "SCALEWISE_RESULT"
# Launch and teardown (launcher wall minus the application's own wall) above
# this share of the launcher's wall: the wall figure of merit mostly times the launcher.


def result_lines(text: str) -> list[dict[str, str]]:
    """Every ``SCALEWISE_RESULT key=value ...`` line of ``text`` as a dict."""
    out = []
    for line in text.splitlines():
        if line.startswith(RESULT_TAG + " "):
            try:
                tokens = shlex.split(line[len(RESULT_TAG):])
            except ValueError:
                tokens = line[len(RESULT_TAG):].split()
            out.append(dict(t.split("=", 1) for t in tokens if "=" in t))
    return out


@dataclass
class RunEvaluation:
    status: str
    reason: str | None = None
    world_size: int | None = None
    hosts: list[str] | None = None
    fom: float | None = None
    fom_name: str | None = None
    fom_unit: str | None = None
    higher_is_better: bool | None = None
    app_wall: float | None = None  # the application's own wall from the profile log, when profiled


def _number(text: str) -> float | None:
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def regex_fom(spec: Fom, stdout: str) -> tuple[float | None, str | None]:
    """(value, problem) of a regex figure of merit.

    Every match must be a number.  When the matches give different values the
    study must say which counts (``match: first``, ``last`` or ``mean``):
    silently taking one would make a run's number depend on how often the
    program happens to print it.  Repeats of one value are that value.
    """
    texts = [m.group(1) for m in re.finditer(spec.pattern, stdout, re.MULTILINE)]
    if not texts:
        return None, f"figure of merit not found: no number matched /{spec.pattern}/"
    values = [_number(t) for t in texts]
    if None in values:
        return None, f"figure of merit not a number: /{spec.pattern}/ matched {texts[values.index(None)]!r}"
    if spec.match is None and len(set(values)) > 1:
        shown = ", ".join(texts[:5]) + (f", ... ({len(texts)} matches)" if len(texts) > 5 else "")
        return None, (f"figure of merit ambiguous: /{spec.pattern}/ matched {len(texts)} different values ({shown}); "
                      f"set fom.match to first, last or mean")
    if spec.match == "first":
        return values[0], None
    if spec.match == "mean":
        return sum(values) / len(values), None
    return values[-1], None


def read_fom(spec: Fom, stdout: str, results: list[dict[str, str]], wall: float | None,
             app_wall: float | None = None) -> tuple[float | None, str, str | None, bool, str | None]:
    """(value, name, unit, higher_is_better, problem) of the figure of merit."""
    if spec.source == "wall":
        return wall, spec.name if spec.name != "fom" else "wall", spec.unit or "s", spec.higher_is_better, None
    if spec.source == "profile_wall":
        problem = None if app_wall is not None else \
            "figure of merit not found: fom source profile_wall needs a profile log (set profile: true)"
        return (app_wall, spec.name if spec.name != "fom" else "profile_wall", spec.unit or "s",
                spec.higher_is_better, problem)
    if spec.source == "regex":
        value, problem = regex_fom(spec, stdout)
        return value, spec.name, spec.unit, spec.higher_is_better, problem
    if not results:
        return None, spec.name, spec.unit, spec.higher_is_better, f"figure of merit not found: no {RESULT_TAG} line"
    last = results[-1]
    value = _number(last.get("fom"))
    hib = last.get("higher_is_better", "1" if spec.higher_is_better else "0") == "1"
    problem = None if value is not None else f"figure of merit not found: {RESULT_TAG} line has fom={last.get('fom')!r}"
    return value, spec.name, last.get("fom_unit", spec.unit), hib, problem


def world_from_profile(path: Path) -> tuple[int | None, list[str] | None, str | None]:
    """(world size, hosts, problem) from a profile log."""
    world, hosts, _, problem = _from_profile(path)
    return world, hosts, problem


def profile_wall(path: Path) -> float | None:
    """The application's own wall from a run's profile log (the slowest rank's window), or None
    when the log is missing or unreadable: the second half of a ``launch_overhead`` pair."""
    return _from_profile(path)[2]


def _from_profile(path: Path) -> tuple[int | None, list[str] | None, float | None, str | None]:
    """(world size, hosts, the application's own wall, problem) from a profile log."""
    if not path.is_file():
        return None, None, None, f"profile log {path.name} was not written (did the profiler load into the ranks?)"
    try:
        profile = read_profile(path)
    except (ScalewiseError, OSError) as exc:
        return None, None, None, f"profile log unreadable: {exc}"
    hosts = sorted({str(h) for h in profile.ranks["host"]}) if "host" in profile.ranks else None
    wall = float(profile.ranks["wall"].max()) if not profile.ranks.empty else None
    return profile.nranks, hosts, wall, None


def judge(outcome: Outcome, asked: int, spec: Fom, stdout: str, profile_path: Path | None,
          probe_dir: Path | None, stderr: str = "") -> RunEvaluation:
    """The verdict on one launch (see the module docstring for the rules)."""
    results = result_lines(stdout)
    world, hosts, app_wall, world_problem = _world(asked, profile_path, probe_dir)
    value, name, unit, hib, fom_problem = read_fom(spec, stdout, results, outcome.wall, app_wall)
    verdict = RunEvaluation("ok", None, world, hosts or outcome.hosts, value, name, unit, hib, app_wall)
    if outcome.timed_out:
        verdict.status, verdict.reason = "timeout", outcome.reason or "timed out"
    elif outcome.lost_nodes:
        verdict.status = "failed"
        verdict.reason = outcome.lost_nodes + ("" if outcome.exit_code == 0 else
                                               f"; {outcome.reason or _exit_reason(outcome.exit_code)}")
    elif failed := [r for r in results if r.get("status") == "FAIL"]:
        verdict.status = "failed"
        verdict.reason = f"application reported status=FAIL (check={failed[0].get('check')}, " \
                         f"{_exit_reason(outcome.exit_code)})"
    elif outcome.exit_code != 0:
        verdict.status = "failed"
        verdict.reason = outcome.reason or failure_reason(outcome.exit_code, stderr, profile_path)
    elif world_problem:
        verdict.status, verdict.reason = "failed", world_problem
    elif bad := [r for r in results if r.get("ranks") not in (None, str(asked))]:
        verdict.status = "failed"
        verdict.reason = f"world size mismatch: asked for {asked} ranks, application reported ranks={bad[0]['ranks']}"
    elif fom_problem:
        verdict.status, verdict.reason = "failed", fom_problem
    return verdict


def _exit_reason(code: int | None) -> str:
    if code is None:
        return "the launch did not report an exit status"
    if code < 0:
        return f"launcher killed by signal {-code}"
    return f"exit code {code}"


def _world(asked: int, profile_path: Path | None,
           probe_dir: Path | None) -> tuple[int | None, list[str] | None, float | None, str | None]:
    """(world size, hosts, the application's own wall if profiled, problem)."""
    if profile_path is not None:
        world, hosts, app_wall, problem = _from_profile(profile_path)
        if problem is None and world != asked:
            problem = f"world size mismatch: asked for {asked} ranks, the profile log reports {world}"
        return world, hosts, app_wall, problem
    if probe_dir is not None:
        report = read_probe(probe_dir)
        sizes = {size for _, size, _ in report.entries}
        world = sizes.pop() if len(sizes) == 1 else None
        return world, report.hosts or None, None, report.problem(asked)
    return None, None, None, None
