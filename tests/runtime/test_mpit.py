"""MPI_T: performance variables read at MPI_Finalize and control variables in
force, with real Open MPI and MPICH (docs/mpit.md).

unexpected.c leaves exactly 10 messages from rank 0 in rank 1's unexpected
queue at MPI_Finalize: Open MPI's ob1 counts them per peer in
pml_ob1_unexpected_msgq_length, which the profiler reads on MPI_COMM_WORLD.
Debian's MPICH 4.0 exposes no performance variables, so there the control
variables carry the test: one set through the environment must come back
with its value."""

from __future__ import annotations

import subprocess

import pytest

import scalewise

from support import mpijob

UNEXPECTED = 10
RING = ["1", "64", "fan"]


def load_job(mpi_job, program, flavour, key, source, argv, env=None, nranks=2):
    exe = program(source, flavour)
    job = mpi_job(f"mpit-{key}-{flavour}", flavour, nranks, [str(exe), *argv], extra_env=env or {})
    assert job.returncode == 0, job.stderr
    return scalewise.load(job.logfile)


def test_openmpi_unexpected_queue_holds_the_planted_messages(mpi_job, program):
    p = load_job(mpi_job, program, "openmpi", "unexpected", "unexpected.c", [],
                 {"OMPI_MCA_btl_vader_eager_limit": "8192"})
    assert p.meta["format"] == "1.4" and p.mpit.status == "read"
    q = p.pvars[p.pvars["variable"] == "pml_ob1_unexpected_msgq_length"].set_index("rank")
    assert set(q.index) == {0, 1} and (q["binding"] == "comm_world").all() and (q["pclass"] == "size").all()
    # One element per peer in MPI_COMM_WORLD: rank 1 holds all 10 from peer 0.
    assert q.loc[1, "values"] == (UNEXPECTED, 0) and q.loc[1, "value"] == UNEXPECTED
    assert q.loc[0, "values"] == (0, 0)
    assert "Number of unexpected messages" in p.mpit.descriptions["pml_ob1_unexpected_msgq_length"]
    # Settings in force: one from the environment, one from the launcher's --mca.
    assert p.mpit.cvars["btl_vader_eager_limit"] == "8192"
    assert p.mpit.cvars["btl"] == "self,vader"


def test_mpich_records_the_control_variable_set_in_the_environment(mpi_job, program):
    p = load_job(mpi_job, program, "mpich", "cvar", "ring.c", RING, {"MPIR_CVAR_IBARRIER_RECEXCH_KVAL": "3"})
    assert p.mpit.status == "read" and not p.mpit.cvars_capped
    assert p.mpit.cvars["MPIR_CVAR_IBARRIER_RECEXCH_KVAL"] == "3"
    assert p.mpit.cvars["MPIR_CVAR_IALLREDUCE_TREE_KVAL"] == "2"  # its default, untouched
    assert p.pvars.empty  # this MPICH build registers no performance variables


@pytest.mark.parametrize("flavour", ["openmpi", "mpich"])
def test_cvar_cap_keeps_that_many_and_says_so(mpi_job, program, flavour):
    p = load_job(mpi_job, program, flavour, "cap", "ring.c", RING, {"SCALEWISE_MPIT_MAX_CVARS": "5"})
    assert len(p.mpit.cvars) == 5 and p.mpit.cvars_capped


@pytest.mark.parametrize("flavour", ["openmpi", "mpich"])
def test_switched_off_the_section_says_so_and_the_profile_is_whole(mpi_job, program, flavour):
    p = load_job(mpi_job, program, flavour, "off", "ring.c", RING, {"SCALEWISE_MPIT": "0"})
    assert p.mpit.status == "off" and not p.mpit.cvars and p.pvars.empty
    assert p.functions.set_index(["rank", "function"]).loc[(0, "MPI_Sendrecv"), "calls"] == 1


