"""The one builder of synthetic Profiles (tests and bench/): rows or frames in,
every derived column filled in the way the log reader fills it, so that the
expected answers can be worked out by hand.  The scenarios (a 2-D halo
exchange in tests/report/report_profiles.py, planted studies in
tests/study/study_synth.py, the large stencil below) all go through it."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from scalewise.model.profile import FUNCTION_COLUMNS, HIST_COLUMNS, P2P_COLUMNS, RANK_COLUMNS, Profile, bin_bounds

RANK_ROW = ("rank", "wall", "mpi_time")
FUNCTION_ROW = ("rank", "function", "fclass", "calls", "time", "bytes")
HIST_ROW = ("rank", "function", "bin", "count")


def _frame(rows, columns) -> pd.DataFrame:
    if isinstance(rows, pd.DataFrame):
        return rows.reset_index(drop=True)
    return pd.DataFrame(list(rows), columns=list(columns))


def build_profile(ranks, functions=(), hist=(), p2p=(), meta=None, flags=(), path=None, **timeline) -> Profile:
    """ranks: (rank, wall, mpi_time) rows or a frame with more RANK_COLUMNS (host node<rank // 4>,
    pid 1000 + rank, compute_time wall - mpi_time, 1 MiB maxrss, one thread, not partial unless given);
    functions: (rank, function, fclass, calls, time, bytes) rows or a frame (tmin = tmax = time per call
    unless given); hist: (rank, function, bin, count) rows or a frame (lo, hi: the bin's bounds);
    p2p: (src, dst, messages, bytes); meta: over {"nranks": ranks given, "command": ["./app"]};
    timeline: bins, phases, phase_functions frames."""
    r = _frame(ranks, RANK_ROW)
    defaults = {"host": lambda: [f"node{k // 4}" for k in r["rank"]], "pid": lambda: 1000 + r["rank"],
                "compute_time": lambda: r["wall"] - r["mpi_time"], "maxrss": lambda: 1 << 20,
                "nthreads": lambda: 1, "partial": lambda: False}
    r = r.assign(**{k: make() for k, make in defaults.items() if k not in r})[RANK_COLUMNS]
    f = _frame(functions, FUNCTION_ROW)
    if f.empty:
        f = pd.DataFrame(columns=FUNCTION_COLUMNS)
    else:
        per_call = [t / max(c, 1) for c, t in zip(f["calls"], f["time"])]
        f = f.assign(**{k: per_call for k in ("tmin", "tmax") if k not in f})[FUNCTION_COLUMNS]
    h = _frame(hist, HIST_ROW)
    if h.empty:
        h = pd.DataFrame(columns=HIST_COLUMNS)
    else:
        bounds = [bin_bounds(b) for b in h["bin"]]
        h = h.assign(lo=[lo for lo, _ in bounds], hi=[hi for _, hi in bounds])[HIST_COLUMNS]
    p = _frame(p2p, P2P_COLUMNS)[P2P_COLUMNS]
    meta = {"nranks": len(r), "command": ["./app"], **(meta or {})}
    return Profile(meta, r, f, h, p, path=path, flags=frozenset(flags), **timeline)


def torus_p2p(px: int, py: int, messages, nbytes) -> pd.DataFrame:
    """Every rank of a px x py periodic grid sends ``messages`` of ``nbytes`` in all to each of its four
    neighbours (a neighbour met twice, on a narrow grid, counts twice)."""
    r = np.arange(px * py)
    x, y = r % px, r // px
    nbrs = np.concatenate([((x + 1) % px) + y * px, ((x - 1) % px) + y * px,
                           x + ((y + 1) % py) * px, x + ((y - 1) % py) * px])
    p2p = pd.DataFrame({"src": np.tile(r, 4), "dst": nbrs, "messages": messages, "bytes": nbytes})
    return p2p.groupby(["src", "dst"], as_index=False)[["messages", "bytes"]].sum()[P2P_COLUMNS]


STENCIL_STEPS = 500
STENCIL_FACE = 48 * 1024  # bytes per halo face


def stencil_profile(nranks: int) -> Profile:
    """A large 2-D stencil job (bench/bench_report.py, bench_load.py, fuzz_reader.py): twelve MPI
    functions, imbalanced compute that the Waitall time mirrors, four halo neighbours per rank."""
    steps, face = STENCIL_STEPS, STENCIL_FACE
    px = 2 ** math.ceil(math.log2(nranks) / 2)
    py = nranks // px
    n = px * py
    rng = np.random.default_rng(20240501)
    r = np.arange(n)
    compute = 100.0 + 8.0 * rng.random(n)
    waitall = 108.0 - compute + 20.0 + rng.random(n)  # ranks that compute less wait more
    # name, class, calls per rank, seconds per rank, bytes per rank, {bin: count per rank}
    table = [
        ("MPI_Init", "init", 1, np.full(n, 0.8), 0, {}),
        ("MPI_Comm_rank", "comm", 1, np.full(n, 1e-6), 0, {}),
        ("MPI_Comm_size", "comm", 1, np.full(n, 1e-6), 0, {}),
        ("MPI_Isend", "p2p", 4 * steps, 0.3 + 0.01 * rng.random(n), 4 * steps * face, {face.bit_length(): 4 * steps}),
        ("MPI_Irecv", "p2p", 4 * steps, 0.2 + 0.01 * rng.random(n), 0, {}),
        ("MPI_Waitall", "wait", steps, waitall, 8 * steps * face, {face.bit_length(): 8 * steps}),
        ("MPI_Allreduce", "collective", 2 * steps, 6.0 + rng.random(n), 2 * steps * 8, {4: 2 * steps}),
        ("MPI_Bcast", "collective", 10, np.full(n, 0.05), 10 * 4096, {13: 10}),
        ("MPI_Barrier", "collective", 5, 0.5 + rng.random(n), 0, {0: 5}),
        ("MPI_Wtime", "other", 2 * steps, np.full(n, 1e-4), 0, {}),
        ("MPI_Comm_free", "comm", 1, np.full(n, 1e-6), 0, {}),
        ("MPI_Finalize", "init", 1, np.full(n, 0.1), 0, {}),
    ]
    mpi = sum(t for _, _, _, t, _, _ in table)
    ranks = pd.DataFrame({"rank": r, "host": [f"cn{k // 64:04d}" for k in r], "pid": 10000 + r % 64,
                          "wall": compute + mpi, "mpi_time": mpi, "compute_time": compute, "maxrss": 1 << 30})
    functions = pd.concat([pd.DataFrame({"rank": r, "function": name, "fclass": fc, "calls": calls, "time": t,
                                         "tmin": t / calls / 2, "tmax": t / calls * 3, "bytes": nbytes})
                           for name, fc, calls, t, nbytes, _ in table], ignore_index=True)
    hist = pd.concat([pd.DataFrame({"rank": r, "function": name, "bin": b, "count": c})
                      for name, _, _, _, _, bins in table for b, c in bins.items()], ignore_index=True)
    meta = {"format": "1.0", "nranks": n, "command": ["./stencil2d", "--grid", f"{px}x{py}", "--steps", str(steps)],
            "mpi_library": "Open MPI v4.1.4", "mpi_version": "3.1", "start_time": 1_714_550_400.0,
            "end_time": 1_714_550_400.0 + float(ranks["wall"].max())}
    return build_profile(ranks, functions, hist, torus_p2p(px, py, steps, steps * face), meta)
