"""The noise guard (analysis/ratio.py) and the B3 table (analysis/study/tuning.py), on hand-made numbers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from scalewise.analysis.ratio import ratio_interval
from scalewise.analysis.study.tuning import best_sets, tuning_table


def test_a_setting_twice_as_fast_in_every_run_is_better_by_100_percent():
    r = ratio_interval([10.0, 10.5, 9.5], [5.0, 5.25, 4.75])
    assert r.ratio == pytest.approx(0.5)
    assert r.high < 1.0
    assert r.verdict(higher_is_better=False) == "better"
    assert r.verdict(higher_is_better=True) == "worse"
    assert r.gain(higher_is_better=False) == pytest.approx(1.0)  # twice the speed: +100%
    # the interval of three against three spans the extreme pairs
    assert r.low == pytest.approx(4.75 / 10.5) and r.high == pytest.approx(5.25 / 9.5)


def test_overlapping_runs_are_the_same_within_noise():
    r = ratio_interval([10.0, 12.0, 8.0], [9.0, 11.5, 8.5])
    assert r.low < 1.0 < r.high
    assert r.verdict(False) == "same" and r.verdict(True) == "same"


def test_with_three_runs_a_side_a_claim_needs_every_run_to_win():
    rng = np.random.default_rng(1)
    for _ in range(50):
        a, b = rng.normal(10, 1, 3), rng.normal(10, 1, 3)
        # disjoint samples of the same distribution happen (1 in 10 for three a side); never beyond them
        r = ratio_interval(a, b)
        assert (r.verdict(False) == "better") == (b.max() < a.min())


def test_fewer_than_three_runs_get_no_verdict():
    assert ratio_interval([10.0, 10.0], [1.0, 1.0, 1.0]).verdict(False) == "too few"
    assert ratio_interval([], [1.0, 2.0, 3.0]).verdict(False) == "too few"


def _perf(rows):
    return pd.DataFrame([{"app": "a", "mpi": m, "params": p, "run_id": f"{m}{p}{i}", "repetition": i, "wall": v,
                          "value": v, "metric": "time", "unit": "s", "higher_is_better": False}
                         for m, p, vals in rows for i, v in enumerate(vals)])


def test_tuning_table_compares_each_set_with_the_default_of_its_configuration():
    perf = _perf([("openmpi", "default", [10, 10, 10]), ("openmpi", "alg-3", [5, 5, 5]),
                  ("openmpi", "alg-4", [20, 20, 20]), ("openmpi", "alg-5", [9, 11, 10]),
                  ("mpich", "default", [4, 4, 4]), ("mpich", "alg-3", [4, 4.1, 3.9])])
    t = tuning_table(perf, ["app", "mpi", "params"])
    got = {(r.group, r.params): (r.gain_pct, r.verdict) for r in t.itertuples()}
    assert got[("mpi=openmpi", "default")] == (0.0, "default")
    assert got[("mpi=openmpi", "alg-3")] == (pytest.approx(100.0), "better")
    assert got[("mpi=openmpi", "alg-4")] == (pytest.approx(-50.0), "worse")
    assert got[("mpi=openmpi", "alg-5")][1] == "same"
    assert got[("mpi=mpich", "alg-3")][1] == "same"
    best = best_sets(t)
    assert list(best["params"]) == ["alg-3"] and list(best["group"]) == ["mpi=openmpi"]
    assert best_sets(t, prefix="eager").empty


def test_no_default_no_table():
    assert tuning_table(_perf([("openmpi", "fast", [1, 1, 1])]), ["app", "mpi", "params"]).empty


def test_a_study_with_only_the_default_set_has_no_tuning_table():
    assert tuning_table(_perf([("openmpi", "default", [1, 1, 1])]), ["app", "mpi", "params"]).empty
