"""P1-P3 on a 4-rank halo run whose answers are worked out in the comments."""

import math

import pytest

from scalewise.analysis.run.breakdown import calls_table, class_table, function_table, time_breakdown

# Rank k: wall 10 s, MPI 2, 4, 6, 8 s.  Waitall takes 1, 3, 5, 7 s; Isend and
# Allreduce 0.5 s each on every rank.
RANKS = [(0, 10.0, 2.0), (1, 10.0, 4.0), (2, 10.0, 6.0), (3, 10.0, 8.0)]
FUNCTIONS = [row for k, w in [(0, 1.0), (1, 3.0), (2, 5.0), (3, 7.0)] for row in (
    (k, "MPI_Waitall", "wait", 10, w, 2000),
    (k, "MPI_Isend", "p2p", 20, 0.5, 1000),
    (k, "MPI_Allreduce", "collective", 5, 0.5, 40),
)]


@pytest.fixture
def halo(make_profile):
    return make_profile(RANKS, FUNCTIONS)


def test_mpi_share_and_per_rank_percentages(halo):
    b = time_breakdown(halo)
    assert b.total_wall == 40.0 and b.total_mpi == 20.0 and b.total_compute == 20.0
    assert b.mpi_share == pytest.approx(0.5)
    assert b.per_rank["mpi_pct"].tolist() == pytest.approx([20, 40, 60, 80])
    assert b.sorted_by_mpi["rank"].tolist() == [0, 1, 2, 3]


def test_imbalance_measures(halo):
    c = time_breakdown(halo).compute  # 8, 6, 4, 2 s: mean 5, population std sqrt(5)
    assert c.mean == 5.0 and c.max == 8.0 and c.max_rank == 0 and c.min_rank == 3
    assert c.max_over_mean == pytest.approx(1.6)
    assert c.cv == pytest.approx(math.sqrt(5) / 5)
    assert c.percentiles[50] == pytest.approx(5.0)


def test_time_per_function_as_share_of_wall_and_mpi(halo):
    t = function_table(halo).set_index("function")
    assert list(t.index) == ["MPI_Waitall", "MPI_Isend", "MPI_Allreduce"]  # time, then calls
    assert t.loc["MPI_Waitall", "time"] == 16.0
    assert t.loc["MPI_Waitall", "pct_wall"] == pytest.approx(40.0)
    assert t.loc["MPI_Waitall", "pct_mpi"] == pytest.approx(80.0)
    assert t.loc["MPI_Isend", "pct_wall"] == pytest.approx(5.0)
    assert t.loc["MPI_Allreduce", "pct_mpi"] == pytest.approx(10.0)
    assert (t.loc["MPI_Waitall", "time_rank_min"], t.loc["MPI_Waitall", "time_rank_max"]) == (1.0, 7.0)
    assert t.loc["MPI_Waitall", "time_rank_mean"] == pytest.approx(4.0)


def test_calls_per_function_and_share_of_calls(halo):
    c = calls_table(function_table(halo))
    assert c["function"].tolist() == ["MPI_Isend", "MPI_Waitall", "MPI_Allreduce"]
    assert c["calls"].tolist() == [80, 40, 20]
    assert c["pct_calls"].tolist() == pytest.approx([100 * 80 / 140, 100 * 40 / 140, 100 * 20 / 140])


def test_class_totals(halo):
    k = class_table(function_table(halo)).set_index("fclass")
    assert k.loc["wait", "time"] == 16.0 and k.loc["collective", "calls"] == 20


def test_function_missing_on_some_ranks_has_zero_minimum(make_profile):
    p = make_profile([(0, 4.0, 1.0), (1, 4.0, 1.0)], [(0, "MPI_Barrier", "collective", 1, 1.0, 0),
                                                      (1, "MPI_Send", "p2p", 1, 1.0, 8)])
    t = function_table(p).set_index("function")
    assert t.loc["MPI_Barrier", "time_rank_min"] == 0.0
    assert t.loc["MPI_Barrier", "time_rank_mean"] == 0.5
    assert t.loc["MPI_Barrier", "ranks_calling"] == 1


def test_zero_calls_gives_empty_tables_and_zero_share(make_profile):
    p = make_profile([(0, 3.0, 0.0), (1, 3.0, 0.0)])
    assert function_table(p).empty and calls_table(function_table(p)).empty
    assert time_breakdown(p).mpi_share == 0.0


def test_single_rank_spread(make_profile):
    b = time_breakdown(make_profile([(0, 2.0, 0.5)]))
    assert b.compute.max_over_mean == 1.0 and b.compute.cv == 0.0 and b.mpi_pct.max == 25.0


def test_init_and_finalize_are_outside_the_function_table(make_profile):
    # MPI_Init runs before the measured window: 2 s of it must not become 200% of a 1 s wall.
    p = make_profile(
        ranks=[(0, 1.0, 0.5)],
        functions=[(0, "MPI_Init", "init", 1, 2.0, 0), (0, "MPI_Finalize", "init", 1, 0.0, 0),
                   (0, "MPI_Allreduce", "collective", 10, 0.5, 80)],
    )
    t = function_table(p)
    assert list(t["function"]) == ["MPI_Allreduce"]
    assert t.loc[0, "pct_wall"] == pytest.approx(50.0)
    assert t.loc[0, "pct_mpi"] == pytest.approx(100.0)
    assert t.loc[0, "pct_calls"] == pytest.approx(100.0)
