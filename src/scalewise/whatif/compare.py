"""Measured and predicted side by side: the tables `scalewise whatif` prints and draws.

A column per source: ``measured`` (the job log recorded with the trace, when
there is one) and one per network replayed.  Times are seconds; the MPI
share is MPI time over the time every rank spent, as the profile reports it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from scalewise.errors import ScalewiseError
from scalewise.model import Profile
from scalewise.whatif.api import Prediction

SECONDS_PER_DAY = 86400.0
MEASURED = "measured"


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


def _row(wall: float, compute: float, mpi: float) -> dict[str, float]:
    spent = compute + mpi
    return {"wall_time": wall, "jobs_per_day": SECONDS_PER_DAY / wall if wall > 0 else float("inf"),
            "mpi_share": mpi / spent if spent else 0.0, "compute": compute, "mpi": mpi}


def _measured(profile: Profile) -> tuple[dict[str, float], pd.Series, pd.DataFrame]:
    r = profile.ranks
    # The measured window runs from MPI_Init's return to MPI_Finalize: those two calls are outside it.
    f = profile.functions[~profile.functions["function"].isin(("MPI_Init", "MPI_Init_thread", "MPI_Finalize"))]
    per_func = f.groupby("function")["time"].sum()
    ranks = pd.DataFrame({"rank": r["rank"].astype(int), "compute": r["wall"] - r["mpi_time"], "mpi": r["mpi_time"]})
    return _row(float(r["wall"].max()), float(ranks["compute"].sum()), float(ranks["mpi"].sum())), per_func, ranks


def measured_compute_scale(measured: Profile, predicted: Prediction) -> np.ndarray:
    """Per rank, the measured run's compute over the trace's: the factors that replay the trace with the
    measured run's compute (a rank the trace shows no compute for keeps 1)."""
    _, _, mr = _measured(measured)
    mine = predicted.ranks["compute"].to_numpy()
    if len(mr) != len(mine):
        raise ScalewiseError(f"measured run: {len(mr)} ranks, the trace {len(mine)}; compare runs of one job size")
    theirs = mr.set_index("rank")["compute"].reindex(range(len(mine))).fillna(0).to_numpy()
    return np.where(mine > 0, theirs / np.where(mine > 0, mine, 1), 1.0)


def compare(predictions: list[Prediction], measured: Profile | None = None, capped: bool = False,
            same_compute: list[Prediction] | None = None) -> WhatIf:
    """The side-by-side tables of ``predictions`` (one trace, several networks) and the measured run;
    ``same_compute``: the same replays with the measured run's compute (measured_compute_scale)."""
    names = [p.network for p in predictions]
    twice = sorted({n for n in names if names.count(n) > 1 or n == MEASURED})
    if twice:
        raise ScalewiseError(f"two sources named {', '.join(repr(n) for n in twice)}: give each network its own name")
    rows, funcs, ranks = {}, {}, []
    if measured is not None:
        rows[MEASURED], funcs[MEASURED], mr = _measured(measured)
        ranks.append(mr.assign(source=MEASURED))
    for p in predictions:
        rows[p.network] = _row(p.wall_time, float(p.ranks["compute"].sum()), float(p.ranks["mpi"].sum()))
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
        rescaled = pd.DataFrame.from_dict({p.network: _row(p.wall_time, float(p.ranks["compute"].sum()),
                                                           float(p.ranks["mpi"].sum())) for p in same_compute},
                                          orient="index")
    return WhatIf(library, summary, functions, pd.concat(ranks, ignore_index=True), capped, rescaled)


def against_measured(w: WhatIf) -> pd.DataFrame:
    """Per network: predicted wall time over the measured run's, less 1, and the MPI share's
    difference (points).  A change, not an error: it is the prediction's error only for the
    network the run was measured on (the accuracy benches compare exactly that).

    ``compute_change`` is the traced run's compute over the measured run's, less 1: the replay
    keeps the trace's compute, so a run recorded in a slow spell of the machine is predicted slow
    whatever the network; this column tells that part of an error from the network model's.
    When the measured run is another run, ``wall_change_same_compute`` and
    ``mpi_share_points_same_compute`` are the same changes for the replay given each rank's measured
    compute: what is left is the network model's part alone."""
    columns = ["wall_change", "mpi_share_points", "compute_change"]
    if w.same_compute is not None:
        columns += ["wall_change_same_compute", "mpi_share_points_same_compute"]
    if MEASURED not in w.summary.index:
        return pd.DataFrame(columns=columns)
    m = w.summary.loc[MEASURED]
    s = w.summary.drop(index=MEASURED)
    out = pd.DataFrame({"wall_change": s["wall_time"] / m["wall_time"] - 1,
                        "mpi_share_points": (s["mpi_share"] - m["mpi_share"]) * 100,
                        "compute_change": s["compute"] / m["compute"] - 1 if m["compute"] else 0.0})
    if w.same_compute is not None:
        r = w.same_compute.reindex(s.index)
        out["wall_change_same_compute"] = r["wall_time"] / m["wall_time"] - 1
        out["mpi_share_points_same_compute"] = (r["mpi_share"] - m["mpi_share"]) * 100
    return out
