"""Intel MPI 2021's collectives in the replay: the decisions observed in Intel MPI 2021.19, one table per
CPU code of its tuning files (data/intelmpi-2021-<cpu>-observed.json), looked up by size bucket, and MPICH
5.0's rules, said so, where no observation covers a call.  The decisions asserted here are the Emerald
Rapids table's (emr), pinned whatever this host's CPU is."""

import json
from importlib import resources

import pytest

from scalewise.whatif.collectives import assumption, intelmpi, mpich, rules_of, schedule
from scalewise.whatif.collectives.algorithms import SEND
from test_collectives import every_send_is_received

INTEL = "intelmpi-2021.19"


def _forget():
    intelmpi.host_cpu.cache_clear()
    intelmpi.observed.cache_clear()
    schedule.cache_clear()


@pytest.fixture(autouse=True)
def emr_table(monkeypatch):
    monkeypatch.setenv(intelmpi.CPU_VARIABLE, "emr")
    _forget()
    yield
    _forget()  # the variable is restored after this: the next lookup asks again


def test_the_observation_file_covers_every_collective_at_each_rank_count_alike():
    doc = json.loads(resources.files("scalewise.whatif").joinpath("data/intelmpi-2021-emr-observed.json").read_text())
    assert doc["library"].startswith("Intel(R) MPI Library 2021.19") and "one rank per node" in doc["setting"]
    assert doc["command"].startswith("scripts/intelmpi-observe.py --ranks ")
    table = doc["observed"]
    assert set(table) == {"allreduce", "bcast", "reduce", "allgather", "allgatherv", "alltoall", "alltoallv",
                          "gather", "scatter", "barrier", "reduce_scatter"}
    ranks = {P for cells in table.values() for P in cells}
    assert "4" in ranks and all(set(cells) == ranks for cells in table.values())
    for coll, cells in table.items():
        for P, sizes in cells.items():
            scale = int(P) if coll == "alltoallv" else 1
            want = ["0"] if coll == "barrier" else [str(n * scale) for n in sorted(
                [8 << k for k in range(18)] + [12 << k for k in range(17)])]
            assert list(sizes) == want, (coll, P)


@pytest.mark.parametrize("nbytes, sampled", [(0, 8), (1, 8), (5, 8), (8, 8), (9, 12), (16, 16), (17, 24),
                                             (31, 24), (32, 32), (33, 48), (65, 96), (100_000, 98304),
                                             (131072, 131072), (700_000, 786432), (1 << 20, 1 << 20)])
def test_a_size_takes_the_decision_of_its_own_sample_or_its_intervals(nbytes, sampled):
    """A power of two is decided apart from the sizes just off it (Bcast on 3 ranks: k-ary at 64 and
    128 KiB, inline between, docs/whatif.md); inside an interval, one sample stands for all."""
    for coll in ("allgather", "bcast", "reduce", "scatter", "allreduce"):
        func = f"MPI_{coll.capitalize()}"
        for P in (3, 4):
            assert intelmpi.lookup(func, P, nbytes)[0] == intelmpi.lookup(func, P, sampled)[0]
    keys = [int(k) for k in intelmpi.observed()["observed"]["bcast"]["3"]]
    assert intelmpi._sample(nbytes, keys) == sampled


def test_alltoallv_is_sampled_by_its_block():
    """Its trace bytes are the total a rank sends; the file's keys are P blocks of each sampled size."""
    assert intelmpi.lookup("MPI_Alltoallv", 3, 3 * 100_000) == intelmpi.lookup("MPI_Alltoallv", 3, 3 * 98304)
    assert intelmpi.lookup("MPI_Alltoallv", 3, 3 * 2 << 20)[1].endswith("above the 3145728 B observed")


def test_the_observed_decisions_of_4_ranks():
    assert intelmpi.lookup("MPI_Allgather", 4, 32) == ("brucks", "")
    assert intelmpi.lookup("MPI_Allgather", 4, 33) == ("recursive_doubling", "")
    assert intelmpi.lookup("MPI_Allreduce", 4, 65536) == ("nreduce", "")
    assert intelmpi.lookup("MPI_Reduce_scatter", 4, 8)[0] == "recursive_halving"
    assert intelmpi.lookup("MPI_Alltoallv", 4, 4 * 65536)[0] == "scattered"  # keyed by the total a rank sends
    assert intelmpi.lookup("MPI_Barrier", 4, 0) == (None, "inline algorithm")


def test_where_intel_mpi_differs_from_mpichs_rules_the_replay_follows_intel():
    name, sched = schedule(INTEL, "MPI_Allreduce", 4, 65536)
    assert name == "intel:nreduce"
    assert mpich.select("MPI_Allreduce", 4, [65536], line="mpich-5.0") == "MPIR_Allreduce_intra_reduce_scatter_allgather"
    # N-reduce: each rank sends every other rank a quarter of the vector, twice (reduce-scatter, allgather)
    for r in range(4):
        sends = [b for phase in sched[r] for d, _, b in phase if d == SEND]
        assert sends == [16384] * 6
    assert every_send_is_received(sched)


