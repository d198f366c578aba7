"""The study file: pydantic models and :func:`load_study`.

Validation happens in two passes: pydantic checks the shape and types of each
key, then :mod:`scalewise.campaign.checks` checks what refers to what (axes
naming transports that exist, placeholders naming axes, zip lengths...).
Either pass reports the first problem as ``file:line: key: reason``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from scalewise.campaign.settings import MPI_LIBRARIES, MpiSettings
from scalewise.campaign.source import Source, StudyError, load_source

Scalar = str | int | float


def _positive_ints(value: object) -> list[int]:
    ok = isinstance(value, list) and value and all(
        isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in value)
    if not ok:
        bad = value if not isinstance(value, list) or not value else next(
            (v for v in value if not (isinstance(v, int) and not isinstance(v, bool) and v > 0)), value)
        raise ValueError(f"expected a list of positive integers, got {bad!r}")
    if len(set(value)) != len(value):
        raise ValueError(f"values must not repeat, got {value!r}")
    return value


def _names(value: object) -> list[str]:
    if not (isinstance(value, list) and value and all(isinstance(v, str) and v for v in value)):
        raise ValueError(f"expected a list of names, got {value!r}")
    if len(set(value)) != len(value):
        raise ValueError(f"values must not repeat, got {value!r}")
    return value


class Axes(BaseModel):
    """What to sweep.  Keys not listed here are custom axes (e.g. ``size``)."""

    model_config = ConfigDict(extra="allow")

    nodes: list[int] = [1]
    ranks: list[int] | None = None
    ranks_per_node: list[int] | None = None
    threads: list[int] = [1]
    mpi: list[str] = ["openmpi"]
    transport: list[str] = ["default"]
    params: list[str] = ["default"]

    @field_validator("nodes", "ranks", "ranks_per_node", "threads", mode="before")
    @classmethod
    def _counts(cls, value: object) -> list[int] | None:
        return _positive_ints(value)

    @field_validator("transport", "params", mode="before")
    @classmethod
    def _setting_names(cls, value: object) -> list[str]:
        return _names(value)

    @field_validator("mpi", mode="before")
    @classmethod
    def _mpi(cls, value: object) -> list[str]:
        value = _names(value)
        for v in value:
            if v not in MPI_LIBRARIES:
                raise ValueError(f"unknown MPI library {v!r} (expected one of: {', '.join(MPI_LIBRARIES)})")
        return value

    def custom(self) -> dict[str, list[Scalar]]:
        """The user's own axes, in file order."""
        return dict(self.model_extra or {})


class Fom(BaseModel):
    """How to read the figure of merit of a run."""

    model_config = ConfigDict(extra="forbid")

    source: Literal["wall", "regex", "result_line"] = "wall"
    pattern: str | None = None
    name: str = "fom"
    unit: str | None = None
    higher_is_better: bool = False

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
    env: dict[str, str] = {}


class Application(BaseModel):
    """One program to benchmark: how to build it, run it and read its result."""

    model_config = ConfigDict(extra="forbid")

    command: list[str] = Field(min_length=1)
    build: list[list[str]] = []
    variants: dict[str, Variant] = {"default": Variant()}
    fom: Fom = Fom()
    env: dict[str, str] = {}

    @field_validator("command", mode="before")
    @classmethod
    def _argv(cls, value: object) -> list[str]:
        if isinstance(value, str):
            raise ValueError("expected an argument list (YAML list of strings), not a shell string")
        if not isinstance(value, list) or not value or not all(isinstance(v, (str, int, float)) for v in value):
            raise ValueError(f"expected a non-empty list of arguments, got {value!r}")
        return [str(v) for v in value]


class SlurmOptions(BaseModel):
    """How runs go through Slurm (``--launcher slurm``)."""

    model_config = ConfigDict(extra="forbid")

    launcher: Literal["srun", "mpirun"] = "srun"
    partition: str | None = None
    sbatch_args: list[str] = []
    # srun --mpi plugin per MPI library (defaults: openmpi -> pmix, mpich -> pmi2).
    pmi: dict[Literal["openmpi", "mpich"], str] = {}


class ReportOptions(BaseModel):
    """How `scalewise study report` reads the study (command-line options win)."""

    model_config = ConfigDict(extra="forbid")

    # The scaling base: efficiency is per-rank (or per-node) performance
    # relative to the runs at this scale, e.g. {ranks: 2}.
    base: dict[Literal["ranks", "nodes"], int] = {}

    @field_validator("base")
    @classmethod
    def _positive(cls, v: dict[str, int]) -> dict[str, int]:
        for axis, n in v.items():
            if n <= 0:
                raise ValueError(f"{axis} must be a positive integer, got {n}")
        return v


class Study(BaseModel):
    """A whole study file."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    description: str = ""
    workdir: str = "."
    output: str | None = None
    applications: dict[str, Application] = Field(min_length=1)
    axes: Axes = Axes()
    transports: dict[str, MpiSettings] = {}
    parameter_sets: dict[str, MpiSettings] = {}
    zip: list[list[str]] = []
    exclude: list[dict[str, Scalar | list[Scalar]]] = []
    repetitions: int = Field(1, gt=0)
    timeout: float = Field(600, gt=0)
    build_timeout: float = Field(1800, gt=0)
    profile: bool = False
    slurm: SlurmOptions = SlurmOptions()
    report: ReportOptions = ReportOptions()


class LoadedStudy:
    """A validated study plus where it came from (for paths, hashes and messages)."""

    def __init__(self, model: Study, source: Source, path: Path, text: bytes):
        self.model = model
        self.source = source
        self.path = path.resolve()
        self.text = text

    @property
    def workdir(self) -> Path:
        return (self.path.parent / self.model.workdir).resolve()

    @property
    def output(self) -> Path:
        default = f"{self.path.stem}.study"
        return (self.path.parent / (self.model.output or default)).resolve()


def load_study(path: str | Path) -> LoadedStudy:
    """Read, parse and validate a study file; raises :class:`StudyError`."""
    path = Path(path)
    source = load_source(path)
    if not isinstance(source.data, dict):
        raise source.error((), f"a study file must be a mapping of keys, got {type(source.data).__name__}")
    try:
        model = Study.model_validate(source.data)
    except ValidationError as exc:
        raise _first_error(exc, source) from None
    from scalewise.campaign.checks import check_study

    check_study(model, source)
    return LoadedStudy(model, source, path, path.read_bytes())


def _first_error(exc: ValidationError, source: Source) -> StudyError:
    err = exc.errors()[0]
    loc = tuple(err["loc"])
    return source.error(loc, _reason(err, loc))


def _reason(err: dict[str, Any], loc: tuple) -> str:
    kind, msg, value = err["type"], err["msg"], err.get("input")
    if kind == "missing":
        return "required key is missing"
    if kind == "extra_forbidden":
        return "unknown key"
    if kind == "value_error":
        return msg.removeprefix("Value error, ")
    if kind == "too_short":
        return "must not be empty"
    if kind == "string_pattern_mismatch":
        return f"expected a name of letters, digits, '_', '.' or '-', got {value!r}"
    if kind in ("greater_than", "greater_than_equal"):
        return f"expected a positive number, got {value!r}"
    if kind.startswith(("int_", "float_", "bool_", "string_", "dict_", "list_", "literal_")):
        return f"{msg[0].lower()}{msg[1:]}, got {value!r}"
    return msg