@pytest.mark.parametrize("flavour", ["openmpi", "mpich"])
def test_mpit_that_fails_to_start_leaves_a_valid_log(mpi_job, program, shared_dir, flavour):
    shim = shared_dir / f"libmpitfails-{flavour}.so"
    if not shim.is_file():
        subprocess.run([f"mpicc.{flavour}", "-shared", "-fPIC", "-o", str(shim),
                        str(mpijob.PROGRAMS / "mpit_fails.c")], check=True, timeout=120)
    preload = f"{mpijob.library(flavour)} {shim}"
    p = load_job(mpi_job, program, flavour, "fails", "ring.c", RING, {"LD_PRELOAD": preload})
    assert p.mpit.status == "unavailable" and not p.mpit.cvars and p.pvars.empty
    f = p.functions.set_index(["rank", "function"])
    assert all(f.loc[(r, "MPI_Sendrecv"), "calls"] == 1 for r in range(2))


@pytest.mark.parametrize("flavour", ["openmpi", "mpich"])
def test_application_using_mpit_itself_is_unaffected(mpi_job, program, flavour):
    exe = program("mpit_user.c", flavour)
    job = mpi_job(f"mpit-user-{flavour}", flavour, 2, [str(exe)])
    assert job.returncode == 0, job.stderr
    seen = sorted(line.split()[1:] for line in job.stdout.splitlines() if line.startswith("pvars "))
    assert [rank for rank, _ in seen] == ["0", "1"] and all(int(n) >= 0 for _, n in seen)
    p = scalewise.load(job.logfile)
    # Its MPI_T calls are not among its MPI calls; its MPI_T_finalize did not end the profiler's.
    assert not p.functions["function"].str.startswith("MPI_T_").any()
    assert p.functions.set_index(["rank", "function"]).loc[(0, "MPI_Send"), "calls"] == 1
    assert p.mpit.status == "read" and p.mpit.cvars
    if flavour == "openmpi":
        assert set(p.pvars["variable"]) >= {"pml_ob1_unexpected_msgq_length", "pml_ob1_posted_recvq_length"}


def test_pvar_cap_keeps_that_many_and_says_so(mpi_job, program):
    p = load_job(mpi_job, program, "openmpi", "pvar-cap", "ring.c", RING, {"SCALEWISE_MPIT_MAX_PVARS": "1"})
    assert p.mpit.pvars_capped and p.pvars.groupby("rank").size().tolist() == [1, 1]


def test_openmpi_unopened_mtl_is_registered_without_its_components_unless_all(mpi_job, program):
    """The job runs ob1, so the MTL framework is closed after MPI_Init: by default
    its components are not loaded again for MPI_T (their libraries'
    constructors cost 0.2 s per rank, docs/mpit.md "Cost") and the flag says so;
    SCALEWISE_MPIT=all loads them and lists their control variables.  The pvars
    read are the same either way."""
    eager = {"OMPI_MCA_btl_vader_eager_limit": "8192"}
    lean = load_job(mpi_job, program, "openmpi", "mtl-lean", "unexpected.c", [], eager)
    full = load_job(mpi_job, program, "openmpi", "mtl-all", "unexpected.c", [], {**eager, "SCALEWISE_MPIT": "all"})
    assert lean.mpit.status == full.mpit.status == "read"
    assert lean.mpit.mtl_unloaded and not full.mpit.mtl_unloaded
    component = ("mtl_ofi_", "mtl_psm_", "mtl_psm2_", "opal_common_ofi_")
    dropped = {name for name in full.mpit.cvars if name.startswith(component)}
    assert "mtl_ofi_provider_include" in dropped and "mtl_psm2_priority" in dropped
    assert not any(name.startswith(component) for name in lean.mpit.cvars)
    assert set(lean.mpit.cvars) == set(full.mpit.cvars) - dropped  # nothing else is lost
    assert lean.mpit.cvars["mtl"] == full.mpit.cvars["mtl"] == "^ofi"  # the framework's own variables stay
    assert set(lean.pvars["variable"]) == set(full.pvars["variable"])
    q = lean.pvars[lean.pvars["variable"] == "pml_ob1_unexpected_msgq_length"].set_index("rank")
    assert q.loc[1, "value"] == UNEXPECTED


def test_mpich_is_untouched_by_the_mtl_rule(mpi_job, program):
    p = load_job(mpi_job, program, "mpich", "mtl", "ring.c", RING)
    assert p.mpit.status == "read" and not p.mpit.mtl_unloaded and p.mpit.cvars
