"""The study file's shape: pydantic models of every key, checked one key at a time.

What refers to what (axes naming transports that exist, placeholders naming
axes, zip lengths...) is checked afterwards by :mod:`scalewise.campaign.checks`;
:func:`scalewise.campaign.study.load_study` runs both passes.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, field_validator

from scalewise.campaign.mpi_settings import MpiSettings
from scalewise.campaign.rules import (COUNT_BOUNDS, DEFAULT_MAX_RUNS, MAX_MAX_RUNS, MAX_REPETITIONS, check_name,
                                      check_seconds, check_text, string_mapping)
from scalewise.cluster.links import parse_rate
from scalewise.errors import ScalewiseError

Scalar = str | int | float


def _positive_ints(value: object, bound: int) -> list[int]:
    def good(v: object) -> bool:
        return isinstance(v, int) and not isinstance(v, bool) and 0 < v <= bound

    if not (isinstance(value, list) and value and all(good(v) for v in value)):
        bad = value if not isinstance(value, list) or not value else next(v for v in value if not good(v))
        limit = f" up to {bound:,}" if isinstance(bad, int) and not isinstance(bad, bool) and bad > bound else ""
        raise ValueError(f"expected a list of positive integers{limit}, got {bad!r}")
    if len(set(value)) != len(value):
        raise ValueError(f"values must not repeat, got {value!r}")
    return value


def _names(value: object) -> list[str]:
    if not (isinstance(value, list) and value and all(isinstance(v, str) and v for v in value)):
        raise ValueError(f"expected a list of names, got {value!r}")
    if len(set(value)) != len(value):
        raise ValueError(f"values must not repeat, got {value!r}")
    return value


Environment = Annotated[dict[str, str], BeforeValidator(lambda v: string_mapping(v, "variable"))]
Seconds = Annotated[float, AfterValidator(check_seconds)]


class Axes(BaseModel):
    """What to sweep.  The user's own axes go under ``custom``, so a misspelt axis is an error."""

    model_config = ConfigDict(extra="forbid")

    nodes: list[int] = [1]
    ranks: list[int] | None = None
    ranks_per_node: list[int] | None = None
    threads: list[int] = [1]
    mpi: list[str] = ["openmpi"]
    transport: list[str] = ["default"]
    params: list[str] = ["default"]
    # Link speed presets or rates (cluster/links.py): emulated links, or a node constraint under Slurm.
    interconnect: list[str] | None = None
    custom: dict[str, Any] = {}

    @field_validator("nodes", "ranks", "ranks_per_node", "threads", mode="before")
    @classmethod
    def _counts(cls, value: object, info) -> list[int] | None:
        return _positive_ints(value, COUNT_BOUNDS[info.field_name])

    @field_validator("transport", "params", mode="before")
    @classmethod
    def _setting_names(cls, value: object) -> list[str]:
        return [check_name(v, "a transport or parameter set name") for v in _names(value)]

    @field_validator("mpi", mode="before")
    @classmethod
    def _mpi(cls, value: object) -> list[str]:
        # Debian's openmpi/mpich, an identity (openmpi-5.0.11) or a name of the study's `mpis:` (checks.py).
        return [check_name(v, "an MPI name") for v in _names(value)]

    @field_validator("interconnect", mode="before")
    @classmethod
    def _links(cls, value: object) -> list[str]:
        value = _names(value)
        for v in value:
            try:
                parse_rate(v)
            except ScalewiseError as exc:
                raise ValueError(str(exc)) from None
        return value


class Fom(BaseModel):
    """How to read the figure of merit of a run."""

    model_config = ConfigDict(extra="forbid")

    source: Literal["wall", "profile_wall", "regex", "result_line"] = "wall"
    pattern: str | None = None
    name: str = "fom"
    unit: str | None = None
    higher_is_better: bool = False
    # regex only: which of several different matched values is the run's (unset: several different ones fail it)
    match: Literal["first", "last", "mean"] | None = None

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is None:
            return value
        try:
            rx = re.compile(value)
        except re.error as exc:
            raise ValueError(f"invalid regular expression: {exc}") from None
        if rx.groups < 1:
            raise ValueError("the regular expression needs a capture group around the number")
        return value


