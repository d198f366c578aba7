"""Data transferred per rank and in total (figure P6).

What counts as "data a rank transferred":

* point-to-point: the bytes it sent, from the p2p matrix (row sums), so each
  message is counted once, at its sender.  Bytes received (column sums) are
  reported beside it but not added, or every message would count twice in the
  job total;
* collective and one-sided (rma): the payload of each call as the runtime's
  byte rule defines it (count x datatype size of the calling rank);
* file I/O is reported separately: it is not traffic between ranks.

Wait/Test rows are left out on purpose: their bytes repeat those of the
Isend/Irecv they complete (see ``scalewise.analysis.run.sizes``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from scalewise.analysis.run.breakdown import Spread, spread
from scalewise.analysis.run.distribution import RankDistribution, rank_distribution
from scalewise.model.profile import Profile


@dataclass(frozen=True)
class DataVolume:
    """P6: bytes per rank and over the whole job."""

    per_rank: pd.DataFrame  # rank, p2p_sent, p2p_recv, collective, rma, io, total; ordered by rank
    sorted_by_total: pd.DataFrame  # the same rows ordered by total (ascending), position in `order`
    total: int  # sum of per-rank totals: bytes put on the wire by the whole job
    p2p_total: int
    collective_total: int
    rma_total: int
    io_total: int
    per_rank_total: Spread
    total_distribution: RankDistribution  # of total, with the bytes of each kind of the named ranks


def _class_bytes(profile: Profile, fclass: str, ranks: np.ndarray) -> np.ndarray:
    f = profile.functions
    if f.empty:
        return np.zeros(len(ranks), dtype=np.int64)
    part = f[f["fclass"] == fclass].groupby("rank")["bytes"].sum()
    return part.reindex(ranks, fill_value=0).to_numpy(dtype=np.int64)


def data_volume(profile: Profile) -> DataVolume:
    """Bytes transferred by each rank present, split by kind, and the job totals."""
    ranks = profile.ranks["rank"].astype(np.int64).sort_values().to_numpy()
    p = profile.p2p
    sent = p.groupby("src")["bytes"].sum().reindex(ranks, fill_value=0).to_numpy(dtype=np.int64)
    recv = p.groupby("dst")["bytes"].sum().reindex(ranks, fill_value=0).to_numpy(dtype=np.int64)
    per_rank = pd.DataFrame({
        "rank": ranks,
        "p2p_sent": sent,
        "p2p_recv": recv,
        "collective": _class_bytes(profile, "collective", ranks),
        "rma": _class_bytes(profile, "rma", ranks),
        "io": _class_bytes(profile, "io", ranks),
    })
    per_rank["total"] = per_rank["p2p_sent"] + per_rank["collective"] + per_rank["rma"]
    ordered = per_rank.sort_values(["total", "rank"], kind="stable").reset_index(drop=True)
    ordered.insert(0, "order", np.arange(len(ordered)))
    return DataVolume(
        per_rank=per_rank,
        sorted_by_total=ordered,
        total=int(per_rank["total"].sum()),
        p2p_total=int(per_rank["p2p_sent"].sum()),
        collective_total=int(per_rank["collective"].sum()),
        rma_total=int(per_rank["rma"].sum()),
        io_total=int(per_rank["io"].sum()),
        per_rank_total=spread(per_rank["total"].astype(float), per_rank["rank"]),
        total_distribution=rank_distribution(ordered, "total", ["p2p_sent", "collective", "rma"]),
    )
