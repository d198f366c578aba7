"""Profiles built from literal rows, so every expected answer can be worked out by hand."""

from __future__ import annotations

import pandas as pd
import pytest

from scalewise.model.profile import FUNCTION_COLUMNS, HIST_COLUMNS, P2P_COLUMNS, RANK_COLUMNS, Profile, bin_bounds


def build_profile(ranks, functions=(), hist=(), p2p=(), meta=None, flags=(), path=None) -> Profile:
    """ranks: (rank, wall, mpi_time) tuples; functions: (rank, function, fclass, calls, time, bytes);
    hist: (rank, function, bin, count); p2p: (src, dst, messages, bytes)."""
    r = pd.DataFrame([{
        "rank": k, "host": f"node{k // 4}", "pid": 1000 + k, "wall": w, "mpi_time": m,
        "compute_time": w - m, "maxrss": 1 << 20, "nthreads": 1, "partial": False,
    } for k, w, m in ranks], columns=RANK_COLUMNS)
    f = pd.DataFrame([{
        "rank": k, "function": fn, "fclass": fc, "calls": c, "time": t,
        "tmin": t / max(c, 1), "tmax": t / max(c, 1), "bytes": b,
    } for k, fn, fc, c, t, b in functions], columns=FUNCTION_COLUMNS)
    h = pd.DataFrame([{
        "rank": k, "function": fn, "bin": b, "lo": bin_bounds(b)[0], "hi": bin_bounds(b)[1], "count": c,
    } for k, fn, b, c in hist], columns=HIST_COLUMNS)
    p = pd.DataFrame(list(p2p), columns=P2P_COLUMNS)
    meta = {"nranks": len(ranks), "command": ["./app"], **(meta or {})}
    return Profile(meta, r, f, h, p, path=path, flags=frozenset(flags))


@pytest.fixture
def make_profile():
    return build_profile
