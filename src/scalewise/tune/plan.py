"""`scalewise tune`: from one profiled run, a study that sweeps the MPI library's choices for what dominates it.

:func:`source_from_log` and :func:`source_from_study` find what to run and
where (the profiled command, or the largest profiled run of a study) and the
targets (``tune/targets.py``); :func:`plan_study` turns the targets
into an ordinary study file (one parameter set per algorithm or threshold,
each changing one thing from the default) cut to fit the time budget; the
campaign runner runs it; ``tune/decision.py`` reads its B3 table
for screening's pick per target; :func:`confirmation_study` and
:func:`held_out_study` are the fresh rounds that decide
(``tune/rounds.py``), and :func:`settings_file` writes the
chosen set for the library to read.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from scalewise.analysis.stats import MIN_REPS as MIN_REPETITIONS
from scalewise.analysis.study.tuning import DEFAULT
from scalewise.campaign.mpi_settings import MpiSettings
from scalewise.campaign.results import locate_results, read_results
from scalewise.errors import ScalewiseError
from scalewise.launch.mpis import alias_of, identity_from_version
from scalewise.launch.preload import binary_flavour
from scalewise.launch.releases import release_line
from scalewise.logfile.meta import mpi_flavour
from scalewise.logfile.reader import read_profile
from scalewise.model.profile import Profile
from scalewise.tune.choices import candidate_sets
from scalewise.tune.targets import TuneTarget, dominant_targets

LAUNCH_SECONDS = 1.0  # what starting and ending an MPI job adds to its measured time, about, on one node
COMBINED = "combined"
# Confirmation and held-out rounds: 5 runs a side, so that the exact test can reach p = 1/252 and Holm's
# correction over up to 4 sets (3 targets and their combination) still has room: 1/252 < 0.05 / 4.
CONFIRM_REPETITIONS = 5
HELD_OUT_REPETITIONS = 5


@dataclass
class TuneSource:
    """What to run again, how, and what its profile says dominates it."""

    origin: str  # the log or study it came from, for the study's description
    profile: Profile
    mpi: str
    application: dict  # the study file's application entry
    workdir: Path
    axes: dict  # ranks, nodes, transport and custom axes of the run to tune
    run_seconds: float  # one run, launch included, estimated
    transports: dict = field(default_factory=dict)  # a non-built-in transport's definition
    mpis: dict = field(default_factory=dict)  # the study's own name for its MPI, with its prefix

    @property
    def line(self) -> str:
        """The MPI's release line (launch/releases.py): which settings the library understands."""
        return release_line(self.mpi, "tune")

    @property
    def targets(self) -> list[TuneTarget]:
        return dominant_targets(self.profile)


def _flavour(profile: Profile) -> str:
    """The run's MPI: its identity as its log names it (Debian's two by their short names), else what its
    program is linked against."""
    command = profile.meta.get("command") or []
    identity = identity_from_version(str(profile.meta.get("mpi_library") or ""))
    found = ((alias_of(identity) or identity) if identity else None) or mpi_flavour(profile.meta) \
        or (binary_flavour(command[0]) if command else None)
    if found is None:
        library = str(profile.meta.get("mpi_library") or "")
        raise ScalewiseError(f"{profile.path}: cannot tell which MPI library the run used (mpi_library: "
                             f"{library.splitlines()[0] if library else 'not recorded'})")
    return found


def _template(arg: str) -> str:
    return arg.replace("{", "{{").replace("}", "}}")  # a literal argument, not a placeholder


def source_from_log(path: str | Path, fom: dict | None = None) -> TuneSource:
    """The command a profile log recorded, run again from the folder it ran in."""
    profile = read_profile(path)
    command = profile.meta.get("command")
    if not command:
        raise ScalewiseError(f"{path}: the log records no command line to run again")
    start, end = profile.meta.get("start_time"), profile.meta.get("end_time")
    seconds = (float(end) - float(start) if start and end else float(profile.ranks["wall"].max())) + LAUNCH_SECONDS
    return TuneSource(origin=str(path), profile=profile, mpi=_flavour(profile),
                      application={"command": [_template(a) for a in command], "fom": fom or {"source": "wall"}},
                      workdir=Path(profile.meta.get("cwd") or "."), axes={"ranks": [profile.nranks]},
                      run_seconds=seconds)


