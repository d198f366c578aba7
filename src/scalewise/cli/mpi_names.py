"""`--mpi` values of the commands that key on a library: checked here, one line when wrong."""

from __future__ import annotations

import click

from scalewise.errors import ScalewiseError
from scalewise.launch.mpis import ABI_FLAVOUR, ALIASES, alias_of, name_problem, wrapper_mpi
from scalewise.launch.releases import release_line


def _named(value: str) -> str:
    problem = name_problem(value)
    if problem:
        raise click.BadParameter(problem)
    return value


def release_option(_ctx, _param, value: str | None) -> str | None:
    """An MPI whose release line scalewise knows (openmpi, mpich or an identity such as openmpi-5.0.11)."""
    if value is not None:
        try:
            release_line(_named(value), "--mpi")
        except ScalewiseError as err:
            raise click.BadParameter(str(err).removeprefix("--mpi: ")) from None
    return value


def measured_mpi(command: str, value: str) -> str:
    """``value`` as the name a measuring command runs with: Debian's short names (their identities
    become them) or the identity of an MPI whose release line scalewise knows (launch/releases.py);
    a one-line error for any other."""
    name = value if value in ALIASES else (alias_of(_named(value)) or value)
    if name == ABI_FLAVOUR:
        raise ScalewiseError(f"{command} --mpi {value}: name the library that runs it (e.g. mpich-5.0.2, "
                             "intelmpi-2021.19), not the ABI")
    if name not in ALIASES:
        release_line(name, f"{command} --mpi")
    return name


def path_mpi(command: str) -> str:
    """The MPI ``mpicc`` on PATH builds for (what a loaded module provides), as measured_mpi names it."""
    try:
        mpi = wrapper_mpi("mpicc")
    except ScalewiseError as err:
        raise ScalewiseError(f"{command}: no --mpi and no usable mpicc on PATH to tell the MPI ({err})") from None
    return measured_mpi(command, mpi.flavour)


def given_option(command: str):
    """A click callback: :func:`measured_mpi` for one ``--mpi`` value; None when none is given."""
    return lambda _ctx, _param, value: None if value is None else measured_mpi(command, value)


def measured_option(command: str):
    """A click callback: :func:`measured_mpi` for one ``--mpi`` value; the MPI on PATH when none is given."""
    return lambda _ctx, _param, value: path_mpi(command) if value is None else measured_mpi(command, value)


def measured_list_option(command: str):
    """A click callback: :func:`measured_mpi` for each of a comma-separated ``--mpi`` list."""
    return lambda _ctx, _param, value: ",".join(measured_mpi(command, v.strip()) for v in value.split(",")
                                                if v.strip())
