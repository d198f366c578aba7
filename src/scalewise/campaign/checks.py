"""Checks across keys of a study, after pydantic has checked each key alone.

Each check raises the first problem as ``file:line: key: reason`` through
:meth:`Source.error`, so a user fixes one thing at a time, in file order.
"""

from __future__ import annotations

import math
import re
import string

from scalewise.campaign.mpi_settings import BUILTIN_PARAMS, BUILTIN_TRANSPORTS
from scalewise.campaign.rules import MAX_TEXT, check_name
from scalewise.campaign.source import Source
from scalewise.campaign.studyfile import StudyFile
from scalewise.formatting import plural
from scalewise.launch.mpis import name_problem

STANDARD_AXES = ("nodes", "ranks", "ranks_per_node", "threads", "mpi", "transport", "params", "interconnect")
# Axes every run has even when the file does not sweep them.
IMPLICIT_AXES = ("app", "variant")
RUN_PLACEHOLDERS = {"app", "variant", "flags", "mpi", "transport", "params", "nodes", "ranks",
                    "ranks_per_node", "threads", "repetition", "run_id", "rundir", "workdir", "builddir"}
BUILD_PLACEHOLDERS = {"app", "variant", "flags", "mpi", "workdir", "builddir", "mpicc", "mpicxx", "mpifort"}
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def check_study(study: StudyFile, src: Source) -> None:
    """Raise the first cross-key problem of ``study``."""
    _check_names(study, src)
    _check_custom_axes(study, src)
    _check_ranks(study, src)
    _check_mpis(study, src)
    _check_named(study, src, "transport", "transports", BUILTIN_TRANSPORTS, study.transports)
    _check_named(study, src, "params", "parameter_sets", BUILTIN_PARAMS, study.parameter_sets)
    _check_zip(study, src)
    _check_exclude(study, src)
    _check_placeholders(study, src)
    _check_plan_size(study, src)


def _check_names(study: StudyFile, src: Source) -> None:
    """Names that become folder and file names (builds/<app>/<variant>/...): no separators, no dot first."""
    named = [(("applications", a), a, "an application name") for a in study.applications]
    named += [(("applications", a, "variants", v), v, "a variant name")
              for a, app in study.applications.items() for v in app.variants]
    named += [((section, n), n, "a settings name") for section in ("transports", "parameter_sets")
              for n in getattr(study, section)]
    for path, name, what in named:
        try:
            check_name(name, what)
        except ValueError as exc:
            raise src.error(path, str(exc)) from None


def _check_mpis(study: StudyFile, src: Source) -> None:
    """Every MPI on the axis is Debian's, an identity, or named in `mpis:`."""
    for i, name in enumerate(study.axes.mpi):
        if name not in study.mpis and name_problem(name):
            defined = ", ".join(study.mpis) or "none"
            raise src.error(("axes", "mpi", i), f"unknown MPI '{name}' (expected openmpi, mpich or an identity such as "
                            f"intelmpi-2021.19; defined under 'mpis': {defined})")


def _check_custom_axes(study: StudyFile, src: Source) -> None:
    for name, values in study.axes.custom.items():
        path = ("axes", "custom", name)
        if not _IDENT.match(name) or name in RUN_PLACEHOLDERS or name in IMPLICIT_AXES or name in STANDARD_AXES:
            raise src.error(path, "custom axis names must be identifiers not used by scalewise, "
                            f"got {name!r}")
        if not isinstance(values, list) or not values:
            raise src.error(path, f"expected a non-empty list of values, got {values!r}")
        for i, v in enumerate(values):
            if not isinstance(v, (str, int, float)) or isinstance(v, bool):
                raise src.error(path + (i,), f"axis values must be strings or numbers, got {v!r}")
            if len(str(v)) > MAX_TEXT:
                raise src.error(path + (i,), f"axis values are at most {MAX_TEXT:,} characters long")
        if len({str(v) for v in values}) != len(values):
            raise src.error(path, f"values must not repeat, got {values!r}")


def _check_ranks(study: StudyFile, src: Source) -> None:
    axes = study.axes
    if axes.ranks is not None and axes.ranks_per_node is not None:
        raise src.error(("axes", "ranks_per_node"), "give either 'ranks' (total) or 'ranks_per_node', not both")


