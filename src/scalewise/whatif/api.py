"""Replay a trace on one or more networks and return pandas frames."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from scalewise.errors import ScalewiseError
from scalewise.whatif import engine, templates
from scalewise.whatif.hostcost import HostCosts, applies
from scalewise.whatif.network import Network, network
from scalewise.whatif.trace import Trace, category
from scalewise.logfile.tracefile import image_of


@dataclass
class Prediction:
    """One network's replay of one trace.

    ``ranks``: one row per rank (finish, compute and mpi seconds);
    ``functions``: ranks x MPI functions, seconds inside each."""

    network: str
    library: str
    ranks: pd.DataFrame
    functions: pd.DataFrame

    @property
    def wall_time(self) -> float:
        return float(self.ranks["finish"].max()) if len(self.ranks) else 0.0

    @property
    def mpi_share(self) -> float:
        """MPI time over the time every rank spent (finish summed)."""
        total = float(self.ranks["finish"].sum())
        return float(self.ranks["mpi"].sum()) / total if total else 0.0

    def by_kind(self) -> pd.Series:
        """Seconds in MPI summed over ranks: point-to-point, wait, collective, other."""
        return self.functions.sum().groupby(category).sum()

    def totals(self) -> dict[str, float]:
        return {"network": self.network, "library": self.library, "wall_time": self.wall_time,
                "mpi_share": self.mpi_share, "compute": float(self.ranks["compute"].sum()),
                "mpi": float(self.ranks["mpi"].sum())}


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
            funcs = pd.DataFrame(res.func_time, columns=functions)
            funcs.index.name = "rank"
            ranks = pd.DataFrame({"finish": res.finish, "compute": res.compute,
                                  "mpi": res.func_time.sum(axis=1) if functions else np.zeros(len(res.finish))})
            ranks.index.name = "rank"
            out.append(Prediction(model.name, library, ranks, funcs))
    return out
