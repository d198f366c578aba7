"""Measured and predicted side by side as plain rows: what `scalewise whatif` prints, as a table or as
JSON, without pandas (the frames of compare.py, for the page and the library, are built from these rows).

A row per source: ``measured`` (the job log recorded with the trace, when there is one, read by
logfile/plain.py) and one per network replayed.  Times are seconds; the MPI share is MPI time over the
time every rank spent, as the profile reports it.  The sums add floats in numpy's order (the frames'
path adds the same values with numpy and pandas: tests/whatif/test_lean_whatif.py holds the two to
the same bytes).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from scalewise.errors import ScalewiseError

if TYPE_CHECKING:
    from scalewise.logfile.plain import PlainLog

SECONDS_PER_DAY = 86400.0
MEASURED = "measured"
CHANGE_COLUMNS = ["wall_change", "mpi_share_points", "compute_change"]
SAME_COMPUTE_COLUMNS = ["wall_change_same_compute", "mpi_share_points_same_compute"]
# The measured window runs from MPI_Init's return to MPI_Finalize: those two calls are outside it.
OUTSIDE_WINDOW = ("MPI_Init", "MPI_Init_thread", "MPI_Finalize")


def distinct_sources(names: list[str]) -> None:
    """Each source is a row: two networks of one name, or a network named ``measured``, would collide."""
    twice = sorted({n for n in names if names.count(n) > 1 or n == MEASURED})
    if twice:
        raise ScalewiseError(f"two sources named {', '.join(repr(n) for n in twice)}: give each network its own name")


def source_row(wall: float, compute: float, mpi: float) -> dict[str, float]:
    """One source's summary: wall time, jobs per day, MPI share and the time every rank spent."""
    spent = compute + mpi
    return {"wall_time": wall, "jobs_per_day": SECONDS_PER_DAY / wall if wall > 0 else float("inf"),
            "mpi_share": mpi / spent if spent else 0.0, "compute": compute, "mpi": mpi}


def _ratio(a: float, b: float) -> float:
    """``a / b`` as numpy divides floats: a zero divisor gives an infinity or NaN, not an exception."""
    if b:
        return a / b
    return math.nan if a == 0 or a != a else math.copysign(math.inf, a) * math.copysign(1.0, b)


def changes(summary: dict[str, dict[str, float]],
            same_compute: dict[str, dict[str, float]] | None = None) -> dict[str, dict[str, float]]:
    """Per network: predicted wall time over the measured run's, less 1, and the MPI share's
    difference (points); empty without a measured row.  A change, not an error: it is the
    prediction's error only for the network the run was measured on (the accuracy benches compare
    exactly that).

    ``compute_change`` is the traced run's compute over the measured run's, less 1: the replay
    keeps the trace's compute, so a run recorded in a slow spell of the machine is predicted slow
    whatever the network; this column tells that part of an error from the network model's.
    With ``same_compute`` (the replays given each rank's measured compute, when the measured run is
    another run), ``wall_change_same_compute`` and ``mpi_share_points_same_compute`` are the same
    changes for those replays: what is left is the network model's part alone."""
    if MEASURED not in summary:
        return {}
    m = summary[MEASURED]
    out = {}
    for source, s in summary.items():
        if source == MEASURED:
            continue
        row = {"wall_change": _ratio(s["wall_time"], m["wall_time"]) - 1,
               "mpi_share_points": (s["mpi_share"] - m["mpi_share"]) * 100,
               "compute_change": _ratio(s["compute"], m["compute"]) - 1 if m["compute"] else 0.0}
        if same_compute is not None:
            r = same_compute.get(source)
            row["wall_change_same_compute"] = _ratio(r["wall_time"], m["wall_time"]) - 1 if r else math.nan
            row["mpi_share_points_same_compute"] = (r["mpi_share"] - m["mpi_share"]) * 100 if r else math.nan
        out[source] = row
    return out


def measured_ranks(log: PlainLog) -> tuple[list[int], list[float], list[float]]:
    """Each rank of the measured run, in the log's order: its number, compute and MPI seconds."""
    ranks = [int(r["rank"]) for r in log.ranks]
    return ranks, [r["wall"] - r["mpi_time"] for r in log.ranks], [float(r["mpi_time"]) for r in log.ranks]


def _sum(values: list[float]) -> float:
    return float(np.sum(np.array(values, dtype=np.float64)))


def measured_row(log: PlainLog) -> dict[str, float]:
    """The measured run's summary row, from its log's rank rows."""
    _, compute, mpi = measured_ranks(log)
    wall = max(float(r["wall"]) for r in log.ranks) if log.ranks else math.nan
    return source_row(wall, _sum(compute), _sum(mpi))


def compute_scale(ranks: list[int], measured: list[float], compute: np.ndarray) -> np.ndarray:
    """Per rank, the measured run's compute (``measured``, of the ranks numbered ``ranks``) over the trace's
    (``compute``, the replay's per rank): the factors that replay the trace with the measured run's compute
    (a rank the trace shows no compute for keeps 1)."""
    if len(ranks) != len(compute):
        raise ScalewiseError(f"measured run: {len(ranks)} ranks, the trace {len(compute)}; "
                             "compare runs of one job size")
    theirs = np.zeros(len(compute), dtype=np.float64)
    for rank, c in zip(ranks, measured):
        if 0 <= rank < len(compute) and c == c:  # a rank the log lacks, or a NaN, counts 0
            theirs[rank] = c
    return np.where(compute > 0, theirs / np.where(compute > 0, compute, 1), 1.0)


def measured_compute_scale(log: PlainLog, compute: np.ndarray) -> np.ndarray:
    """compute_scale from a log's plain rows."""
    ranks, theirs, _ = measured_ranks(log)
    return compute_scale(ranks, theirs, compute)
