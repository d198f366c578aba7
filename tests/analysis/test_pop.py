"""POP efficiencies of one run from planted profiles, every answer worked out by hand (docs/pop.md)."""

from __future__ import annotations

import math

import pytest

from scalewise.analysis.bound import bound_kind
from scalewise.analysis.run.findings import analyse
from scalewise.analysis.run.pop_metrics import NO_TRACE, pop_metrics, pop_rows, with_ideal_runtime
from scalewise.analysis.run.rows import run_metrics


def test_the_worked_example_of_the_docs(make_profile):
    """4 ranks compute 1.0, 0.8, 0.9, 0.7 s in a 1.25 s run (docs/pop.md)."""
    p = make_profile([(0, 1.25, 0.25), (1, 1.25, 0.45), (2, 1.25, 0.35), (3, 1.25, 0.55)])
    m = pop_metrics(p)
    assert m.runtime == 1.25 and m.useful_max == 1.0
    assert m.load_balance == pytest.approx(0.85, rel=1e-12)  # 0.85 / 1.0
    assert m.communication_efficiency == 0.8  # 1.0 / 1.25
    assert m.parallel_efficiency == pytest.approx(0.68, rel=1e-12)  # 0.85 / 1.25 = 0.85 x 0.8
    assert m.imbalance_share == pytest.approx(0.12, rel=1e-12)  # (1.0 - 0.85) / 1.25
    assert m.transfer_share == pytest.approx(0.2, rel=1e-12)
    assert math.isnan(m.serialisation_efficiency) and math.isnan(m.transfer_efficiency)
    assert m.split_missing == NO_TRACE


def test_binary_exact_plant_is_exact(make_profile):
    """Useful 4, 2, 3, 1 s in a 5 s run: LB 2.5/4, CE 4/5, PE 2.5/5, with no rounding anywhere."""
    m = pop_metrics(make_profile([(0, 5.0, 1.0), (1, 5.0, 3.0), (2, 5.0, 2.0), (3, 5.0, 4.0)]))
    assert (m.load_balance, m.communication_efficiency, m.parallel_efficiency) == (0.625, 0.8, 0.5)
    assert m.useful_total == 10.0 and m.useful_mean == 2.5


def test_runtime_is_the_longest_span_and_finalize_wait_is_lost(make_profile):
    """Rank 1 reaches MPI_Finalize 1 s early: its span is shorter, the run time is rank 0's 4 s.

    Useful 3 and 3 s: balanced (LB 1), but each computes 3 of the 4 s: CE = PE = 0.75."""
    m = pop_metrics(make_profile([(0, 4.0, 1.0), (1, 3.0, 0.0)]))
    assert m.runtime == 4.0 and m.load_balance == 1.0
    assert m.communication_efficiency == 0.75 and m.parallel_efficiency == 0.75


def test_ideal_runtime_splits_communication_efficiency_exactly(make_profile):
    """The ideal network runs the 5 s run in 4.5 s: TE = 4.5/5 = 0.9, SerE = 4/4.5, SerE x TE = CE = 0.8."""
    m = with_ideal_runtime(pop_metrics(make_profile([(0, 5.0, 1.0), (1, 5.0, 3.0)])), 4.5)
    assert m.transfer_efficiency == 0.9 and m.serialisation_efficiency == 4.0 / 4.5
    assert m.serialisation_efficiency * m.transfer_efficiency == pytest.approx(m.communication_efficiency, rel=1e-15)
    assert m.split_missing == "" and m.ideal_runtime == 4.5
    # A replay below the busiest rank's compute (rounding of the trace) is lifted to it: SerE never exceeds 1.
    low = with_ideal_runtime(pop_metrics(make_profile([(0, 5.0, 1.0), (1, 5.0, 3.0)])), 3.999999999)
    assert low.serialisation_efficiency == 1.0 and low.transfer_efficiency == 0.8


def test_rows_nest_as_pop_does_and_name_what_is_missing(make_profile):
    rows = pop_rows(pop_metrics(make_profile([(0, 5.0, 1.0), (1, 5.0, 3.0)])))
    assert [(r.key, r.depth) for r in rows] == [
        ("parallel_efficiency", 0), ("load_balance", 1), ("communication_efficiency", 1),
        ("serialisation_efficiency", 2), ("transfer_efficiency", 2)]
    assert [bool(r.missing) for r in rows] == [False, False, False, True, True]


def test_one_definition_for_the_run_the_study_and_the_bound_finding(make_profile):
    """The study's per-run numbers and the imbalance-bound rule read the same metrics as the run report."""
    p = make_profile([(0, 5.0, 1.0), (1, 5.0, 3.0), (2, 5.0, 2.0), (3, 5.0, 4.0)])
    m, row, a = pop_metrics(p), run_metrics(p), analyse(p)
    assert a.pop == m
    assert {k: row[k] for k in ("load_balance", "communication_efficiency", "parallel_efficiency", "runtime",
                                "imbalance_share", "transfer_share")} == {
        "load_balance": 0.625, "communication_efficiency": 0.8, "parallel_efficiency": 0.5, "runtime": 5.0,
        "imbalance_share": m.imbalance_share, "transfer_share": m.transfer_share}
    assert m.imbalance_share == pytest.approx(0.3) and m.transfer_share == pytest.approx(0.2)
    # MPI is half the wall time; waiting for rank 0 (30%) outweighs what even rank 0 loses (20%).
    assert bound_kind(row["mpi_share"], row["imbalance_share"], row["transfer_share"]) == "imbalance-bound"
    assert a.to_json_dict()["pop"]["load_balance"] == 0.625


def test_no_ranks_gives_unknown_metrics(make_profile):
    m = pop_metrics(make_profile([]))
    assert m.ranks == 0 and math.isnan(m.load_balance) and math.isnan(m.parallel_efficiency)
