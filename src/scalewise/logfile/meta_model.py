"""The meta section's JSON schema (docs/log-format.md, "meta"), in pydantic:
the rule meta.parse_meta applies (its plain check answers first for what it
can vouch for)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError, model_validator

# Lengths generous for any real job: the runtime reads at most 64 KiB of
# command line, MPI_MAX_LIBRARY_VERSION_STRING is 8 KiB in MPICH, PATH_MAX 4 KiB.
_Short = Annotated[str, StringConstraints(max_length=64)]
_Text = Annotated[str, StringConstraints(max_length=16384)]
_Arg = Annotated[str, StringConstraints(max_length=65536)]
# Seconds since the epoch that datetime can still show (up to the year 9999).
_Epoch = Annotated[float, Field(ge=0, le=253_402_300_799)]
_Int32 = Annotated[int, Field(ge=-(2**31), le=2**31 - 1)]


class Meta(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore", allow_inf_nan=False, frozen=True)

    format: Annotated[str, StringConstraints(pattern=r"^\d{1,4}\.\d{1,4}$")] | None = None
    scalewise_version: _Short | None = None
    command: Annotated[list[_Arg], Field(max_length=32768)] | None = None
    cwd: _Text | None = None
    mpi_library: _Text | None = None
    mpi_version: _Short | None = None
    nranks: Annotated[int, Field(ge=1, le=2**31 - 1)] | None = None
    thread_level: _Short | None = None
    start_time: _Epoch | None = None
    end_time: _Epoch | None = None
    ns_per_tick: Annotated[float, Field(gt=0, le=1e9)] | None = None
    timer: _Short | None = None
    histogram: _Short | None = None
    slurm_job_id: _Short | None = None
    aborted_by_rank: Annotated[int, Field(ge=0, le=2**31 - 1)] | None = None
    abort_errorcode: _Int32 | None = None
    mpit_mtl_unloaded: bool | None = None  # Open MPI: MPI_T left the MTL components unloaded (docs/mpit.md)

    @model_validator(mode="before")
    @classmethod
    def _no_nulls(cls, data: Any) -> Any:
        """None above only means "absent": a key the log sets to null is refused."""
        if isinstance(data, dict):
            for key, value in data.items():
                if value is None and key in cls.model_fields:
                    raise ValueError(f"{key} is null")
        return data


def validate_meta(raw: bytes) -> dict[str, Any]:
    """The known keys of the meta JSON object; ValueError with one line on any problem.

    pydantic's JSON parser decodes UTF-8 strictly and refuses nesting deeper
    than its own fixed limit, so neither can exhaust the stack."""
    try:
        meta = Meta.model_validate_json(raw)
    except ValidationError as exc:
        first = exc.errors(include_url=False, include_input=False)[0]
        where = ".".join(str(part) for part in first["loc"])
        more = f" and {exc.error_count() - 1} more" if exc.error_count() > 1 else ""
        raise ValueError(f"{where + ': ' if where else ''}{first['msg']}{more}") from None
    return meta.model_dump(exclude_unset=True)
