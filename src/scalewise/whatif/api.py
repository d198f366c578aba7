"""Replay a trace on one or more networks and return pandas frames."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from scalewise.whatif import engine
from scalewise.whatif.network import Network, network
from scalewise.whatif.percall import call_costs
from scalewise.whatif.streams import build_streams
from scalewise.whatif.trace import Trace, category


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


def _with_costs(streams: engine.Streams, net: Network, library: str) -> engine.Streams:
    """``streams`` with ``net``'s measured per-call cost of collectives on each call's first event."""
    cost = call_costs(net, library, streams.functions, streams.collective_calls)
    if not cost.any():
        return streams
    events = streams.events.copy()
    events["cost"][streams.collective_calls["row"]] = cost
    return replace(streams, events=events)


def replay(trace: Trace, networks: str | Network | list[str | Network], library: str = "openmpi") -> list[Prediction]:
    """Predict ``trace`` on each network (a preset name, a .yaml path or a Network)."""
    if isinstance(networks, (str, Network)):
        networks = [networks]
    streams = build_streams(trace, library)
    out = []
    for net in networks:
        model = net if isinstance(net, Network) else network(net)
        res = engine.run(_with_costs(streams, model, library), model)
        functions = pd.DataFrame(res.func_time, columns=list(streams.functions))
        functions.index.name = "rank"
        ranks = pd.DataFrame({"finish": res.finish, "compute": res.compute,
                              "mpi": functions.to_numpy().sum(axis=1) if len(streams.functions) else
                              np.zeros(len(res.finish))})
        ranks.index.name = "rank"
        out.append(Prediction(model.name, library, ranks, functions))
    return out
