"""What dominates a run's MPI time, as targets for tuning the MPI library.

A target is a collective (by its blocking name: MPI_Iallreduce counts as
MPI_Allreduce, whose algorithm both libraries pick the same way) or
point-to-point traffic as a whole (sends, receives and the waits that complete
them: the eager/rendezvous threshold is one setting for all of it).  Each
comes with its share of MPI time, its calls, its typical message size (the
histogram's busiest bin and the mean bytes per call) and the communicator
size.  The log records no per-communicator sizes, so the communicator size is
the world's: right for the collectives on MPI_COMM_WORLD that dominate most
applications, an upper bound for the others.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pandas as pd

from scalewise.analysis.run.breakdown import function_table
from scalewise.analysis.run.sizes import bin_label, size_distribution
from scalewise.model.profile import Profile

P2P = "point-to-point"
P2P_CLASSES = ("p2p", "wait", "test")
_NONBLOCKING = re.compile(r"^MPI_I(?=[a-z])")


@dataclass(frozen=True)
class TuneTarget:
    """One thing worth tuning: a collective (``MPI_Allreduce``) or ``point-to-point``."""

    name: str
    pct_mpi: float  # share of all MPI time, in %
    time: float  # seconds summed over ranks
    calls: int
    mean_bytes: float  # bytes per call (0 when the calls carry no size)
    mode_bin: int  # busiest log2 size bin; -1 without a histogram
    comm_size: int

    @property
    def collective(self) -> str | None:
        """``allreduce`` for MPI_Allreduce; None for point-to-point."""
        return None if self.name == P2P else self.name[4:].lower()

    @property
    def size_label(self) -> str:
        return bin_label(self.mode_bin) if self.mode_bin >= 0 else "no size recorded"


def blocking_name(function: str) -> str:
    """MPI_Iallreduce -> MPI_Allreduce; other names unchanged."""
    name = _NONBLOCKING.sub("MPI_", function)
    return name[:4] + name[4:5].upper() + name[5:]


def _group(function: str, fclass: str) -> str | None:
    if fclass == "collective":
        return blocking_name(function)
    return P2P if fclass in P2P_CLASSES else None


def dominant_targets(profile: Profile, min_pct: float = 5.0, top: int = 3) -> list[TuneTarget]:
    """The ``top`` collectives or point-to-point groups holding at least ``min_pct`` % of MPI time, busiest first."""
    table = function_table(profile)
    if table.empty:
        return []
    table = table.assign(group=[_group(f, c) for f, c in zip(table["function"], table["fclass"])])
    table = table[table["group"].notna()]
    sizes = size_distribution(profile).counts
    sizes = sizes.assign(group=[_group(f, c) for f, c in zip(sizes["function"], sizes["fclass"])]) if not sizes.empty \
        else pd.DataFrame(columns=["group", "bin", "count"])
    # Wait/Test rows repeat the sizes of what they complete; counting them would double point-to-point sizes.
    if "credited" in sizes:
        sizes = sizes[~sizes["credited"].astype(bool)]
    out = []
    for group, part in table.groupby("group", sort=False):
        pct = float(part["pct_mpi"].sum())
        if not pct >= min_pct:
            continue
        movers = part[~part["fclass"].isin(("wait", "test"))]  # calls that carry the bytes
        calls = int(movers["calls"].sum()) or int(part["calls"].sum())
        bins = sizes[sizes["group"] == group].groupby("bin")["count"].sum()
        out.append(TuneTarget(
            name=str(group), pct_mpi=pct, time=float(part["time"].sum()), calls=calls,
            mean_bytes=float(movers["bytes"].sum()) / calls if calls else 0.0,
            mode_bin=int(bins.idxmax()) if not bins.empty and bins.max() > 0 else -1,
            comm_size=profile.nranks))
    out.sort(key=lambda t: (-t.time, t.name))
    return out[:top]
