"""The meta section's JSON, validated against its documented schema
(docs/log-format.md, "meta"): types, ranges and lengths are checked before
any value reaches a report, so a hostile log cannot smuggle in a float where
a date is drawn or a megabyte where a name is printed."""

from __future__ import annotations

import json
import math
import re
from typing import Any

# What the fast check below accepts of each known key (a subset of what the
# schema in meta_model.py accepts, with the same values): anything else, a
# problem or not, goes to the schema, which decides and names the problem.
_STR = {"scalewise_version": 64, "cwd": 16384, "mpi_library": 16384, "mpi_version": 64, "thread_level": 64,
        "timer": 64, "histogram": 64, "slurm_job_id": 64}
_INT = {"nranks": (1, 2**31 - 1), "aborted_by_rank": (0, 2**31 - 1), "abort_errorcode": (-(2**31), 2**31 - 1)}
_FORMAT = re.compile(r"[0-9]{1,4}\.[0-9]{1,4}")
# The schema's field order: model_dump lists the keys in it.
_ORDER = ("format", "scalewise_version", "command", "cwd", "mpi_library", "mpi_version", "nranks", "thread_level",
          "start_time", "end_time", "ns_per_tick", "timer", "histogram", "slurm_job_id", "aborted_by_rank",
          "abort_errorcode", "mpit_mtl_unloaded")
_SURROGATES = re.compile("[\ud800-\udfff]")


class _Unsure(Exception):
    """The fast check does not vouch for the meta: the schema decides."""


def _pairs(pairs: list) -> dict:
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise _Unsure
    return dict(pairs)


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Unsure
    return value


def _int(text: str) -> int:
    value = int(text)
    if not -(2**63) <= value < 2**63:
        raise _Unsure
    return value


def _constant(_name: str):
    raise _Unsure


def _text(value: Any, limit: int) -> bool:
    return type(value) is str and len(value) <= limit and not _SURROGATES.search(value)


def _known(key: str, v: Any) -> bool:
    if key in _STR:
        return _text(v, _STR[key])
    if key in _INT:
        lo, hi = _INT[key]
        return type(v) is int and lo <= v <= hi
    if key == "format":
        return _text(v, 9) and _FORMAT.fullmatch(v) is not None
    if key == "command":
        return type(v) is list and len(v) <= 32768 and all(_text(a, 65536) for a in v)
    if key in ("start_time", "end_time"):
        return type(v) is float and 0 <= v <= 253_402_300_799
    if key == "ns_per_tick":
        return type(v) is float and 0 < v <= 1e9
    return type(v) is bool  # mpit_mtl_unloaded


def _fast(raw: bytes) -> dict[str, Any]:
    try:
        data = json.loads(raw.decode("utf-8"), object_pairs_hook=_pairs, parse_float=_finite, parse_int=_int,
                          parse_constant=_constant)
    except Exception:  # noqa: BLE001 - any doubt goes to the schema
        raise _Unsure from None
    if type(data) is not dict or not all(_known(k, data[k]) for k in _ORDER if k in data):
        raise _Unsure
    if any(_SURROGATES.search(k) for k in data):
        raise _Unsure
    return {k: data[k] for k in _ORDER if k in data}


def parse_meta(raw: bytes) -> dict[str, Any]:
    """The known keys of the meta JSON object; ValueError with one line on any problem.

    The schema (meta_model.py, pydantic) is the rule; a plain check that
    accepts only what it accepts, with the same values, answers first for
    the logs the runtime writes, so that reading a log need not load pydantic."""
    try:
        return _fast(raw)
    except _Unsure:
        from scalewise.logfile.meta_model import validate_meta

        return validate_meta(raw)


def mpi_library_name(meta: dict[str, Any]) -> str:
    """The MPI library a log names, on one line: MPICH's version string runs on with its whole configure line."""
    return (str(meta.get("mpi_library") or "unknown").strip().splitlines() or ["unknown"])[0]


def mpi_flavour(meta: dict[str, Any]) -> str | None:
    """Which MPI a profile used, ``openmpi`` or ``mpich``, from the library string its log records;
    None when the string names neither (or is missing).  The one rule: tune, the what-if and the
    run report all read it here."""
    library = str(meta.get("mpi_library") or "").lower()
    if "open mpi" in library:
        return "openmpi"
    if "mpich" in library:
        return "mpich"
    return None
