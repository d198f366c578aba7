"""Profiles for report tests: a 2-D halo exchange with known numbers, and the awkward cases.

A module of its own, not conftest.py: several test folders have a conftest,
so "from conftest import ..." would be ambiguous."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from scalewise.model.mpit import PVAR_COLUMNS, MpitInfo
from scalewise.model.profile import BIN_COLUMNS, PHASE_COLUMNS, PHASE_FUNCTION_COLUMNS, Profile
from support.profiles import build_profile, torus_p2p

HALO_BYTES = 64 * 1024  # one halo face
STEPS = 100
# Time bins of the halo run: each rank's MPI time spread over 8 equal bins by these weights.
BIN_WEIGHTS = np.array([0.0, 0.0, 0.1, 0.2, 0.2, 0.2, 0.2, 0.1])


def halo_timeline(ranks: pd.DataFrame, functions: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Bins as BIN_WEIGHTS say; the Allreduce outside phases, the rest in phase "exchange"."""
    nb = len(BIN_WEIGHTS)
    width = float(ranks["wall"].max()) / nb
    bins = [(r.rank, k, k * width, width, r.mpi_time * w, r.wall / nb - r.mpi_time * w)
            for r in ranks.itertuples() for k, w in enumerate(BIN_WEIGHTS)]
    f = functions.assign(phase=np.where(functions["function"] == "MPI_Allreduce", "(outside phases)", "exchange"))
    mpi = f.groupby(["rank", "phase"])["time"].sum()
    phases = [(r.rank, ph, order, r.wall * share, mpi[(r.rank, ph)], r.wall * share - mpi[(r.rank, ph)])
              for r in ranks.itertuples() for order, (ph, share) in enumerate((("(outside phases)", 0.1),
                                                                             ("exchange", 0.9)))]
    return {"bins": pd.DataFrame(bins, columns=BIN_COLUMNS), "phases": pd.DataFrame(phases, columns=PHASE_COLUMNS),
            "phase_functions": f[PHASE_FUNCTION_COLUMNS].reset_index(drop=True)}


def halo_profile(px: int, py: int, command=None, flags=(), drop_ranks=0) -> Profile:
    """A px x py periodic 2-D halo exchange: Isend/Irecv to 4 neighbours, Waitall, one Allreduce per step.

    Rank r computes 10 + r % 3 seconds, so compute is imbalanced by a known amount.
    """
    n = px * py
    r = np.arange(n)
    compute = 10.0 + (r % 3)
    waitall = 2.0 + 0.5 * (r % 3 == 0)
    allreduce = np.full(n, 0.5)
    isend = np.full(n, 0.1)
    mpi = waitall + allreduce + isend
    ranks = pd.DataFrame({"rank": r, "host": [f"node{k // 16:03d}" for k in r], "pid": 4000 + r,
                          "wall": compute + mpi, "mpi_time": mpi, "compute_time": compute, "maxrss": 1 << 28})
    functions = pd.concat([pd.DataFrame({"rank": r, "function": fn, "fclass": fc, "calls": calls, "time": time,
                                         "bytes": nbytes}) for fn, fc, calls, time, nbytes in [
        ("MPI_Waitall", "wait", STEPS, waitall, 8 * STEPS * HALO_BYTES),
        ("MPI_Isend", "p2p", 4 * STEPS, isend, 4 * STEPS * HALO_BYTES),
        ("MPI_Irecv", "p2p", 4 * STEPS, np.zeros(n), 0),
        ("MPI_Allreduce", "collective", STEPS, allreduce, 8 * STEPS),
    ]], ignore_index=True)
    big, small = HALO_BYTES.bit_length(), (8).bit_length()
    hist = pd.concat([
        pd.DataFrame({"rank": r, "function": "MPI_Isend", "bin": big, "count": 4 * STEPS}),
        pd.DataFrame({"rank": r, "function": "MPI_Waitall", "bin": big, "count": 8 * STEPS}),
        pd.DataFrame({"rank": r, "function": "MPI_Allreduce", "bin": small, "count": STEPS}),
    ], ignore_index=True)
    p2p = torus_p2p(px, py, STEPS, STEPS * HALO_BYTES)
    if drop_ranks:
        keep = r[: n - drop_ranks]
        ranks = ranks[ranks["rank"].isin(keep)]
        functions = functions[functions["rank"].isin(keep)]
        hist = hist[hist["rank"].isin(keep)]
        p2p = p2p[p2p["src"].isin(keep)]
    meta = {"nranks": n, "command": command or ["./halo2d", "--steps", str(STEPS)],
            "mpi_library": "Open MPI v4.1.4", "start_time": 1_700_000_000.0, "end_time": 1_700_000_013.0,
            "hosts": sorted(set(ranks["host"])), "format": "1.0"}
    profile = build_profile(ranks, functions, hist, p2p, meta, flags)
    return replace(profile, **halo_timeline(profile.ranks, profile.functions))


def zero_call_profile() -> Profile:
    ranks = pd.DataFrame({"rank": [0, 1], "host": ["node000"] * 2, "pid": [1, 2], "wall": [5.0, 5.0],
                          "mpi_time": [0.0, 0.0], "compute_time": [5.0, 5.0], "maxrss": [1, 1]})
    return build_profile(ranks, meta={"nranks": 2, "command": ["./serial_work"]})


def with_mpit(profile: Profile, status: str = "read") -> Profile:
    """``profile`` with MPI_T readings of known values on every rank: an
    unexpected-queue length per peer (rank r holds r messages from peer 0),
    a high-water mark (rank r: 2r on one element, 1 on the other) and a
    counter at zero everywhere; two control variables, one with markup."""
    rows = []
    for r in profile.ranks["rank"]:
        r = int(r)
        rows += [(r, "queue_length", "size", "comm_world", r, (r, 0)),
                 (r, "queue_highwater", "highwatermark", "none", max(2 * r, 1), (2 * r, 1)),
                 (r, "idle_counter", "counter", "none", 0, (0,))]
    pvars = pd.DataFrame(rows, columns=PVAR_COLUMNS) if status == "read" else pd.DataFrame(columns=PVAR_COLUMNS)
    info = MpitInfo(status=status, cvars={"btl": "self,vader", "tag": "<b>bold</b>"} if status == "read" else {},
                    descriptions={"queue_length": "Messages waiting <unmatched>", "queue_highwater": "Most waiting"})
    return replace(profile, pvars=pvars, mpit=info)
