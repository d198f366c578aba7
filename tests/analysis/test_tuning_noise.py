"""The one statistics module (analysis/stats.py) and the B3 table and tune's stages (analysis/study/tuning.py, tune/decision.py).

Exact properties on hand-made numbers (the counting of the rank test, the
interval read off the pairwise ratios), and every statistical claim as a rate
over many simulated seeds."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from scalewise.analysis import stats
from scalewise.analysis.study.tuning import best_sets, tuning_table
from scalewise.tune.decision import confirm, held_out, screen

SEEDS = 4000


def test_the_exact_null_distribution_is_the_count_of_splits():
    for n, m in [(3, 3), (4, 5), (6, 2)]:
        counts = np.asarray(stats._u_counts(n, m))
        assert counts.sum() == math.comb(n + m, n) and counts[0] == 1 and counts[-1] == 1
        assert np.allclose(counts, counts[::-1]), "symmetric under the null"
    assert stats.smallest_p(3, 3) == pytest.approx(1 / 20) and stats.smallest_p(5, 5) == pytest.approx(1 / 252)
    assert stats.interval_level(3, 3) == pytest.approx(0.90) and math.isnan(stats.interval_level(2, 2))


@pytest.mark.parametrize("n", [3, 4, 5, 8])
def test_the_test_holds_its_level_on_the_null_over_many_seeds(n):
    """Same distribution both sides: the rate of p <= alpha is the exact tail (at most alpha), within 3 sd."""
    rng = np.random.default_rng(n)
    hits = sum(stats.rank_p(rng.normal(0, 1, n), rng.normal(0, 1, n)) <= stats.ALPHA for _ in range(SEEDS))
    exact = stats._upper_tail(n, n)[stats.critical_u(n, n)]
    assert exact <= stats.ALPHA
    assert abs(hits / SEEDS - exact) <= 3 * math.sqrt(exact * (1 - exact) / SEEDS) + 1 / SEEDS


@pytest.mark.parametrize("n", [3, 5, 8])
def test_the_interval_covers_the_true_ratio_at_its_stated_level(n):
    rng = np.random.default_rng(10 + n)
    covered = 0
    for _ in range(SEEDS):
        a, b = 2.0 * rng.lognormal(0, 0.2, n), rng.lognormal(0, 0.2, n)
        c = stats.compare(a, b, True)
        covered += c.lo <= 2.0 <= c.hi
    level = stats.interval_level(n, n)
    assert abs(covered / SEEDS - level) <= 3 * math.sqrt(level * (1 - level) / SEEDS) + 1 / SEEDS


def test_a_setting_twice_as_fast_in_every_run_is_better_by_100_percent():
    c = stats.compare([5.0, 5.25, 4.75], [10.0, 10.5, 9.5], higher_is_better=False)
    assert c.ratio == pytest.approx(2.0) and c.gain == pytest.approx(1.0)  # twice the speed: +100%
    assert c.claimed and c.p == pytest.approx(1 / 20) and c.level == pytest.approx(0.9)
    # three against three: the interval spans the extreme pairs
    assert c.lo == pytest.approx(9.5 / 5.25) and c.hi == pytest.approx(10.5 / 4.75)


def test_the_margin_is_applied_to_the_runs_before_the_test():
    a, b = [1.08, 1.09, 1.10], [1.0, 1.0, 1.0]
    assert stats.compare(a, b, True, margin=0.05).claimed
    assert not stats.compare(a, b, True, margin=0.10).claimed, "8-10% better is not 10% better"
    assert stats.compare(a, b, True).margin == pytest.approx(0.05)
    assert stats.effect_margin([1.0, 1.5, 2.0, 2.5], b) == pytest.approx(stats.scatter([1.0, 1.5, 2.0, 2.5]))


def test_with_three_runs_a_side_a_claim_needs_every_run_to_win():
    rng = np.random.default_rng(1)
    for _ in range(200):
        a, b = rng.normal(10, 1, 3), rng.normal(10, 1, 3)
        c = stats.compare(a, b, True, margin=0.0)
        assert c.claimed == (a.min() > b.max())


def test_fewer_than_three_runs_get_no_test():
    assert stats.compare([10.0, 10.0], [1.0, 1.0, 1.0], False).rule == stats.TOO_FEW
    assert stats.compare([], [1.0, 2.0, 3.0], False).rule == stats.TOO_FEW


def test_holm_and_benjamini_hochberg():
    p = [0.01, 0.035, 0.03, 0.5]
    assert stats.holm(p).tolist() == [True, False, False, False]  # 0.01 <= 0.05/4; 0.03 > 0.05/3
    assert stats.benjamini_hochberg(p).tolist() == [True, True, True, False]  # 0.035 <= 3 x 0.05 / 4 (step-up)
    rng = np.random.default_rng(3)
    fwer = np.mean([stats.holm(rng.uniform(size=20)).any() for _ in range(SEEDS)])
    assert fwer <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / SEEDS)


def test_the_median_interval_states_its_true_coverage():
    assert stats.median_interval([3.0, 1.0, 2.0]) == (1.0, 3.0, 0.75)
    lo, hi, level = stats.median_interval(range(10))
    assert (lo, hi) == (1.0, 8.0) and level == pytest.approx(1 - 2 * 11 / 1024)


def _perf(rows):
    return pd.DataFrame([{"app": "a", "mpi": m, "params": p, "run_id": f"{m}{p}{i}", "repetition": i, "wall": v,
                          "value": v, "metric": "time", "unit": "s", "higher_is_better": False}
                         for m, p, vals in rows for i, v in enumerate(vals)])


def test_tuning_table_compares_each_set_with_the_default_of_its_configuration():
    perf = _perf([("openmpi", "default", [10, 10.1, 9.9]), ("openmpi", "alg-3", [5, 5.1, 4.9]),
                  ("openmpi", "alg-4", [20, 20.2, 19.8]), ("openmpi", "alg-5", [9, 11, 10]),
                  ("mpich", "default", [4, 4, 4]), ("mpich", "alg-3", [4, 4.1, 3.9])])
    t = tuning_table(perf, ["app", "mpi", "params"])
    got = {(r.group, r.params): (r.gain_pct, r.verdict) for r in t.itertuples()}
    assert got[("mpi=openmpi", "default")] == (0.0, "default")
    assert got[("mpi=openmpi", "alg-3")] == (pytest.approx(100.0), "better")
    assert got[("mpi=openmpi", "alg-4")] == (pytest.approx(-50.0), "worse")
    assert got[("mpi=openmpi", "alg-5")][1] == "same"
    assert got[("mpi=mpich", "alg-3")][1] == "same"
    row = t[t["params"] == "alg-3"].iloc[0]
    assert row["level"] == pytest.approx(0.9) and row["p"] == pytest.approx(0.05)
    best = best_sets(t)
    assert list(best["params"]) == ["alg-3"] and list(best["group"]) == ["mpi=openmpi"]
    assert best_sets(t, prefix="eager").empty
    assert screen(t, ["alg-3", "alg-4", "alg-5"])["params"] == "alg-3"
    assert screen(t, ["alg-4"]) is None, "screening picks only a set that looks at least 5% better"


def test_confirmation_holds_the_family_and_the_held_out_round_decides():
    """Five runs a side: p = 1/252 passes Holm over three sets; one set that wins only 4 of 5 pairings
    everywhere does not; the held-out row is returned only when it beats the default again."""
    base = [10.0, 10.1, 9.9, 10.05, 9.95]
    perf = _perf([("o", "default", base), ("o", "fast", [5, 5.1, 4.9, 5.05, 4.95]),
                  ("o", "same", [10.0, 10.1, 9.9, 10.05, 9.95]), ("o", "slow", [20, 20, 20, 20, 20])])
    t = tuning_table(perf, ["app", "mpi", "params"])
    assert list(confirm(t)["params"]) == ["fast"]
    assert held_out(t, "fast")["gain_pct"] == pytest.approx(100.0)
    assert held_out(t, "same") is None and held_out(t, "absent") is None


def test_no_default_no_table():
    assert tuning_table(_perf([("openmpi", "fast", [1, 1, 1])]), ["app", "mpi", "params"]).empty


def test_a_study_with_only_the_default_set_has_no_tuning_table():
    assert tuning_table(_perf([("openmpi", "default", [1, 1, 1])]), ["app", "mpi", "params"]).empty
