"""`--mpi` values of the commands that key on a library: checked here, one line when wrong."""

from __future__ import annotations

from scalewise.errors import ScalewiseError
from scalewise.launch.mpis import ALIASES, alias_of, check_name
from scalewise.launch.releases import release_line


def release_option(_ctx, _param, value: str | None) -> str | None:
    """An MPI whose release line scalewise knows (openmpi, mpich or an identity such as openmpi-5.0.11)."""
    if value is not None:
        release_line(check_name(value), "--mpi")
    return value


def debian_mpi(command: str, value: str) -> str:
    """``value`` as one of Debian's short names (its identity is accepted); a one-line error for any other
    MPI, which ``command`` does not run yet (docs/mpis.md)."""
    name = alias_of(check_name(value)) if value not in ALIASES else value
    if name is None:
        raise ScalewiseError(f"{command} --mpi {value}: runs with Debian's {' or '.join(ALIASES)} only so far "
                             "(docs/mpis.md, 'Not yet for every MPI')")
    return name


def debian_option(command: str):
    """A click callback: :func:`debian_mpi` for one ``--mpi`` value."""
    return lambda _ctx, _param, value: None if value is None else debian_mpi(command, value)


def debian_list_option(command: str):
    """A click callback: :func:`debian_mpi` for each of a comma-separated ``--mpi`` list."""
    return lambda _ctx, _param, value: ",".join(debian_mpi(command, v.strip()) for v in value.split(",") if v.strip())
