"""Loading a study file: :func:`load_study` parses, validates and returns a :class:`LoadedStudy`.

Validation happens in two passes: pydantic checks the shape and types of each
key (:mod:`scalewise.campaign.studyfile`), then :mod:`scalewise.campaign.checks`
checks what refers to what.  Either pass reports the first problem as
``file:line: key: reason``.
"""

from __future__ import annotations

import difflib
import types
import typing
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from scalewise.campaign.checks import check_study
from scalewise.campaign.source import Source, StudyError, load_source
from scalewise.campaign.studyfile import StudyFile
from scalewise.launch.mpis import bind


class LoadedStudy:
    """A validated study plus where it came from (for paths, hashes and messages)."""

    def __init__(self, model: StudyFile, source: Source, path: Path, text: bytes):
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
        model = StudyFile.model_validate(source.data)
    except ValidationError as exc:
        raise _first_error(exc, source) from None
    check_study(model, source)
    for name, install in model.mpis.items():
        bind(name, install.prefix, install.env)
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
        return _unknown_key(loc)
    if kind == "value_error":
        return msg.removeprefix("Value error, ")
    if kind == "too_short":
        return "must not be empty"
    if kind in ("greater_than", "greater_than_equal"):
        return f"expected a positive number, got {value!r}"
    if kind.startswith(("int_", "float_", "bool_", "string_", "dict_", "list_", "literal_")):
        return f"{msg[0].lower()}{msg[1:]}, got {value!r}"
    return msg


def _unknown_key(loc: tuple) -> str:
    """``unknown key 'rank' (did you mean 'ranks'?)`` from the keys the model at ``loc`` knows."""
    known = _known_keys(loc[:-1])
    close = difflib.get_close_matches(str(loc[-1]), known, n=1, cutoff=0.6)
    hint = f" (did you mean '{close[0]}'?)" if close else f" (known: {', '.join(known)})" if known else ""
    if loc[:1] == ("axes",) and len(loc) == 2:
        hint += f"; declare your own axis under axes.custom: {{{loc[-1]}: [...]}}"
    return f"unknown key{hint}"


def _known_keys(loc: tuple) -> list[str]:
    """The field names of the model found by walking ``loc`` from :class:`StudyFile` (mapping keys and
    list indexes step into the value type)."""
    kind: Any = StudyFile
    for part in loc:
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            field = kind.model_fields.get(str(part))
            if field is None:
                return []
            kind = field.annotation
        else:
            args = [a for a in typing.get_args(kind) if a is not type(None)]
            kind = args[-1] if args else None  # dict[str, X] -> X, list[X] -> X, X | None -> X
        while typing.get_origin(kind) in (typing.Union, types.UnionType):
            kind = next(a for a in typing.get_args(kind) if a is not type(None))
    return list(kind.model_fields) if isinstance(kind, type) and issubclass(kind, BaseModel) else []
