"""Where the MPI time is spent from: the top call sites of one run.

A site is one source line (or, without debug information, one object and
offset) calling one MPI function; the same line on every rank is one site,
since the runtime records each return address as (object, offset)."""

from __future__ import annotations

import pandas as pd

from scalewise.model.profile import Profile

SITE_TABLE_COLUMNS = ["function", "func", "location", "calls", "time", "bytes", "ranks", "pct_mpi"]
TOP_SITES = 20


def site_table(profile: Profile, top: int = TOP_SITES) -> pd.DataFrame:
    """The ``top`` sites by total time over all ranks: calls, time, bytes, how
    many ranks called from there, and the share of the run's MPI time."""
    s = profile.sites
    if s.empty:
        return pd.DataFrame(columns=SITE_TABLE_COLUMNS)
    g = s.groupby(["function", "func", "location"], sort=False)
    out = g.agg(calls=("calls", "sum"), time=("time", "sum"), bytes=("bytes", "sum"), ranks=("rank", "nunique"))
    mpi = float(profile.ranks["mpi_time"].sum())
    out["pct_mpi"] = 100.0 * out["time"] / mpi if mpi > 0 else float("nan")
    out = out.reset_index().sort_values(["time", "calls"], ascending=False, kind="stable").head(top)
    return out[SITE_TABLE_COLUMNS].reset_index(drop=True)
