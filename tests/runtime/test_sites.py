"""Call sites (programs/sites.c) on two ranks with address randomisation on:
each rank loads the program at its own address, yet every site resolves to
the same file:line on both, with exact calls and bytes; SCALEWISE_SITES=0
leaves them out."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

import scalewise
from support import mpijob
from support.mpijob import FLAVOURS
from scalewise.analysis.run.sites import site_table

A, B, NRANKS = 3, 5, 2
SOURCE = mpijob.PROGRAMS / "sites.c"


def line_of(tag: str) -> int:
    return next(i for i, text in enumerate(SOURCE.read_text().splitlines(), 1) if f"/* {tag} */" in text)


@pytest.fixture(scope="module", params=FLAVOURS)
def built(request, tmp_path_factory):
    flavour = request.param
    exe = tmp_path_factory.mktemp(f"sites-{flavour}") / "sites"
    # A position-independent program with debug information: randomised per rank.
    cmd = mpijob.compile_command(flavour, SOURCE, exe) + ["-g", "-fPIE", "-pie", "-fno-inline"]
    subprocess.run(cmd, check=True, capture_output=True, timeout=180)
    return flavour, exe


def run(built, mpi_job, **env) -> tuple[str, scalewise.Profile]:
    flavour, exe = built
    key = f"sites-{flavour}-{'-'.join(f'{k}{v}' for k, v in env.items())}-{exe.parent.name}"
    job = mpi_job(key, flavour, NRANKS, [exe, A, B], extra_env=env)
    assert job.returncode == 0, job.stderr
    return job.stdout, scalewise.load(job.logfile)


def test_sites_on_every_rank_resolve_to_the_same_lines(built, mpi_job):
    assert Path("/proc/sys/kernel/randomize_va_space").read_text().strip() != "0", "address randomisation is off"
    stdout, p = run(built, mpi_job)
    mains = re.findall(r"main (\d+) (0x[0-9a-f]+)", stdout)
    assert len(mains) == NRANKS and len({addr for _, addr in mains}) == NRANKS, stdout  # loaded apart
    here = SOURCE.name
    want = {("MPI_Allreduce", "site_a", f"{here}:{line_of('SITE_A')}"): (A, 8 * A),
            ("MPI_Allreduce", "site_b", f"{here}:{line_of('SITE_B')}"): (B, 64 * B),
            ("MPI_Barrier", "main", f"{here}:{line_of('SITE_C')}"): (1, 0)}
    s = p.sites
    for rank in range(NRANKS):
        mine = s[s["rank"] == rank]
        got = {(r.function, r.func, Path(r.location).name): (r.calls, r.bytes) for r in mine.itertuples()}
        assert got == want, f"rank {rank}"
        assert set(mine["object"]) == {str(built[1])}
    table = site_table(p)
    assert len(table) == 3 and (table["ranks"] == NRANKS).all()
    assert dict(zip(table["func"], table["calls"])) == {"site_a": NRANKS * A, "site_b": NRANKS * B, "main": NRANKS}
    # Site times add up to the functions' times.
    f = p.functions.groupby("function")["time"].sum()
    for name, t in s.groupby("function")["time"].sum().items():
        assert t == pytest.approx(f[name], rel=1e-6, abs=1e-8)


def test_sites_can_be_switched_off(built, mpi_job):
    _, p = run(built, mpi_job, SCALEWISE_SITES="0")
    assert p.sites.empty
    assert p.functions.set_index(["rank", "function"]).loc[(0, "MPI_Allreduce"), "calls"] == A + B