def _check_named(study: StudyFile, src: Source, axis: str, section: str, builtin: dict, defined: dict) -> None:
    known = set(builtin) | set(defined)
    for i, name in enumerate(getattr(study.axes, axis)):
        if name not in known:
            raise src.error(("axes", axis, i), f"unknown {axis} {name!r} (defined: {', '.join(sorted(known))}; "
                            f"define it under '{section}')")


def axis_values(study: StudyFile) -> dict[str, list]:
    """Every swept axis (standard ones the file sets, then custom) with its values."""
    data = study.axes.model_dump(exclude_none=True)
    out = {name: data[name] for name in STANDARD_AXES if name in data}
    out.update(study.axes.custom)
    return out


def _check_zip(study: StudyFile, src: Source) -> None:
    axes = axis_values(study)
    seen: set[str] = set()
    for g, group in enumerate(study.zip):
        path = ("zip", g)
        if len(group) < 2:
            raise src.error(path, "a zip group needs at least two axes")
        for name in group:
            if name not in axes:
                raise src.error(path, f"unknown axis {name!r} (axes: {', '.join(axes)})")
            if name in seen:
                raise src.error(path, f"axis {name!r} is in more than one zip group")
            seen.add(name)
        lengths = {name: len(axes[name]) for name in group}
        if len(set(lengths.values())) > 1:
            shown = ", ".join(f"{k} has {v}" for k, v in lengths.items())
            raise src.error(path, f"zipped axes must have the same number of values ({shown})")


def _check_exclude(study: StudyFile, src: Source) -> None:
    axes = axis_values(study)
    allowed = set(axes) | set(IMPLICIT_AXES) | {"ranks"}
    for e, rule in enumerate(study.exclude):
        if not rule:
            raise src.error(("exclude", e), "an exclude rule needs at least one axis: value")
        for name in rule:
            if name not in allowed:
                raise src.error(("exclude", e, name), f"unknown axis {name!r} (axes: {', '.join(sorted(allowed))})")


def _check_placeholders(study: StudyFile, src: Source) -> None:
    custom = set(study.axes.custom) | ({"interconnect"} if study.axes.interconnect else set())
    for app_name, app in study.applications.items():
        base = ("applications", app_name)
        for i, arg in enumerate(app.command):
            _check_template(arg, RUN_PLACEHOLDERS | custom, src, base + ("command", i))
        for s, step in enumerate(app.build):
            for i, arg in enumerate(step):
                _check_template(arg, BUILD_PLACEHOLDERS, src, base + ("build", s, i))
        if app.fom.source == "regex" and not app.fom.pattern:
            raise src.error(base + ("fom",), "source 'regex' needs a 'pattern'")


def _check_template(template: str, known: set[str], src: Source, path: tuple) -> None:
    try:
        fields = [(name, spec, conv) for _, name, spec, conv in string.Formatter().parse(template) if name is not None]
    except ValueError as exc:
        raise src.error(path, f"malformed placeholder in {template!r}: {exc}") from None
    for name, spec, conv in fields:
        if spec or conv:
            # Format specs and conversions ({x:>9}, {x!r}) depend on the value's type and can ask for
            # gigabytes of padding: only the plain form is filled in.
            shown = "{" + name + (f"!{conv}" if conv else "") + (f":{spec}" if spec else "") + "}"
            raise src.error(path, f"placeholder {shown}: only plain {{name}} placeholders are allowed, "
                            "without format specs or conversions")
        if name not in known:
            raise src.error(path, f"unknown placeholder {{{name}}} (known: {', '.join(sorted(known))})")


def plan_size(study: StudyFile) -> int:
    """Runs of the plan before exclusions: every combination of every axis, for each app and variant, repeated."""
    axes = axis_values(study)
    zipped = {name for group in study.zip for name in group}
    factors = [len(axes[group[0]]) for group in study.zip if group and group[0] in axes]
    factors += [len(values) for name, values in axes.items() if name not in zipped]
    variants = sum(len(app.variants) for app in study.applications.values())
    return math.prod(factors) * variants * study.repetitions


def _check_plan_size(study: StudyFile, src: Source) -> None:
    size = plan_size(study)
    if size > study.max_runs:
        raise src.error(("axes",), f"the plan has {size:,} runs (every combination of the axes, for each "
                        f"application and variant, times {plural(study.repetitions, 'repetition')}), more than the "
                        f"limit of {study.max_runs:,}; narrow the axes or raise 'max_runs:'")
