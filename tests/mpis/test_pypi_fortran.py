"""Fortran under the PyPI MPIs.  Intel MPI's wheel has mpif90 (it calls
gfortran); its mpi.mod and mpi_f08.mod are ifx's, which gfortran cannot read,
so with gfortran only mpif.h builds: the ground-truth program through mpif.h
must count exactly what the C program does, and scalewise tells which bindings
compile.  The Open MPI 5 and MPICH 5 wheels ship no Fortran wrapper at all."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

import scalewise
from support.expect import function_differences, groundtruth_fortran, recorded_p2p
from support.mpijob import PROGRAMS
from scalewise.launch.mpibuild import fortran_bindings, fortran_wrapper

SCALEWISE = Path(__file__).resolve().parents[2] / ".venv" / "bin" / "scalewise"
REPS, COUNT, SIZES = 2, 3, [0, 1, 8, 1024, 65536]


def test_intel_mpi_fortran_bindings_gfortran_can_use(mpi_env):
    env = mpi_env("intelmpi")
    mpif90 = shutil.which("mpif90", path=env["PATH"])
    assert fortran_bindings(mpif90, env) == {"mpif.h": True, "use mpi": False, "use mpi_f08": False}


def test_intel_mpi_fortran_counts_are_exact(mpi_env, tmp_path):
    env = mpi_env("intelmpi")
    source, flags = "groundtruth_f.F90", ["-DUSE_MPIF_H"]
    exe = tmp_path / "groundtruth_f"
    subprocess.run(["mpif90", "-O1", "-w", *flags, "-J", str(tmp_path), str(PROGRAMS / source), "-o", str(exe)],
                   env=env, cwd=tmp_path, check=True, capture_output=True, timeout=300)
    done = subprocess.run([str(SCALEWISE), "run", "--json", "-o", str(tmp_path / "out"), "--", "mpiexec.hydra",
                           "-n", "2", str(exe), str(REPS), str(COUNT), *map(str, SIZES)],
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    profile = scalewise.load(json.loads(done.stdout)["log"])
    expected = groundtruth_fortran(2, REPS, COUNT, SIZES)
    for what in ("calls", "bytes", "hist"):
        diffs = function_differences(profile, expected, what)
        assert not diffs, "\n".join(diffs)
    messages, nbytes = recorded_p2p(profile)
    assert (dict(messages), dict(nbytes)) == (dict(expected.p2p), dict(expected.p2p_bytes))


@pytest.mark.parametrize("name, has_fortran", [("openmpi5", False), ("mpich5", False), ("intelmpi", True)])
def test_which_wheels_ship_fortran(name, has_fortran, mpi_env):
    env = mpi_env(name)
    mpicc = shutil.which("mpicc", path=env["PATH"])
    found = fortran_wrapper(mpicc)
    assert bool(found) == has_fortran
    if has_fortran:
        assert Path(found).parent == Path(mpicc).parent
