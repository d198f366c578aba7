"""Turn a study into its ordered list of runs, each with a stable run ID.

The matrix is the product of every axis (zipped axes move together), minus
excluded combinations, for every application and build variant, repeated.
Repetitions are the outermost loop: the first full pass over the matrix
finishes before any second repetition starts, so slow drift of the machine
spreads over every configuration instead of biasing one.  With ``order:
shuffled`` each pass runs the combinations in an order drawn from ``seed``
(the same plan every time the study is read).

Run ID = hash of what the run *is*: its own settings (names and the MCA/CVAR/
environment values they stand for, the command template) and its repetition
index.  Adding a value to an axis adds runs without renaming existing ones;
settings at their default value (1 node, 1 thread, transport/params
``default``) are left out of the hash so that introducing such an axis later
keeps IDs too.
"""

from __future__ import annotations

import random

import hashlib
import itertools
import json
from dataclasses import dataclass, field

from scalewise.campaign.checks import axis_values
from scalewise.campaign.mpi_settings import BUILTIN_PARAMS, BUILTIN_TRANSPORTS, MpiSettings
from scalewise.campaign.study import LoadedStudy
from scalewise.campaign.studyfile import StudyFile

_DEFAULTS = {"nodes": 1, "threads": 1, "transport": "default", "params": "default", "variant": "default"}


@dataclass(frozen=True)
class RunSpec:
    """One run of the plan: everything needed to launch it and to record it."""

    run_id: str
    position: int
    app: str
    variant: str
    mpi: str
    transport: str
    params: str
    nodes: int
    ranks: int
    ranks_per_node: int | None
    threads: int
    repetition: int
    interconnect: str | None = None  # a link preset or rate (cluster/links.py), when the study sweeps one
    custom: tuple[tuple[str, object], ...] = ()
    # (kind, name, value) with kind in mca | cvar | env, in the order applied.
    applied: tuple[tuple[str, str, str], ...] = field(default=(), compare=False)

    def settings(self) -> dict[str, object]:
        """Every setting of the run, standard and custom, by axis name."""
        out = {"app": self.app, "variant": self.variant, "mpi": self.mpi, "transport": self.transport,
               "params": self.params, "nodes": self.nodes, "ranks": self.ranks,
               "ranks_per_node": self.ranks_per_node, "threads": self.threads}
        if self.interconnect is not None:
            out["interconnect"] = self.interconnect
        out.update(self.custom)
        return out

    def label(self) -> str:
        """Short human description for progress lines."""
        parts = [self.app, f"mpi={self.mpi}", f"ranks={self.ranks}"]
        parts += [f"nodes={self.nodes}"] if self.nodes != 1 else []
        parts += [f"threads={self.threads}"] if self.threads != 1 else []
        parts += [f"{k}={getattr(self, k)}" for k in ("transport", "params", "variant") if getattr(self, k) != "default"]
        parts += [f"interconnect={self.interconnect}"] if self.interconnect is not None else []
        parts += [f"{k}={v}" for k, v in self.custom]
        return " ".join(parts) + f" rep={self.repetition}"


def expand(loaded: LoadedStudy) -> list[RunSpec]:
    """The study's runs in execution order."""
    study = loaded.model
    combos = [c for c in _combinations(study) if not _excluded(c, study.exclude)]
    if not combos:
        raise loaded.source.error(("exclude",), "every combination is excluded: the study has no runs")
    runs = []
    rng = random.Random(study.seed)
    for rep in range(study.repetitions):
        if study.order == "shuffled":
            combos = rng.sample(combos, len(combos))
        for combo in combos:
            runs.append(_make_run(study, combo, rep, len(runs)))
    for run in runs:
        if run.ranks < run.nodes:
            key = "ranks" if study.axes.ranks is not None else "nodes"
            raise loaded.source.error(("axes", key), f"{run.ranks} ranks cannot fill {run.nodes} nodes; "
                                      "zip ranks with nodes, exclude the combination or use ranks_per_node")
    return runs


def _combinations(study: StudyFile) -> list[dict]:
    axes = axis_values(study)
    if "ranks" not in axes and "ranks_per_node" not in axes:
        axes["ranks"] = [1]
    factors: list[list[dict]] = []
    zipped = {name for group in study.zip for name in group}
    for group in study.zip:
        factors.append([dict(zip(group, values)) for values in zip(*(axes[n] for n in group))])
    for name, values in axes.items():
        if name not in zipped:
            factors.append([{name: v} for v in values])
    app_factor = [{"app": a, "variant": v} for a, app in study.applications.items() for v in app.variants]
    out = []
    for parts in itertools.product(app_factor, *factors):
        combo: dict = {}
        for part in parts:
            combo.update(part)
        nodes = combo.get("nodes", 1)
        if "ranks_per_node" in combo:
            combo["ranks"] = nodes * combo["ranks_per_node"]
        out.append(combo)
    return out


