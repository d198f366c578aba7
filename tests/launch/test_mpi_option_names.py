"""`--mpi` of the commands keyed on a library: an MPI they do not support is one line naming what they do, exit 2,
before anything runs.  Debian's identities are their short names (launch/releases.py, cli/mpi_names.py)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from scalewise.cli.main import cli
from scalewise.launch.releases import identity_of, release_line

KNOWN = ("known: openmpi-4.1, openmpi-5.0, mpich-4.0, mpich-5.0, intelmpi-2021; e.g. openmpi-5.0.11, mpich-5.0.2, "
         "intelmpi-2021.19")


def one_line_error(args: list[str]) -> str:
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 2, res.output
    assert res.output.count("\n") == 1, res.output
    return res.output.strip()


@pytest.mark.parametrize("command", [["whatif", "x.swtrace"], ["pop", "x.swtrace"]])
def test_replay_commands_name_the_known_release_lines(command):
    assert one_line_error([*command, "--mpi", "openmpi-3.1.6"]) == (
        f"scalewise: error: Invalid value for '--mpi': MPI openmpi-3.1.6 is not supported ({KNOWN})")
    assert one_line_error([*command, "--mpi", "lam"]).startswith(
        "scalewise: error: Invalid value for '--mpi': 'lam' names no MPI")


@pytest.mark.parametrize("args, command", [
    (["calibrate", "--mpi", "openmpi-4.0.7", "-o", "net.yaml"], "calibrate"),
    (["memory", "--mpi", "openmpi,mpich-3.4.3"], "memory"),
    (["cluster", "check", "--mpi", "mpich-3.4.3"], "cluster check"),
    (["cluster", "exec", "--mpi", "openmpi-4.0.7", "--", "mpiexec", "-n", "2", "true"], "cluster exec")])
def test_measuring_commands_name_the_known_release_lines(args, command):
    mpi = args[args.index("--mpi") + 1].split(",")[-1]
    assert one_line_error(args) == f"scalewise: error: {command} --mpi: MPI {mpi} is not supported ({KNOWN})"
    args[args.index("--mpi") + 1] = "mpi-abi-1"
    assert one_line_error(args) == (f"scalewise: error: {command} --mpi mpi-abi-1: name the library that runs it "
                                    "(e.g. mpich-5.0.2, intelmpi-2021.19), not the ABI")
    args[args.index("--mpi") + 1] = "lam"
    assert one_line_error(args).startswith("scalewise: error: Invalid value for '--mpi': 'lam' names no MPI")


def test_debians_identities_are_their_short_names_and_name_their_lines():
    assert (identity_of("openmpi"), identity_of("mpich")) == ("openmpi-4.1.4", "mpich-4.0.2")
    assert [release_line(n, "x") for n in ("openmpi", "mpich", "openmpi-5.0.11", "mpich-5.0.2", "intelmpi-2021.19")] \
        == ["openmpi-4.1", "mpich-4.0", "openmpi-5.0", "mpich-5.0", "intelmpi-2021"]