def source_from_study(path: str | Path) -> TuneSource:
    """The largest successful profiled run of a study, with its application, settings and custom axes."""
    located = locate_results(path)
    if located.study is None:
        raise ScalewiseError(f"{path}: give the study file (its applications say what to run), not its results")
    study = located.study
    runs = read_results(located, profiles=False).runs
    runs = runs[(runs["status"] == "ok") & runs["profile_path"].notna()]
    if runs.empty:
        raise ScalewiseError(f"{path}: no successful profiled run to tune from (set profile: true and run the study)")
    runs = runs.assign(_size=runs["nodes"] * runs["ranks"]).sort_values(["_size", "run_id"], ascending=[False, True])
    run = runs.iloc[0]
    same = runs[(runs["app"] == run["app"]) & (runs["_size"] == run["_size"]) & (runs["mpi"] == run["mpi"])]
    app = study.model.applications[run["app"]].model_dump(exclude_defaults=True)
    axes = {"nodes": [int(run["nodes"])], "ranks": [int(run["ranks"])], "transport": [run["transport"]]}
    custom = {name: [run[name]] for name in study.model.axes.custom}
    if custom:
        axes["custom"] = custom  # the run's own axes, declared as such in the generated study too
    transports = {t: s.model_dump(exclude_defaults=True) for t, s in study.model.transports.items()
                  if t == run["transport"]}
    mpis = {m: s.model_dump(exclude_defaults=True) for m, s in study.model.mpis.items()
            if m == run["mpi"]}
    return TuneSource(origin=f"{path} (run {run['run_id']}: {run['app']}, {run['mpi']}, {int(run['ranks'])} ranks)",
                      profile=read_profile(run["profile_path"]), mpi=str(run["mpi"]), application=app,
                      workdir=study.workdir, axes=axes, run_seconds=float(same["wall"].median()),
                      transports=transports, mpis=mpis)


@dataclass(frozen=True)
class TunePlan:
    """The study to run and what was left out of it to fit the budget."""

    study: dict
    targets: list[TuneTarget]
    sets: dict[str, dict[str, MpiSettings]]  # per target, the sets kept
    dropped: list[str]  # sets left out for the budget
    runs: int  # screening runs
    seconds: float  # screening and, at most, confirmation and the held-out round


def _over_network(source: TuneSource) -> bool:
    return source.axes.get("nodes", [1])[0] > 1 or source.axes.get("transport", ["default"])[0] == "tcp"


