"""A recorded trace in memory: per rank, one column per field (the layout the trace file stores,
docs/trace-format.md), the function-name table and the communicators.

Read and written by ``logfile/tracefile.py``; built from readable calls and replayed by ``whatif``.
Request ids are unique within a rank (the runtime numbers them in creation order), so a wait's
requests are found by search, not by replaying a map.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum

import numpy as np

from scalewise.errors import ScalewiseError


class Kind(IntEnum):
    """What an event means to the replay (the trace's ``kind`` column)."""

    OTHER = 0  # an MPI call with no communication (Comm_rank, Wtime, ...)
    ISEND = 1
    IRECV = 2
    WAIT = 3  # Wait/Waitall/Waitany/Waitsome/a successful Test: completes `reqs`
    SEND = 4
    RECV = 5
    COLLECTIVE = 6


# Fields of every event, in file order, with their numpy types.
COLUMNS = {
    "kind": np.uint8,
    "func": np.int32,
    "peer": np.int32,
    "bytes": np.int64,
    "tag": np.int32,
    "comm": np.int32,
    "req": np.int64,
    "root": np.int32,
    "flags": np.uint8,
    "nreq": np.int32,
    "compute": np.float64,
}
NONCOMMUTATIVE = 1  # flags bit: the reduction's operation is not commutative


@dataclass
class RankEvents:
    """One rank's events as columns (see COLUMNS) and its waits' request ids."""

    columns: dict[str, np.ndarray]
    wait_reqs: np.ndarray

    def __len__(self) -> int:
        return len(self.columns["kind"])


@dataclass
class Trace:
    """Every rank's events, the function-name table and the communicators.

    ``comms`` maps a communicator id to its members' world ranks in comm-rank
    order; id 0 is MPI_COMM_WORLD and is implied when absent.
    """

    functions: list[str]
    ranks: list[RankEvents]
    comms: dict[int, np.ndarray] = field(default_factory=dict)
    capped: bool = False  # a rank's recording stopped at its memory cap

    @property
    def nranks(self) -> int:
        return len(self.ranks)

    def members(self, comm: int) -> np.ndarray:
        if comm in self.comms:
            return self.comms[comm]
        if comm == 0:
            return np.arange(self.nranks, dtype=np.int64)
        raise ScalewiseError(f"trace: communicator {comm} is used but not described")

    @property
    def nevents(self) -> int:
        return sum(len(r) for r in self.ranks)
