"""What the MPI library's own counters said about one run: each MPI_T
performance variable read at MPI_Finalize, over the ranks that have it
(docs/mpit.md)."""

from __future__ import annotations

import pandas as pd

from scalewise.model.profile import Profile

PVAR_TABLE_COLUMNS = ["variable", "pclass", "binding", "min", "median", "max", "ranks", "description"]


def pvar_table(profile: Profile) -> pd.DataFrame:
    """One row per variable: its value (its elements as one number, the
    rule in model/mpit.py) as min, median and max over the ranks, how many
    ranks read it, and the library's description.  Variables that are zero
    on every rank come last."""
    p = profile.pvars
    if p.empty:
        return pd.DataFrame(columns=PVAR_TABLE_COLUMNS)
    values = p.assign(value=p["value"].astype(float))
    g = values.groupby("variable", sort=True)
    out = g.agg(pclass=("pclass", "first"), binding=("binding", "first"), min=("value", "min"),
                median=("value", "median"), max=("value", "max"), ranks=("rank", "nunique")).reset_index()
    out["description"] = out["variable"].map(profile.mpit.descriptions).fillna("")
    out["_zero"] = (out["max"] == 0) & (out["min"] == 0)
    out = out.sort_values(["_zero", "variable"], kind="stable").drop(columns="_zero")
    return out[PVAR_TABLE_COLUMNS].reset_index(drop=True)
