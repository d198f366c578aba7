"""Intel MPI 2021.19's collectives, observed on real runs (tests/support/intelmpi_observe.py: rank 0 under
gdb, stopped in every algorithm function a call enters; several nodes made of this host by UTS
namespaces): the replay's decisions (whatif/collectives/intelmpi.py) are the ones Intel MPI takes, at
sizes between the sampled ones too, and every preset `tune` writes runs the algorithm it names."""

from __future__ import annotations

import os
import shutil

import pytest

from scalewise.tune.choices import INTELMPI_ALGORITHMS, algorithm_sets
from scalewise.tune.targets import TuneTarget
from scalewise.whatif.collectives import intelmpi, schedule
from support.intelmpi_observe import build, observe, tuning_file

# A run observes every call under gdb with its ranks sharing two cores: minutes on a loaded host.
pytestmark = pytest.mark.timeout(1800)

REPLAYED = ["allreduce", "bcast", "reduce", "allgather", "allgatherv", "alltoall", "alltoallv", "gather", "scatter",
            "barrier"]
# Sizes none of which the observation file sampled (powers of two and 3 * 2^(k-2)): each takes its interval's.
BETWEEN = [20, 3000, 100_000, 700_000]


@pytest.fixture(scope="module")
def intel(mpi_env, tmp_path_factory):
    assert shutil.which("gdb") and shutil.which("unshare"), "gdb and unshare (util-linux) observe the runs"
    env = mpi_env("intelmpi")
    exe = build(env, tmp_path_factory.mktemp("intelobs"))
    # the replay is for this host's CPU as Intel MPI names it (its tuning file's tuning_<cpu>_): its table
    cpu = tuning_file(env, exe)[0]
    assert cpu in intelmpi.observed_cpus(), f"no table observed for Intel MPI's CPU {cpu}"
    saved = os.environ.get(intelmpi.CPU_VARIABLE)
    os.environ[intelmpi.CPU_VARIABLE] = cpu
    _forget()
    yield env, exe
    os.environ.pop(intelmpi.CPU_VARIABLE)
    if saved is not None:
        os.environ[intelmpi.CPU_VARIABLE] = saved
    _forget()


def _forget():
    intelmpi.host_cpu.cache_clear()
    intelmpi.observed.cache_clear()
    schedule.cache_clear()


@pytest.mark.parametrize("ranks", [2, 3, 4, 5, 6, 8])
def test_the_replay_takes_the_decisions_intel_mpi_takes_across_nodes(intel, ranks):
    env, exe = intel
    seen = observe(env, exe, REPLAYED, ranks, BETWEEN)
    compared = 0
    for coll in REPLAYED:
        func = f"MPI_{coll.capitalize()}"
        for n in BETWEEN:
            traced = traced_bytes(coll, n, ranks)
            ran = intelmpi.algorithm(coll, seen[coll][n])
            assert intelmpi.lookup(func, ranks, traced)[0] == ran, (coll, n, seen[coll][n])
            name = schedule("intelmpi-2021.19", func, ranks, traced)[0]
            # the replay runs that algorithm where it models it, else says it fell back
            assert name == f"intel:{ran}" or name.startswith("mpich-5.0:"), (coll, n, name)
            compared += ran is not None
    assert compared >= 20  # most of these calls run an algorithm gdb can see


def traced_bytes(coll: str, n: int, ranks: int) -> int:
    """The byte count the trace records for the observed program's call of ``coll`` at ``n``: the reductions
    move n // 8 doubles (20 B is 16 B moved: at 5 nodes under icx's tuning file 16 B runs recursive doubling
    and 24 B an inline algorithm, so the difference decides), Alltoallv records the total sent, Barrier 0."""
    if coll == "barrier":
        return 0
    if coll in ("allreduce", "reduce"):
        return max(1, n // 8) * 8
    return n * ranks if coll == "alltoallv" else n


def preset_function(coll: str, name: str) -> str | None:
    """The MPIR_ function the preset ``name`` of ``coll`` (INTELMPI_ALGORITHMS) enters: its own
    algorithm's, named after the Developer Reference's algorithms (None: Allreduce's Reduce + Bcast, no
    allreduce function of its own; Reduce_scatter's Reduce + Scatterv, likewise)."""
    own = {"shumilin_ring": "shumilin", "ring": "nb_ring" if coll == "allreduce" else "ring",
           "bruck": "brucks", "isend_irecv_waitall": "scattered", "dissemination": "dissemination",
           "reduce_scatterv": None, "reduce_bcast": None}
    if coll == "reduce" and name == "shumilin":
        return "ring"  # Shumilin's Reduce is its MPIR_Reduce_intra_ring
    if coll == "reduce" and name == "rabenseifner":
        return "redscat_gather"
    if coll == "bcast" and name == "recursive_doubling":
        return "scatter_recursive_doubling_allgather"
    if coll == "bcast" and name == "ring":
        return "scatter_ring_allgather"
    return own.get(name, name)


def test_every_preset_tune_writes_runs_its_algorithm(intel):
    """4 ranks of this host, 64 KiB: each run sets the i-th preset of every collective at once."""
    env, exe = intel
    sets = {coll: list(algorithm_sets("intelmpi-2021", TuneTarget(
        name=f"MPI_{coll.capitalize()}", pct_mpi=50.0, time=1.0, calls=2, mean_bytes=65536.0, mode_bin=17,
        comm_size=4)).items()) for coll in INTELMPI_ALGORITHMS}
    assert {c: [s.env[f"I_MPI_ADJUST_{c.upper()}"] for _, s in v] for c, v in sets.items()} == \
        {c: [str(k) for k in v] for c, v in INTELMPI_ALGORITHMS.items()}
    checked = 0
    for i in range(max(map(len, sets.values()))):
        chosen = {c: v[i] for c, v in sets.items() if i < len(v)}
        run_env = {**env, **{k: val for _, s in chosen.values() for k, val in s.env.items()}}
        seen = observe(run_env, exe, list(chosen), 4, [65536], nodes=False)
        for coll, (set_name, _) in chosen.items():
            name = set_name.split("-", 2)[2]
            entered = seen[coll][65536]
            want = preset_function(coll, name)
            if want is None:  # composed of other collectives: none of its own algorithms runs
                assert intelmpi.algorithm(coll, entered) is None and entered, (set_name, entered)
            else:
                assert intelmpi.algorithm(coll, entered) == want, (set_name, entered)
            checked += 1
    assert checked == sum(map(len, INTELMPI_ALGORITHMS.values()))
