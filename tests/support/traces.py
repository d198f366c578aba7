"""Synthetic traces of a stencil code: every iteration computes (with a
per-rank imbalance), exchanges halos with four neighbours (Irecv, Isend,
Waitall) and ends in a small Allreduce.  Used by bench/bench_replay.py and the
tests; built column-wise so that 16,384 ranks take seconds."""

from __future__ import annotations

import numpy as np

from scalewise.whatif.trace import COLUMNS, Kind, RankEvents, Trace

FUNCTIONS = ["MPI_Irecv", "MPI_Isend", "MPI_Waitall", "MPI_Allreduce"]


def neighbours(rank: int, P: int) -> list[int]:
    """Left/right and up/down on a 2-D torus of width ~sqrt(P) (ranks may repeat for tiny P)."""
    width = max(1, int(round(P ** 0.5)))
    return [(rank - 1) % P, (rank + 1) % P, (rank - width) % P, (rank + width) % P]


def halo_allreduce(P: int, iterations: int, halo_bytes: int = 32768, compute: float = 1e-3,
                   imbalance: float = 0.2, jitter: float = 0.0, seed: int = 0) -> Trace:
    """The trace of ``iterations`` steps on P ranks (10 events per rank and step).

    ``jitter`` > 0 makes it look measured: each step's compute varies by up
    to that fraction and 0-2 us pass between consecutive calls."""
    rng = np.random.default_rng(seed)
    ranks = []
    for r in range(P):
        nb = neighbours(r, P)
        # receive from the opposite neighbour of the one each send goes to, same tag per direction
        recv_from, send_to = [nb[1], nb[0], nb[3], nb[2]], nb
        step = {
            "kind": [Kind.IRECV] * 4 + [Kind.ISEND] * 4 + [Kind.WAIT, Kind.COLLECTIVE],
            "func": [0] * 4 + [1] * 4 + [2, 3],
            "peer": recv_from + send_to + [-1, -1],
            "bytes": [halo_bytes] * 8 + [0, 8],
            "tag": [0, 1, 2, 3, 0, 1, 2, 3, 0, 0],
            "comm": [0] * 10,
            "req": list(range(8)) + [-1, -1],
            "root": [-1] * 10,
            "flags": [0] * 10,
            "nreq": [0] * 8 + [8, 0],
            "compute": [compute * (1 + imbalance * (r % 7) / 6)] + [0.0] * 9,
        }
        cols = {k: np.tile(np.asarray(step[k], dtype=t), iterations) for k, t in COLUMNS.items()}
        it = np.repeat(np.arange(iterations, dtype=np.int64), 10)
        cols["req"] = np.where(cols["req"] >= 0, cols["req"] + 8 * it, -1)
        if jitter:
            cols["compute"] *= 1 + jitter * rng.uniform(-1, 1, len(it))
            cols["compute"] += np.where(cols["compute"] == 0, rng.uniform(0, 2e-6, len(it)), 0)
        cols["compute"] = np.rint(cols["compute"] * 1e9) * 1e-9  # as a trace file gives it back
        waits = (np.arange(8, dtype=np.int64)[None, :] + 8 * np.arange(iterations)[:, None]).ravel()
        ranks.append(RankEvents(cols, waits))
    return Trace(list(FUNCTIONS), ranks)
