"""plainsum.py adds as numpy and pandas add, bit for bit, over drawn values:
the lean summary's numbers depend on it (report/run/lean.py)."""

from __future__ import annotations

import random

import numpy as np
import pandas as pd

from scalewise.analysis.run.plainsum import group_means, group_sums, median, nanmean, np_mean, np_std, np_sum, percentile


def _values(rng: random.Random, n: int) -> list[float]:
    return [rng.random() * 10 ** rng.randint(-6, 6) for _ in range(n)]


def test_np_sum_mean_std_percentile_match_numpy_bit_for_bit():
    rng = random.Random(20261127)
    for n in [*range(1, 140), 255, 256, 257, 1000, 4099]:
        v = _values(rng, n)
        a = np.array(v)
        assert np_sum(v) == float(a.sum()), n
        assert np_mean(v) == float(a.mean()), n
        assert np_std(v) == float(a.std()), n
        assert percentile(v, 50) == float(np.percentile(a, 50)), n
        assert median(v) == float(np.median(a)) == float(pd.Series(v).median()), n
        assert np_sum(v) == float(pd.Series(v).sum()), n
    # Summing in another order does differ in the last bits: the test could tell a wrong order apart.
    assert any(np_sum(v) != sum(v) for v in (_values(rng, 50) for _ in range(100)))


def test_nanmean_matches_pandas_with_missing_values():
    rng = random.Random(7)
    for _ in range(500):
        v = [x if rng.random() > 0.3 else float("nan") for x in _values(rng, rng.randint(1, 12))]
        want = pd.Series(v).mean()
        got = nanmean(v)
        assert (got == want) or (got != got and want != want), v


def test_group_sums_and_means_match_pandas_in_sorted_runs_and_interleaved():
    rng = random.Random(11)
    mismatch_naive = 0
    for trial in range(1500):
        n = rng.randint(1, 14)
        keys = [rng.choice("abcd") for _ in range(n)]
        if trial % 2:
            keys.sort()  # sorted runs: pandas adds them with np.add.reduceat
        v = _values(rng, n)
        for sort in (True, False):
            df = pd.DataFrame({"k": keys, "v": v})
            want_sum = df.groupby("k", sort=sort)["v"].sum()
            want_mean = df.groupby("k", sort=sort)["v"].mean()
            got_sum, got_mean = group_sums(keys, v, sort), group_means(keys, v, sort)
            assert list(got_sum) == list(want_sum.index)
            assert list(got_sum.values()) == want_sum.tolist(), (keys, v, sort)
            assert list(got_mean.values()) == want_mean.tolist(), (keys, v, sort)
            mismatch_naive += any(sum(x for k2, x in zip(keys, v) if k2 == k) != s for k, s in got_sum.items())
    assert mismatch_naive > 0  # a plain left-to-right sum would not have done


def test_group_sums_over_two_keys_match_pandas():
    rng = random.Random(3)
    for _ in range(500):
        n = rng.randint(1, 12)
        keys = [(rng.choice("xy"), rng.choice("fgh")) for _ in range(n)]
        v = _values(rng, n)
        df = pd.DataFrame({"a": [k[0] for k in keys], "b": [k[1] for k in keys], "v": v})
        want = df.groupby(["a", "b"])["v"].sum()
        got = group_sums(keys, v)
        assert list(got) == list(want.index) and list(got.values()) == want.tolist()
