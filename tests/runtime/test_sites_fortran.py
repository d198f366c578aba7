"""Call sites from Fortran name the user's file and line under both MPIs
and every binding: the MPI library's own binding frames (Open MPI's
libmpi_mpifh and libmpi_usempif08, MPICH's libmpichfort) are looked past.
programs/sites_f.F90 and sites_f08.f90, built with -g, on two ranks."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from support import mpijob
import scalewise
from support.mpijob import FLAVOURS

A, NRANKS = 4, 2
BINDINGS = {"mpif.h": ("sites_f.F90", ("USE_MPIF_H",)), "use-mpi": ("sites_f.F90", ()),
            "use-mpi_f08": ("sites_f08.f90", ())}
CASES = [pytest.param((b, f), id=f"{b}-{f}") for b in BINDINGS for f in FLAVOURS]


def line_of(source: Path, tag: str) -> int:
    return next(i for i, text in enumerate(source.read_text().splitlines(), 1) if text.endswith(f"! {tag}"))


@pytest.fixture(scope="module", params=CASES)
def built(request, tmp_path_factory):
    binding, flavour = request.param
    name, defines = BINDINGS[binding]
    source = mpijob.PROGRAMS / name
    exe = tmp_path_factory.mktemp(f"sites-{binding}-{flavour}") / source.stem
    cmd = mpijob.compile_command(flavour, source, exe, defines) + ["-g"]
    subprocess.run(cmd, check=True, capture_output=True, timeout=180)
    return binding, flavour, source, exe


def test_fortran_sites_are_the_users_lines(built, mpi_job):
    binding, flavour, source, exe = built
    job = mpi_job(f"sites-fortran-{binding}-{flavour}-{exe.parent.name}", flavour, NRANKS, [exe, A])
    assert job.returncode == 0, job.stderr
    p = scalewise.load(job.logfile)
    want = {("MPI_Allreduce", f"{source.name}:{line_of(source, 'SITE_A')}"): A,
            ("MPI_Barrier", f"{source.name}:{line_of(source, 'SITE_C')}"): 1,
            ("MPI_Waitall", f"{source.name}:{line_of(source, 'SITE_W')}"): 1}
    s = p.sites
    for rank in range(NRANKS):
        mine = s[(s["rank"] == rank) & s["function"].isin([f for f, _ in want])]
        got = {(r.function, Path(r.location).name): r.calls for r in mine.itertuples()}
        assert got == want, f"rank {rank}: {mine[['function', 'object', 'location', 'calls']].to_string()}"
        assert set(mine["object"]) == {str(exe)}