def _excluded(combo: dict, rules: list[dict]) -> bool:
    for rule in rules:
        if all(_text(combo.get(k, _DEFAULTS.get(k))) in _texts(v) for k, v in rule.items()):
            return True
    return False


def _text(v: object) -> str:
    return str(v)


def _texts(v: object) -> set[str]:
    return {str(x) for x in v} if isinstance(v, list) else {str(v)}


def resolve_settings(study: StudyFile, kind: str, name: str) -> MpiSettings:
    """The transport or parameter set called ``name`` (study definitions win over built-ins)."""
    if kind == "transport":
        return study.transports.get(name) or BUILTIN_TRANSPORTS[name]
    return study.parameter_sets.get(name) or BUILTIN_PARAMS[name]


def _make_run(study: StudyFile, combo: dict, rep: int, position: int) -> RunSpec:
    app = study.applications[combo["app"]]
    variant = app.variants[combo["variant"]]
    mpi = combo.get("mpi", "openmpi")
    transport, params = combo.get("transport", "default"), combo.get("params", "default")
    applied = [("env", k, v) for k, v in sorted(app.env.items())]
    applied += [("env", k, v) for k, v in sorted(variant.env.items())]
    applied += resolve_settings(study, "transport", transport).applied(mpi)
    applied += resolve_settings(study, "params", params).applied(mpi)
    custom = tuple((k, combo[k]) for k in study.axes.custom)
    run = dict(app=combo["app"], variant=combo["variant"], mpi=mpi, transport=transport, params=params,
               nodes=combo.get("nodes", 1), ranks=combo["ranks"], ranks_per_node=combo.get("ranks_per_node"),
               threads=combo.get("threads", 1), repetition=rep, interconnect=combo.get("interconnect"), custom=custom)
    identity = {k: v for k, v in run.items()
                if k not in ("custom", "interconnect") and _DEFAULTS.get(k, object()) != v and v is not None}
    # The interconnect was a custom axis before it was a setting of its own: same key, same run IDs.
    identity.update({f"axis.{k}": v for k, v in custom + (("interconnect", run["interconnect"]),) if v is not None})
    identity["command"] = app.command
    if applied:
        identity["applied"] = applied
    if variant.flags:
        identity["flags"] = variant.flags
    digest = hashlib.sha256(json.dumps(identity, sort_keys=True, default=str).encode()).hexdigest()[:12]
    return RunSpec(run_id=digest, position=position, applied=tuple(applied), **run)


def idle_axes(loaded: LoadedStudy, runs: list[RunSpec]) -> list[str]:
    """Warnings for axes that cannot change some of the runs they multiply, so the plan repeats itself.

    * ``interconnect`` on one node: the ranks talk through shared memory, never the link;
    * ``transport`` at one rank: there is no peer to talk to;
    * a custom axis no placeholder of an application's command uses: its values reach nothing.
    """
    study, out = loaded.model, []
    for axis, idle, where in (("interconnect", lambda r: r.nodes == 1, "on 1 node the ranks never use the network"),
                              ("transport", lambda r: r.ranks == 1, "at 1 rank there is no peer to talk to")):
        values = getattr(study.axes, axis) or []
        stuck = [r for r in runs if idle(r)]
        if len(values) > 1 and stuck:
            out.append(f"{axis}: {where}, so {len(stuck)} of {len(runs)} runs repeat the same run for each of its "
                       f"{len(values)} values ({', '.join(map(str, values))}); exclude them or zip {axis} with "
                       f"{'nodes' if axis == 'interconnect' else 'ranks'}")
    for name, values in study.axes.custom.items():
        deaf = [a for a, app in study.applications.items() if not any("{" + name + "}" in arg for arg in app.command)]
        if len(values) > 1 and deaf:
            stuck = sum(r.app in deaf for r in runs)
            out.append(f"{name}: no placeholder {{{name}}} in the command of {', '.join(deaf)}, so {stuck} of "
                       f"{len(runs)} runs repeat the same run for each of its {len(values)} values")
    return out
