"""Which release line of its library an MPI name stands for: what tuning and the what-if key on.

A library's settings and its collective decision rules change between
release lines (Open MPI 4.1 and 5.0, MPICH 4.0 and 5.0), not within one, so
an MPI's identity (``openmpi-5.0.11``, launch/mpis.py) is read down to its
line (``openmpi-5.0``).  Debian's two short names stand for what their
wrappers build (the Debian 12 releases when those are not installed), a
study's own name for what its prefix holds.
"""

from __future__ import annotations

from scalewise.errors import ScalewiseError
from scalewise.launch import mpis

# The lines scalewise knows the settings and rules of; Intel MPI's by its year.
LINES = ("openmpi-4.1", "openmpi-5.0", "mpich-4.0", "mpich-5.0", "intelmpi-2021")
# Debian 12's packaged releases: what the short names mean where the packages are missing.
DEBIAN = {"openmpi": "openmpi-4.1.4", "mpich": "mpich-4.0.2"}


def identity_of(name: str) -> str:
    """The identity ``name`` stands for: itself, a Debian alias's or a study's bound MPI's."""
    if name in mpis.ALIASES:
        return mpis.alias_identity(name) or DEBIAN[name]
    bound = mpis.binding(name)
    return bound.mpi.identity if bound else name


def line_of_identity(identity: str) -> str | None:
    """``openmpi-5.0`` for ``openmpi-5.0.11``, ``intelmpi-2021`` for ``intelmpi-2021.19``; None if unknown."""
    fam, _, version = identity.partition("-")
    parts = version.split(".")
    line = f"{fam}-{parts[0]}" if fam == "intelmpi" else f"{fam}-{'.'.join(parts[:2])}"
    return line if line in LINES else None


def release_line(name: str, what: str) -> str:
    """The release line of the MPI ``name`` stands for; a one-line error naming the known lines otherwise.
    ``what``: the command or feature asking, for the message."""
    identity = identity_of(name)
    line = line_of_identity(identity) if mpis.is_identity(identity) and identity != mpis.ABI_FLAVOUR else None
    if line is None:
        shown = name if identity == name else f"{name} ({identity})"
        raise ScalewiseError(f"{what}: MPI {shown} is not supported (known: {', '.join(LINES)}; "
                             "e.g. openmpi-5.0.11, mpich-5.0.2, intelmpi-2021.19)")
    return line
