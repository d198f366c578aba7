"""Point-to-point communication matrix and neighbourhood measures (figure P5).

The log holds one row per (src, dst) pair in MPI_COMM_WORLD ranks.  Up to
``max_cells`` ranks the matrix is exact; beyond that ranks are grouped into
equal consecutive blocks so the heatmap stays a few hundred cells wide (a
16,384-rank job becomes 256 x 256 blocks of 64 ranks).

Neighbourhood measures describe the pattern independently of the picture:
how many distinct peers each rank talks to, what share of the traffic stays
within +-k ranks, and which rank offsets carry the most bytes: a 2-D halo
exchange on a 64-wide grid shows up as offsets +-1 and +-64.  Offsets wrap
around the world (dst - src taken modulo P into -P/2 .. P/2), so a periodic
ring's partner 0 <-> P-1 is offset -1, not P-1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from scalewise.analysis.run.breakdown import Spread, spread
from scalewise.model.profile import Profile

DEFAULT_MAX_CELLS = 256


@dataclass(frozen=True)
class CommMatrix:
    """Sender x receiver totals, exact or block-aggregated."""

    nranks: int
    block: int  # ranks per cell along each axis; 1 = exact
    bytes: np.ndarray  # [ncells, ncells], row = sender block, column = receiver block
    messages: np.ndarray
    total_bytes: int
    total_messages: int
    pairs: int  # (src, dst) pairs with traffic

    @property
    def ncells(self) -> int:
        return self.bytes.shape[0]

    @property
    def aggregated(self) -> bool:
        return self.block > 1

    def cell_ranks(self, cell: int) -> tuple[int, int]:
        """First and last world rank in cell ``cell``."""
        first = cell * self.block
        return first, min(first + self.block, self.nranks) - 1


def world_size(profile: Profile) -> int:
    """World size: the job's nranks, widened if the rank table or the matrix names a higher rank."""
    n = profile.nranks
    if not profile.ranks.empty:
        n = max(n, int(profile.ranks["rank"].max()) + 1)
    if not profile.p2p.empty:
        n = max(n, int(max(profile.p2p["src"].max(), profile.p2p["dst"].max())) + 1)
    return max(n, 1)


def comm_matrix(profile: Profile, max_cells: int = DEFAULT_MAX_CELLS) -> CommMatrix:
    """The p2p matrix, aggregated into blocks when the job has more than ``max_cells`` ranks."""
    n = world_size(profile)
    block = 1 if n <= max_cells else math.ceil(n / max_cells)
    ncells = math.ceil(n / block)
    p = profile.p2p
    src = p["src"].to_numpy(dtype=np.int64) // block
    dst = p["dst"].to_numpy(dtype=np.int64) // block
    flat = src * ncells + dst
    nbytes = np.bincount(flat, weights=p["bytes"].to_numpy(dtype=float), minlength=ncells * ncells)
    nmsgs = np.bincount(flat, weights=p["messages"].to_numpy(dtype=float), minlength=ncells * ncells)
    return CommMatrix(
        nranks=n,
        block=block,
        bytes=nbytes.reshape(ncells, ncells),
        messages=nmsgs.reshape(ncells, ncells),
        total_bytes=int(p["bytes"].sum()),
        total_messages=int(p["messages"].sum()),
        pairs=len(p),
    )


@dataclass(frozen=True)
class Neighbourhood:
    """How local the point-to-point traffic is."""

    peers_per_rank: pd.DataFrame  # rank, peers (distinct partners either direction, self excluded), sends_to
    peers: Spread
    within: pd.DataFrame  # k, bytes_share, messages_share (0..1): traffic with |wrapped offset| <= k
    top_offsets: pd.DataFrame  # offset (wrapped dst - src), bytes, messages, bytes_share; most bytes first
    self_bytes_share: float  # traffic a rank sends to itself, 0..1
    total_bytes: int
    total_messages: int

    @property
    def empty(self) -> bool:
        return self.total_messages == 0 and self.total_bytes == 0


def _distances(n: int) -> list[int]:
    """k = 1, 2, 4, ... up to the first power of two covering every wrapped distance (n // 2) in an n-rank job."""
    ks = [1]
    while ks[-1] < n // 2:
        ks.append(ks[-1] * 2)
    return ks


def wrapped_offsets(src: np.ndarray, dst: np.ndarray, n: int) -> np.ndarray:
    """dst - src modulo n, into -n/2 .. n/2 (the shorter way round the ring of ranks)."""
    return (dst - src + n // 2) % n - n // 2 if n > 0 else dst - src


def _distinct(keys: np.ndarray) -> np.ndarray:
    """The distinct values of ``keys``, by sorting (np.unique's hashing took seconds for millions of pairs)."""
    s = np.sort(keys)
    return s[np.concatenate([[True], s[1:] != s[:-1]])] if len(s) else s


def neighbourhood(profile: Profile, top: int = 8) -> Neighbourhood:
    """Peers per rank, share of traffic within +-k ranks, and the busiest rank offsets."""
    p = profile.p2p
    n = world_size(profile)
    ranks = profile.ranks["rank"].astype(np.int64).sort_values().to_numpy()
    src = p["src"].to_numpy(dtype=np.int64)
    dst = p["dst"].to_numpy(dtype=np.int64)
    nbytes = p["bytes"].to_numpy(dtype=float)
    nmsgs = p["messages"].to_numpy(dtype=float)

    # Distinct partners in either direction: a rank that only receives from a
    # neighbour still depends on it.
    other = src != dst
    pairs = _distinct(np.concatenate([src[other] * n + dst[other], dst[other] * n + src[other]]))
    peer_counts = np.bincount(pairs // n, minlength=n)
    send_pairs = _distinct(src[other] * n + dst[other])
    sends_to = np.bincount(send_pairs // n, minlength=n)
    per_rank = pd.DataFrame({"rank": ranks, "peers": peer_counts[ranks], "sends_to": sends_to[ranks]})

    total_b, total_m = float(nbytes.sum()), float(nmsgs.sum())
    offset = wrapped_offsets(src, dst, n)
    dist = np.abs(offset)
    within_rows = []
    for k in _distances(n):
        near = dist <= k
        within_rows.append({
            "k": k,
            "bytes_share": float(nbytes[near].sum() / total_b) if total_b > 0 else float("nan"),
            "messages_share": float(nmsgs[near].sum() / total_m) if total_m > 0 else float("nan"),
        })

    offsets = pd.DataFrame({"offset": offset, "bytes": nbytes, "messages": nmsgs})
    offsets = offsets[offsets["offset"] != 0].groupby("offset", as_index=False)[["bytes", "messages"]].sum()
    offsets = offsets.sort_values(["bytes", "messages", "offset"], ascending=[False, False, True], kind="stable").head(top)
    offsets["bytes_share"] = offsets["bytes"] / total_b if total_b > 0 else float("nan")
    offsets = offsets.astype({"bytes": np.int64, "messages": np.int64}).reset_index(drop=True)

    return Neighbourhood(
        peers_per_rank=per_rank,
        peers=spread(per_rank["peers"].astype(float), per_rank["rank"]),
        within=pd.DataFrame(within_rows, columns=["k", "bytes_share", "messages_share"]),
        top_offsets=offsets,
        self_bytes_share=float(nbytes[~other].sum() / total_b) if total_b > 0 else 0.0,
        total_bytes=int(total_b),
        total_messages=int(total_m),
    )
