"""Replay a trace on one or more networks: each network's times per rank and per MPI function, as arrays
(and as pandas frames when asked: pandas is imported then, never by the replay itself)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from scalewise.errors import ScalewiseError
from scalewise.whatif import engine, templates
from scalewise.whatif.hostcost import HostCosts, applies
from scalewise.whatif.network import Network, network
from scalewise.whatif.trace import Trace, category
from scalewise.logfile.tracefile import image_of

if TYPE_CHECKING:
    import pandas as pd


@dataclass
class Prediction:
    """One network's replay of one trace.

    ``finish``, ``compute``: per rank, seconds; ``func_time``: ranks x ``function_names``, seconds inside
    each; as frames, ``ranks`` (one row per rank: finish, compute and mpi seconds) and ``functions``
    (ranks x MPI functions)."""

    network: str
    library: str
    finish: np.ndarray
    compute: np.ndarray
    func_time: np.ndarray
    function_names: list[str]

    @cached_property
    def mpi(self) -> np.ndarray:
        """Per rank, seconds inside MPI."""
        return self.func_time.sum(axis=1) if self.function_names else np.zeros(len(self.finish))

    @cached_property
    def ranks(self) -> pd.DataFrame:
        import pandas as pd

        ranks = pd.DataFrame({"finish": self.finish, "compute": self.compute, "mpi": self.mpi})
        ranks.index.name = "rank"
        return ranks

    @cached_property
    def functions(self) -> pd.DataFrame:
        import pandas as pd

        funcs = pd.DataFrame(self.func_time, columns=self.function_names)
        funcs.index.name = "rank"
        return funcs

    @property
    def wall_time(self) -> float:
        return float(self.finish.max()) if len(self.finish) else 0.0

    @property
    def compute_total(self) -> float:
        """Compute seconds summed over ranks (numpy's sum, as the ranks frame's)."""
        return float(np.sum(self.compute))

    @property
    def mpi_total(self) -> float:
        """MPI seconds summed over ranks."""
        return float(np.sum(self.mpi))

    @property
    def mpi_share(self) -> float:
        """MPI time over the time every rank spent (finish summed)."""
        total = float(np.sum(self.finish))
        return self.mpi_total / total if total else 0.0

    def by_kind(self) -> pd.Series:
        """Seconds in MPI summed over ranks: point-to-point, wait, collective, other."""
        return self.functions.sum().groupby(category).sum()

    def totals(self) -> dict[str, float]:
        return {"network": self.network, "library": self.library, "wall_time": self.wall_time,
                "mpi_share": self.mpi_share, "compute": self.compute_total, "mpi": self.mpi_total}


def decode(trace: Trace) -> engine.Decoded:
    """``trace`` decoded by the engine (a trace read from a file is decoded from its image as it is)."""
    image = image_of(trace)
    vector = np.array([f in templates.VECTOR for f in image.functions], dtype=np.uint8)
    return engine.Decoded(image.image, image.directory, len(image.functions), vector, image.comms, image.where)


PLACEMENTS = ("slot", "node")


def nodes_of(nranks: int, ranks_per_node: int, placement: str = "slot") -> np.ndarray:
    """The node of each rank: by ``slot`` a node's slots fill before the next node's (ranks 0..N-1 on node
    0), by ``node`` ranks go round the nodes (rank r on node r mod the number of nodes), as mpirun's
    --map-by slot and --map-by node place them."""
    if ranks_per_node < 1:
        raise ScalewiseError(f"ranks per node: {ranks_per_node} is not a positive count")
    if placement not in PLACEMENTS:
        raise ScalewiseError(f"placement '{placement}': expected one of {', '.join(PLACEMENTS)}")
    ranks = np.arange(nranks, dtype=np.int64)
    if placement == "slot":
        return (ranks // ranks_per_node).astype(np.int32)
    nnodes = -(-nranks // ranks_per_node)
    return (ranks % max(nnodes, 1)).astype(np.int32)


def replay(trace: Trace, networks: str | Network | list[str | Network], library: str = "openmpi",
           ranks_per_node: int | None = None, placement: str = "slot",
           local: str | Network | None = None, compute_scale: np.ndarray | None = None,
           host: HostCosts | None = None) -> list[Prediction]:
    """Predict ``trace`` on each network (a preset name, a .yaml path or a Network).

    With ``ranks_per_node``, ranks share nodes (placed by ``placement``, see nodes_of): a message between
    two ranks of one node is costed with ``local`` (shared memory, a network file as calibrate writes on
    one node) on a channel of its own, one between nodes with the network.  ``compute_scale`` (a factor per
    rank) multiplies each rank's recorded compute: another processor's speed, or another run's compute.
    ``host`` (hostcost.host_costs of the traced run's own log) is the least CPU time each rank's own
    messages cost, on the networks calibrated with ``library`` only."""
    if isinstance(networks, (str, Network)):
        networks = [networks]
    node_of, shm = None, None
    if ranks_per_node is not None:
        if local is None:
            raise ScalewiseError("ranks per node: give the shared-memory network (local=...) that costs the "
                                 "messages inside a node")
        node_of = nodes_of(trace.nranks, ranks_per_node, placement)
        shm = local if isinstance(local, Network) else network(local)
    functions = list(trace.functions)
    out = []
    with decode(trace) as decoded:
        tpl = templates.build(decoded, functions, trace.members, library, node_of)
        for net in networks:
            model = net if isinstance(net, Network) else network(net)
            res = decoded.run(tpl, templates.costs(decoded, functions, tpl, model, library), model, node_of, shm,
                              compute_scale, host if host is not None and applies(model, library) else None)
            out.append(Prediction(model.name, library, res.finish, res.compute, res.func_time, functions))
    return out