def test_kary_and_knomial_trees_have_radix_4():
    _, sched = schedule(INTEL, "MPI_Reduce", 4, 16384)  # kary at 4 ranks
    assert intelmpi.lookup("MPI_Reduce", 4, 16384)[0] == "kary"
    assert sorted(q for phase in sched[0] for _, q, _ in phase) == [1, 2, 3]  # the root hears all three
    assert all(len([m for phase in sched[r] for m in phase]) == 1 for r in (1, 2, 3))


@pytest.mark.parametrize("func, P, nbytes, why", [
    ("MPI_Allreduce", 16, 65536, "16 ranks not observed"),
    ("MPI_Bcast", 3, 100_000, "inline algorithm"),
    ("MPI_Allreduce", 4, 2 << 20, "2097152 B above the 1048576 B observed"),
    ("MPI_Allreduce", 4, 1024, "inline algorithm"),
    ("MPI_Barrier", 4, 0, "inline algorithm"),
    ("MPI_Gather", 4, 1024, "shumilin not modelled"),
    ("MPI_Allgather", 4, 16, "knomial not modelled"),
    ("MPI_Gatherv", 4, 1024, "not observed")])
def test_a_call_no_observation_covers_takes_mpich_5s_rule_and_says_so(func, P, nbytes, why):
    name, sched = schedule(INTEL, func, P, nbytes)
    mname, msched = mpich.choose(func, P, [nbytes] * P, 0, line="mpich-5.0")
    assert (name, sched) == (f"mpich-5.0:{mname}", msched)
    assert intelmpi.fallbacks()[(func, why)] >= 1
    assert f"{func}: {why} x" in assumption(INTEL)


def test_every_modelled_decision_sends_what_it_receives():
    table = intelmpi.observed()["observed"]
    modelled = 0
    for coll, cells in table.items():
        if coll == "reduce_scatter":  # not traced (docs/trace-format.md), so never replayed
            continue
        func = f"MPI_{coll.capitalize()}"
        for P, sizes in cells.items():
            for n in sizes:
                name, sched = schedule(INTEL, func, int(P), int(n))
                assert len(sched) == int(P) and every_send_is_received(sched), (func, P, n)
                modelled += name.startswith("intel:")
    assert modelled >= 80


def test_the_note_names_the_observations():
    assert rules_of(INTEL) == "intelmpi-2021"
    note = assumption(INTEL)
    assert note.startswith(f"{INTEL}'s collectives are replayed with the decisions observed in Intel(R) MPI "
                           "Library 2021.19.0")
    assert "MPICH 5.0's default rules" in note and assumption("mpich-5.0.2") is None


@pytest.mark.parametrize("cpu", ["emr", "icx"])
def test_each_cpu_code_has_its_own_table_from_its_own_tuning_file(cpu):
    assert intelmpi.table_cpu(cpu)[0] == cpu
    doc = intelmpi.observed(cpu)
    assert doc["cpu"] == cpu and f"tuning_{cpu}_" in doc["setting"]
    assert {"allreduce", "bcast", "reduce"} <= set(doc["observed"]) and "4" in doc["observed"]["allreduce"]


def test_the_table_follows_the_cpu_code():
    """Allreduce, 2 ranks, 100 000 B: N-reduce under the emr tuning files, recursive doubling under icx's;
    Reduce, 4 ranks, 3000 B: k-nomial under emr's, an inline algorithm under icx's."""
    assert intelmpi.lookup("MPI_Allreduce", 2, 100_000, cpu="emr")[0] == "nreduce"
    assert intelmpi.lookup("MPI_Allreduce", 2, 100_000, cpu="icx")[0] == "recursive_doubling"
    assert intelmpi.lookup("MPI_Reduce", 4, 3000, cpu="emr") == ("knomial", "")
    assert intelmpi.lookup("MPI_Reduce", 4, 3000, cpu="icx") == (None, "inline algorithm")
    assert intelmpi.lookup("MPI_Allreduce", 2, 100_000)[0] == "nreduce"  # this module's host: emr


def test_the_host_cpu_code_picks_the_table_and_the_note_says_which(monkeypatch):
    monkeypatch.setenv(intelmpi.CPU_VARIABLE, "icx")
    _forget()
    assert intelmpi.lookup("MPI_Allreduce", 2, 100_000)[0] == "recursive_doubling"
    assert schedule(INTEL, "MPI_Allreduce", 2, 100_000)[0] == "intel:recursive_doubling"
    assert "Intel MPI loads its icx tuning files (this host's CPU: the log records none)" in assumption(INTEL)


@pytest.mark.parametrize("cpu, nearest", [("spr", "emr"), ("gnr", "emr"), ("skx", "icx"), ("zen4", "emr")])
def test_a_cpu_with_no_table_takes_the_nearest_and_says_so(monkeypatch, cpu, nearest):
    monkeypatch.setenv(intelmpi.CPU_VARIABLE, cpu)
    _forget()
    assert intelmpi.table_cpu() == (nearest, f"no table observed for Intel MPI's CPU {cpu}: the nearest, "
                                             f"{nearest}'s, assumed")
    assert intelmpi.observed()["cpu"] == nearest
    assert f"the nearest, {nearest}'s, assumed" in assumption(INTEL)