def plan_study(source: TuneSource, name: str, budget_minutes: float, repetitions: int = MIN_REPETITIONS) -> TunePlan:
    """The tuning study: the default plus every candidate set that fits in the budget, busiest target first."""
    line = source.line
    if repetitions < MIN_REPETITIONS:
        raise ScalewiseError(f"--repetitions: at least {MIN_REPETITIONS}, or the noise guard cannot decide")
    targets = source.targets
    if not targets:
        raise ScalewiseError(f"{source.origin}: no collective or point-to-point traffic holds 5% of MPI time; "
                             "nothing for MPI settings to tune")
    candidates = candidate_sets(line, targets, _over_network(source), source.axes.get("nodes", [1])[0] > 1)
    if not candidates:
        names = ", ".join(t.name for t in targets)
        raise ScalewiseError(f"{source.origin}: {source.mpi} offers no choice for what dominates ({names})")
    per_set = repetitions * source.run_seconds
    # Confirmation: the default, a pick per target and their combination, then the held-out round of the
    # default against the one chosen set, all on fresh runs.
    confirm = (len(candidates) + 2 if len(candidates) > 1 else 2) * max(repetitions, CONFIRM_REPETITIONS)
    confirm += 2 * HELD_OUT_REPETITIONS
    reserve = confirm * source.run_seconds
    room = int((budget_minutes * 60 - reserve) // per_set) - 1  # the default's runs come first
    if room < 1:
        need = math.ceil((2 * per_set + reserve) / 60)
        raise ScalewiseError(f"--budget {budget_minutes:g}: one run takes about {source.run_seconds:.1f} s, so the "
                             f"default and one set at {repetitions} repetitions, then their confirmation and held-out "
                             f"round, need "
                             f"{need} minutes")
    kept: dict[str, dict[str, MpiSettings]] = {}
    dropped = []
    for target, sets in candidates.items():
        for set_name, settings in sets.items():
            if room > 0:
                kept.setdefault(target, {})[set_name] = settings
                room -= 1
            else:
                dropped.append(set_name)
    params = {n: s for sets in kept.values() for n, s in sets.items()}
    study = {
        "name": name,
        "description": f"MPI settings for what dominates {source.origin}: "
                       + "; ".join(f"{t.name} {t.pct_mpi:.0f}% of MPI time, {t.size_label}, {t.comm_size} ranks"
                                   for t in targets),
        "workdir": str(source.workdir.resolve()),
        "output": f"{name}.study",
        "applications": {"app": source.application},
        "axes": {**source.axes, "mpi": [source.mpi], "params": [DEFAULT, *params]},
        "transports": source.transports,
        "parameter_sets": {n: s.model_dump(exclude_defaults=True) for n, s in params.items()},
        "repetitions": repetitions,
        "timeout": max(30.0, round(10 * source.run_seconds)),
    }
    if not study["transports"]:
        del study["transports"]
    if source.mpis:
        study = {"mpis": source.mpis, **study}
    runs = (len(params) + 1) * repetitions
    return TunePlan(study, targets, kept, dropped, runs, (runs + confirm) * source.run_seconds)


def write_study(study: dict, path: Path, header: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    comment = "".join(f"# {line}\n" if line else "#\n" for line in header.splitlines())
    path.write_text(comment + yaml.safe_dump(study, sort_keys=False, default_flow_style=None, width=110))


def _fresh(study: dict, suffix: str, description: str, sets: dict, repetitions: int, seed: int) -> dict:
    name = f"{study['name']}-{suffix}"
    return {**study, "name": name, "output": f"{name}.study", "description": description + study["description"],
            "axes": {**study["axes"], "params": [DEFAULT, *sets]}, "parameter_sets": sets,
            "repetitions": repetitions, "order": "shuffled", "seed": seed}


def confirmation_study(study: dict, winners: list[str], repetitions: int) -> dict:
    """A second, independent study of the default against screening's picks (and, with two or more, all of
    them at once as ``combined``), on fresh runs in a shuffled order within each round."""
    sets = {n: study["parameter_sets"][n] for n in winners}
    if len(winners) >= 2:
        merged: dict[str, dict] = {}
        for name in winners:
            for kind, values in sets[name].items():
                merged.setdefault(kind, {}).update(values)
        sets[COMBINED] = merged
    return _fresh(study, "confirm", "Confirmation on fresh runs: ", sets, repetitions, 1)


def held_out_study(study: dict, confirm: dict, chosen: str, repetitions: int) -> dict:
    """The last round: the default against the one set confirmation chose, on fresh runs; its gain is the one
    reported (the confirmation's own is biased upward by choosing the best of several)."""
    sets = {chosen: confirm["parameter_sets"][chosen]}
    return _fresh(study, "held-out", "Held-out round of the chosen set on fresh runs: ", sets, repetitions, 2)


def settings_file(line: str, settings: MpiSettings | None, note: str) -> str:
    """The winner as Open MPI reads MCA parameter files (``name = value``) or, for MPICH and Intel MPI, as an
    environment file (``NAME=VALUE``); ``line`` is the MPI's release line."""
    lines = [f"# {text}" for text in note.splitlines()]
    library = line.split("-", 1)[0]  # a short name (openmpi, mpich) is its own family
    if settings is None:
        lines.append("# no setting beat the default beyond noise on fresh runs: nothing to set")
    elif library == "openmpi":
        lines.append("# use: mpirun --mca mca_base_param_files THIS_FILE ... (or append to ~/.openmpi/mca-params.conf)")
        lines += [f"{k} = {v}" for k, v in sorted(settings.mca.items())]
        lines += [f"# environment: {k}={v}" for k, v in sorted({**settings.env, **settings.openmpi_env}.items())]
    elif library == "mpich":
        lines.append("# use: set -a; . THIS_FILE; set +a; mpiexec ...")
        lines += [f"{k}={v}" for k, v in sorted({**settings.cvars, **settings.env, **settings.mpich_env}.items())]
    else:
        lines.append("# use: set -a; . THIS_FILE; set +a; mpiexec.hydra ...")
        lines += [f"{k}={v}" for k, v in sorted(settings.env.items())]
    return "\n".join(lines) + "\n"


STUDY_SUFFIXES = (".yaml", ".yml")


def study_name(command: list[str]) -> str:
    """``tune-<program>``: the generated study's name and its default folder."""
    stem = Path(command[0]).name if command else "app"
    return "tune-" + (re.sub(r"[^A-Za-z0-9_.-]", "-", stem).strip("-.") or "app")


def plan_from(source: str | Path, budget_minutes: float, repetitions: int, fom: str = "wall"
              ) -> tuple[TuneSource, TunePlan]:
    """The source (a study file, else a profile log compared by ``fom``: ``wall`` or ``result_line``) and its plan."""
    if Path(source).suffix in STUDY_SUFFIXES:
        src = source_from_study(source)
    else:
        src = source_from_log(source, {"source": "result_line"} if fom == "result_line" else None)
    return src, plan_study(src, study_name(src.application["command"]), budget_minutes, repetitions)
