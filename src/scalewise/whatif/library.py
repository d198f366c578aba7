"""The library whose collectives a run's replay follows, as the run's log names it."""

from __future__ import annotations

from typing import Any, Protocol

from scalewise.launch.mpis import alias_of, identity_from_version
from scalewise.logfile.meta import mpi_flavour


class HasMeta(Protocol):
    meta: dict[str, Any]


def library_of(profile: HasMeta) -> str:
    """The collective algorithms to replay with: the library the run used, as its log names it (its identity,
    Debian's two by their short names); Open MPI 4.1's when the log names none.  ``profile``: a Profile or
    a log's plain rows (logfile/plain.py), whose meta is the same."""
    identity = identity_from_version(str(profile.meta.get("mpi_library") or ""))
    if identity:
        return alias_of(identity) or identity
    return mpi_flavour(profile.meta) or "openmpi"
