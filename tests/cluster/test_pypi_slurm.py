"""The MPIs a user installs from PyPI under the emulated cluster's Slurm (real slurmctld, one slurmd in
each node), started the ways users start them on clusters: the library's own launcher inside a batch
job (Open MPI 5's PRRTE and the Hydra of MPICH 5 and Intel MPI start their daemons through Slurm),
srun straight from the host with the PMI plugin the library speaks, and a study through sbatch with
either.  Every count of the ground-truth program exact, ranks 0, 1 on swnode1 and 2, 3 on swnode2; a
plugin that cannot start the library is a one-line error naming the cause, and nothing is submitted."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

import scalewise
from scalewise.cluster import cluster_up, parse_rate
from scalewise.cluster.launching import transport_env
from scalewise.cluster.slurm import CONF, start_slurm
from support.expect import function_differences, groundtruth_c, recorded_p2p
from support.mpijob import PROGRAMS, counted_calls
from support.pypi_mpis import IDENTITIES, LAUNCHERS

SW = str(Path(os.sys.executable).with_name("scalewise"))
PYPI = list(IDENTITIES)
REPS, COUNT, SIZES = 2, 3, [0, 1, 8, 1024, 65536]
PLACED = ["swnode1", "swnode1", "swnode2", "swnode2"]  # 2 nodes x 2 ranks, by rank
PLUGIN = {"openmpi5": "pmix", "mpich5": "pmi2", "intelmpi": "pmi2"}
# A plugin each library cannot start as one world, and the words of the error naming why.
WRONG = {"openmpi5": ("pmi2", "Open MPI 5 speaks PMIx only"),
         "mpich5": ("pmix", "this MPICH build speaks PMI-1/2, not PMIx")}


def _groundtruth(tmp_path: Path) -> list[str]:
    exe = tmp_path / "groundtruth"
    subprocess.run(["mpicc", "-O1", "-w", str(PROGRAMS / "groundtruth.c"), "-o", str(exe)], check=True,
                   capture_output=True, timeout=300)
    return [str(exe), str(tmp_path / "io.dat"), str(REPS), str(COUNT), *map(str, SIZES)]


def _exact(document: str, job_output: str, identity: str) -> None:
    """The profile `scalewise run --json` printed: the library asked for, each rank on its node, every count."""
    profile = scalewise.load(json.loads(document)["log"])
    assert identity.split("-")[1] in profile.meta["mpi_library"]
    assert profile.ranks.set_index("rank")["host"].sort_index().tolist() == PLACED
    expected = groundtruth_c(4, REPS, COUNT, SIZES, counted_calls(job_output))
    for what in ("calls", "bytes", "hist"):
        diffs = function_differences(profile, expected, what)
        assert not diffs, "\n".join(diffs)
    messages, nbytes = recorded_p2p(profile)
    assert (dict(messages), dict(nbytes)) == (dict(expected.p2p), dict(expected.p2p_bytes))


def _jobs() -> int:
    out = subprocess.run(["scontrol", "-o", "show", "job"], capture_output=True, text=True, check=True).stdout
    return len([line for line in out.splitlines() if line.startswith("JobId=")])


@pytest.mark.parametrize("name", PYPI)
def test_a_pypi_mpi_runs_under_the_clusters_slurm(emulation, under, name, tmp_path, monkeypatch):
    identity = under(name)
    c = cluster_up(2, parse_rate("gige"))
    start_slurm(c)
    monkeypatch.setenv("SLURM_CONF", str(CONF))
    app = _groundtruth(tmp_path)

    # (a) The library's own launcher in a batch job on 2 nodes x 2 tasks (the nodes' single cores
    # overcommitted): it reads the allocation and starts its daemons in the nodes through Slurm.
    script = tmp_path / "job.sh"
    script.write_text("#!/bin/bash\n" + subprocess.list2cmdline(
        [SW, "run", "--json", "-o", str(tmp_path / "batch"), "--", LAUNCHERS[name], "-n", "4", *app]) + "\n")
    done = subprocess.run(["sbatch", "--wait", "--overcommit", "-N", "2", "-n", "4", f"--chdir={tmp_path}",
                           f"--output={tmp_path / 'job.out'}", f"--error={tmp_path / 'job.err'}", str(script)],
                          env=transport_env(identity, dict(os.environ)), capture_output=True, text=True, timeout=300)
    err = (tmp_path / "job.err").read_text()
    assert done.returncode == 0, err[-3000:]
    _exact((tmp_path / "job.out").read_text(), err, identity)

    # (b) srun from the host with the library's plugin, through `run --cluster` (the cluster's Slurm,
    # its transport, --overcommit added).
    done = subprocess.run([SW, "run", "--cluster", "--json", "-o", str(tmp_path / "srun"), "--", "srun",
                           f"--mpi={PLUGIN[name]}", "-N", "2", "-n", "4", *app],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    _exact(done.stdout, done.stderr, identity)

    # (c) A plugin the library cannot start as one world: one line naming the cause, no job submitted.
    if name in WRONG:
        plugin, why = WRONG[name]
        before = _jobs()
        done = subprocess.run([SW, "run", "--cluster", "-o", str(tmp_path / "wrong"), "--", "srun",
                               f"--mpi={plugin}", "-N", "2", "-n", "4", *app], capture_output=True, text=True,
                              timeout=300)
        assert done.returncode != 0 and len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert f"srun --mpi={plugin} cannot start {identity} ranks as one world ({why}" in done.stderr
        assert _jobs() == before


@pytest.mark.parametrize("launcher", ["srun", "mpirun"])
def test_a_study_runs_the_pypi_mpis_through_slurm(emulation, under, launcher, tmp_path, monkeypatch):
    """`--launcher slurm` with each PyPI MPI bound by prefix: one sbatch job per run, its ranks started by
    srun (each library's plugin) or by the library's own launcher; 2 ranks on each node, every ring message."""
    import sqlite3

    from scalewise.campaign.runner import run_study
    from scalewise.campaign.study import load_study
    from support.expect import assert_ring_on_two_nodes
    from support.pypi_mpis import ring_study

    under("mpich5")  # for its SCALEWISE_MPI_BUILDS: the runtime builds the other tests made
    c = cluster_up(2, parse_rate("gige"))
    start_slurm(c)
    monkeypatch.setenv("SLURM_CONF", str(CONF))
    iters, nbytes = 20, 4096
    path = tmp_path / "study.yaml"
    path.write_text(ring_study(tmp_path, "libraries-under-slurm", {"ranks": [4], "nodes": [2], "mpi": list(PYPI)},
                               iters, nbytes, f"slurm:\n  launcher: {launcher}\n  sbatch_args: [--overcommit]\n"))
    loaded = load_study(path)
    assert run_study(loaded, "slurm").counts == {"ok": 3}
    db = sqlite3.connect(loaded.output / "results.sqlite")
    runs = db.execute("SELECT mpi, scheduler, hosts, command, profile_path FROM runs ORDER BY mpi").fetchall()
    assert [r[:3] for r in runs] == [(m, "slurm", "swnode1,swnode2") for m in sorted(PYPI)]
    for mpi, _, _, command, profile_path in runs:
        started = json.loads(command)
        if launcher == "srun":
            assert started[:2] == ["srun", f"--mpi={PLUGIN[mpi]}"], command
        else:  # the bound MPI's own launcher, from its prefix
            assert started[0].endswith(("/bin/mpirun", "/bin/mpiexec")) and "scalewise-mpis" in started[0], command
        profile = scalewise.load(loaded.output / profile_path)
        assert IDENTITIES[mpi].split("-")[1] in profile.meta["mpi_library"]
        assert_ring_on_two_nodes(profile, iters, nbytes, mpi)
