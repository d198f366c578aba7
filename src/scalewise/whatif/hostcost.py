"""The host's CPU time per message, as the traced run paid it.

A message's CPU time (the model's `o`) grows with what the host does for it
between a run's computations: the TCP stack's work for the message, a cold
cache, a socket the shaped link has not drained.  On the emulated cluster an
8 KiB `MPI_Isend` inside sem took 19-28 us per call, against the 3-6 us `o`
that rested back-to-back calibration streams measure, and sem's replay was
4-6% fast.  The run's own profile log records each rank's time and calls per
function.  A non-blocking send returns once its message is handed to the
transport, so its mean time per call is the rank's host cost per message;
the model charges `o` at both ends of a message, and the replay charges each
of the rank's own messages to or from another node at least that much at
the rank's end (a collective's messages keep `o`: the library's work per
call is the calibration's, whatif/percall.py).  Posting a non-blocking
receive, free in the model, costs its own mean per call.

It is host work of the transport the trace was recorded on, so it applies to
a network calibrated with the trace's library (a network file's
``library``), never to a preset (docs/whatif.md), and only where the run
measured it: a trace recorded with every rank on one node measured its
transport inside a node (MPICH's UCX over TCP took 39-82 ms of `MPI_Isend`
in sem there, where the local channel's `o` makes 1.5 us a message) and
nothing between nodes; a trace recorded across nodes measured the messages
between nodes (any inside a node are mixed into the same mean), so there the
replay charges it between nodes only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from scalewise.analysis.run.plainsum import group_sums
from scalewise.errors import ScalewiseError
from scalewise.whatif.network import Network

if TYPE_CHECKING:
    from scalewise.logfile.plain import PlainLog
    from scalewise.model.profile import Profile

# The calls the trace records as a non-blocking post and nothing else (MPI_Sendrecv also waits: its time
# is not a post's).
NONBLOCKING_SENDS = ("MPI_Isend", "MPI_Issend", "MPI_Ibsend", "MPI_Irsend")
NONBLOCKING_RECV = "MPI_Irecv"


@dataclass(frozen=True)
class HostCosts:
    """Per rank, seconds: ``per_message``, the least CPU time each of the rank's messages costs at its end;
    ``irecv``, what posting a non-blocking receive costs.  ``inside``: measured with every rank on one
    node, so they cost the messages inside a node (and none between nodes); else the messages between
    nodes (and none inside one)."""

    per_message: np.ndarray
    irecv: np.ndarray
    inside: bool = False

    def __post_init__(self):
        for name, a in (("per message", self.per_message), ("irecv", self.irecv)):
            if a.ndim != 1 or len(a) != len(self.per_message) or not np.all(np.isfinite(a) & (a >= 0)):
                raise ScalewiseError(f"host cost {name}: expected one number of seconds >= 0 per rank")


def _mean_per_call(profile: Profile, names: tuple[str, ...], nranks: int) -> np.ndarray:
    """Per rank, the time of its calls of ``names`` over their number, from a Profile's frames."""
    f = profile.functions
    rows = f[f["function"].isin(names) & (f["rank"] >= 0) & (f["rank"] < nranks)]
    by_rank = rows.groupby("rank")[["time", "calls"]].sum()
    out = np.zeros(nranks, dtype=np.float64)
    has = by_rank[by_rank["calls"] > 0]
    out[has.index.to_numpy(dtype=np.int64)] = (has["time"] / has["calls"]).to_numpy(dtype=np.float64)
    return out


def on_one_node(profile) -> bool:
    """Whether the run (a Profile, or a log's plain rows) had more than one rank, all on one host."""
    ranks = profile.ranks
    hosts = [r.get("host") for r in ranks] if isinstance(ranks, list) else (
        ranks["host"].tolist() if "host" in ranks else [])
    return len(hosts) > 1 and None not in hosts and len(set(hosts)) == 1


def _plain_mean_per_call(log: PlainLog, names: tuple[str, ...], nranks: int) -> np.ndarray:
    """:func:`_mean_per_call` from a log's plain rows: each rank's times added in the order pandas'
    group sum adds them (analysis/run/plainsum.py), so the two give the same bits."""
    rows = [r for r in log.functions if r[1] in names and 0 <= r[0] < nranks]  # FUNCTION_COLUMNS: rank, function, ...
    ranks = [int(r[0]) for r in rows]
    times = group_sums(ranks, [float(r[4]) for r in rows])
    calls: dict[int, int] = {}
    for rank, r in zip(ranks, rows):
        calls[rank] = calls.get(rank, 0) + int(r[3])
    out = np.zeros(nranks, dtype=np.float64)
    for rank, n in calls.items():
        if n > 0:
            out[rank] = times[rank] / n
    return out


def host_costs(profile: Profile | PlainLog, nranks: int) -> HostCosts:
    """Each rank's host costs from ``profile``, the traced run's own log (its frames, or its plain rows):
    the mean time per call of its non-blocking sends, and of its non-blocking receives' posts (0 for a
    rank that made none); inside a node if the run had every rank on one node."""
    plain = isinstance(profile.functions, list)  # a PlainLog's rows (a Profile's are a frame)
    mean = _plain_mean_per_call if plain else _mean_per_call
    return HostCosts(mean(profile, NONBLOCKING_SENDS, nranks), mean(profile, (NONBLOCKING_RECV,), nranks),
                     on_one_node(profile))


def applies(net: Network, library: str) -> bool:
    """Whether the traced run's host costs hold on ``net``: a network calibrated with ``library``."""
    return bool(net.library) and net.library == library
