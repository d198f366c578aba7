"""The synthetic traces of the tests and bench/bench_whatif.py: a stencil code
(every iteration computes with a per-rank imbalance, exchanges halos with
four neighbours with Irecv, Isend and Waitall, and ends in a small Allreduce;
built column-wise so that 16,384 ranks take seconds), and random but matched
traffic."""

from __future__ import annotations

import random

import numpy as np

from scalewise import whatif
from scalewise.whatif.trace import COLUMNS, Call, Kind, RankEvents, Trace

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


def random_trace(seed: int, P: int):
    """Matched random traffic: rounds of random pairs doing blocking or
    non-blocking exchanges of random sizes, with random compute, plus collectives."""
    rnd = random.Random(seed)
    ranks = [[] for _ in range(P)]
    req = [0] * P
    for _ in range(rnd.randint(3, 8)):
        order = list(range(P))
        rnd.shuffle(order)
        for a, b in zip(order[::2], order[1::2]):
            n = rnd.choice([0, 8, 900, 5000, 70000])
            if rnd.random() < 0.5:
                ranks[a] += [Call("MPI_Send", b, n, tag=3, compute=rnd.random() * 1e-4)]
                ranks[b] += [Call("MPI_Recv", a, n, tag=3, compute=rnd.random() * 1e-4)]
            else:
                for x, y in ((a, b), (b, a)):
                    ranks[x] += [Call("MPI_Irecv", y, n, req=req[x], compute=rnd.random() * 1e-4),
                                 Call("MPI_Isend", y, n, req=req[x] + 1),
                                 Call("MPI_Waitall", reqs=(req[x], req[x] + 1), compute=rnd.random() * 1e-5)]
                    req[x] += 2
        if rnd.random() < 0.5:
            func = rnd.choice(["MPI_Allreduce", "MPI_Bcast", "MPI_Alltoall", "MPI_Barrier", "MPI_Gather"])
            n = rnd.choice([8, 3000, 200_000])
            for r in range(P):
                ranks[r].append(Call(func, bytes=n, root=0, compute=rnd.random() * 1e-4))
    return whatif.from_calls(ranks)