class Variant(BaseModel):
    """A build variant, e.g. a compiler flag set: ``{flags}`` in build steps, plus environment."""

    model_config = ConfigDict(extra="forbid")

    flags: str = ""
    env: Environment = {}


class Application(BaseModel):
    """One program to benchmark: how to build it, run it and read its result."""

    model_config = ConfigDict(extra="forbid")

    command: list[str] = Field(min_length=1)
    build: list[list[str]] = []
    variants: dict[str, Variant] = {"default": Variant()}
    fom: Fom = Fom()
    env: Environment = {}

    @field_validator("command", mode="before")
    @classmethod
    def _argv(cls, value: object) -> list[str]:
        if isinstance(value, str):
            raise ValueError("expected an argument list (YAML list of strings), not a shell string")
        if not isinstance(value, list) or not value or not all(isinstance(v, (str, int, float)) for v in value):
            raise ValueError(f"expected a non-empty list of arguments, got {value!r}")
        return [check_text(str(v), "an argument") for v in value]


class SlurmOptions(BaseModel):
    """How runs go through Slurm (``--launcher slurm``)."""

    model_config = ConfigDict(extra="forbid")

    launcher: Literal["srun", "mpirun"] = "srun"
    partition: str | None = None
    sbatch_args: list[str] = []
    # srun --mpi plugin per MPI family (defaults: openmpi -> pmix, mpich -> pmi2, intelmpi -> pmi2).
    pmi: dict[Literal["openmpi", "mpich", "intelmpi"], str] = {}
    # Seconds a job may wait in the queue before the run is given up as failed (e.g. nodes DOWN).
    pending_limit: Seconds = 86400


class ReportOptions(BaseModel):
    """How `scalewise study report` reads the study (command-line options win)."""

    model_config = ConfigDict(extra="forbid")

    # The scaling base: efficiency is per-rank (or per-node) performance
    # relative to the runs at this scale, e.g. {ranks: 2}.
    base: dict[Literal["ranks", "nodes"], int] = {}
    # The power one node draws (W) and the electricity price (per kWh): with the power the energy section
    # (B9) becomes a finding; without it the report shows only its assumption.
    watts_per_node: float | None = Field(default=None, gt=0)
    price_per_kwh: float | None = Field(default=None, ge=0)

    @field_validator("base")
    @classmethod
    def _positive(cls, v: dict[str, int]) -> dict[str, int]:
        for axis, n in v.items():
            if n <= 0:
                raise ValueError(f"{axis} must be a positive integer, got {n}")
        return v


class MpiInstall(BaseModel):
    """An MPI the study names itself: where it is installed and what its module sets."""

    model_config = ConfigDict(extra="forbid")

    prefix: str
    env: dict[str, str] = {}


class StudyFile(BaseModel):
    """A whole study file."""

    model_config = ConfigDict(extra="forbid")

    name: Annotated[str, AfterValidator(check_name)]
    description: str = ""
    workdir: str = "."
    output: str | None = None
    applications: dict[str, Application] = Field(min_length=1)
    axes: Axes = Axes()
    # The study's own names for MPIs (the mpi axis' values besides openmpi, mpich and identities).
    mpis: dict[str, MpiInstall] = {}
    transports: dict[str, MpiSettings] = {}
    parameter_sets: dict[str, MpiSettings] = {}
    zip: list[list[str]] = []
    exclude: list[dict[str, Scalar | list[Scalar]]] = []
    repetitions: int = Field(1, gt=0, le=MAX_REPETITIONS)
    # plan: each repetition runs every combination in the axes' order; shuffled: each repetition runs them in
    # an order drawn from `seed` (still every combination once per round), so that a drift in the machine's
    # speed during the campaign does not favour whichever setting comes first.
    order: Literal["plan", "shuffled"] = "plan"
    seed: int = 0
    timeout: Seconds = 600
    build_timeout: Seconds = 1800
    profile: bool = False
    # How many runs the plan may have; a larger product is an error until this is raised.
    max_runs: int = Field(DEFAULT_MAX_RUNS, gt=0, le=MAX_MAX_RUNS)
    # strong: the same problem on more ranks (ideal: s/s_base times faster);
    # weak: the problem grows with the ranks (ideal: the same time at every scale).
    scaling: Literal["strong", "weak"] = "strong"
    slurm: SlurmOptions = SlurmOptions()
    report: ReportOptions = ReportOptions()
