"""Measured and predicted side by side as pandas frames: what the what-if page draws, and the
library's comparison (the numbers `scalewise whatif` prints come from the same rows, results.py).

A column per source: ``measured`` (the job log recorded with the trace, when
there is one) and one per network replayed.  Times are seconds; the MPI
share is MPI time over the time every rank spent, as the profile reports it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from scalewise.model import Profile
from scalewise.whatif.api import Prediction
from scalewise.whatif.results import (CHANGE_COLUMNS, MEASURED, OUTSIDE_WINDOW, SAME_COMPUTE_COLUMNS, changes, compute_scale,
                                       distinct_sources, source_row)


@dataclass(frozen=True)
class WhatIf:
    """``summary``: one row per source (wall_time, jobs_per_day, mpi_share, compute, mpi);
    ``functions``: MPI function x source, seconds summed over ranks;
    ``ranks``: per (source, rank) compute and mpi seconds;
    ``same_compute``: as ``summary``, one row per network, for the replay with each rank's compute set to
    the measured run's (None unless the measured run is another run than the traced one)."""

    library: str
    summary: pd.DataFrame
    functions: pd.DataFrame
    ranks: pd.DataFrame
    capped: bool = False
    same_compute: pd.DataFrame | None = None

    @property
    def networks(self) -> list[str]:
        return [s for s in self.summary.index if s != MEASURED]


def _measured(profile: Profile) -> tuple[dict[str, float], pd.Series, pd.DataFrame]:
    r = profile.ranks
    f = profile.functions[~profile.functions["function"].isin(OUTSIDE_WINDOW)]
    per_func = f.groupby("function")["time"].sum()
    ranks = pd.DataFrame({"rank": r["rank"].astype(int), "compute": r["wall"] - r["mpi_time"], "mpi": r["mpi_time"]})
    return source_row(float(r["wall"].max()), float(ranks["compute"].sum()), float(ranks["mpi"].sum())), per_func, ranks


def measured_compute_scale(measured: Profile, predicted: Prediction) -> np.ndarray:
    """Per rank, the measured run's compute over the trace's: the factors that replay the trace with the
    measured run's compute (a rank the trace shows no compute for keeps 1)."""
    _, _, mr = _measured(measured)
    return compute_scale(mr["rank"].tolist(), mr["compute"].tolist(), predicted.compute)


def compare(predictions: list[Prediction], measured: Profile | None = None, capped: bool = False,
            same_compute: list[Prediction] | None = None) -> WhatIf:
    """The side-by-side tables of ``predictions`` (one trace, several networks) and the measured run;
    ``same_compute``: the same replays with the measured run's compute (measured_compute_scale)."""
    distinct_sources([p.network for p in predictions])
    rows, funcs, ranks = {}, {}, []
    if measured is not None:
        rows[MEASURED], funcs[MEASURED], mr = _measured(measured)
        ranks.append(mr.assign(source=MEASURED))
    for p in predictions:
        rows[p.network] = source_row(p.wall_time, p.compute_total, p.mpi_total)
        funcs[p.network] = p.functions.sum()
        ranks.append(pd.DataFrame({"rank": p.ranks.index.astype(int), "compute": p.ranks["compute"].to_numpy(),
                                   "mpi": p.ranks["mpi"].to_numpy(), "source": p.network}))
    summary = pd.DataFrame.from_dict(rows, orient="index")
    summary.index.name = "source"
    functions = pd.DataFrame(funcs).fillna(0.0)
    functions = functions[(functions > 0).any(axis=1)]
    functions = functions.loc[functions.max(axis=1).sort_values(ascending=False).index]
    functions.index.name = "function"
    library = predictions[0].library if predictions else ""
    rescaled = None
    if same_compute:
        rescaled = pd.DataFrame.from_dict({p.network: source_row(p.wall_time, p.compute_total, p.mpi_total)
                                           for p in same_compute}, orient="index")
    return WhatIf(library, summary, functions, pd.concat(ranks, ignore_index=True), capped, rescaled)


def against_measured(w: WhatIf) -> pd.DataFrame:
    """Per network, the changes against the measured run (results.changes) as a frame."""
    columns = CHANGE_COLUMNS + (SAME_COMPUTE_COLUMNS if w.same_compute is not None else [])
    same = None if w.same_compute is None else w.same_compute.to_dict("index")
    rows = changes(w.summary.to_dict("index"), same)
    if not rows:
        return pd.DataFrame(columns=columns)
    out = pd.DataFrame.from_dict(rows, orient="index", columns=columns)
    out.index.name = "source"
    return out
