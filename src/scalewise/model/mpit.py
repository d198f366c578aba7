"""What MPI_T told about a run (log section 8, format 1.2, docs/mpit.md):
the library's performance variables per rank and its control variables in
force.  Frames and plain values only; the summary over ranks is
analysis/run/mpit.py."""

from __future__ import annotations

from dataclasses import dataclass, field

# One row per (rank, variable): the class in the MPI standard's words
# ("counter", "highwatermark", ...), where it is bound ("none" or
# "comm_world"), the values the library gave (a tuple: one per element,
# e.g. one per peer), and ``value``, those elements as one number (the
# rule in PVAR_REDUCTION).
PVAR_COLUMNS = ["rank", "variable", "pclass", "binding", "value", "values"]

PVAR_CLASSES = ("state", "level", "size", "percentage", "highwatermark", "lowwatermark", "counter",
                "aggregate", "timer", "generic")
# A variable with several elements (per peer, per transport) as one number:
# the highest high-water mark, the lowest low-water mark, otherwise the sum.
PVAR_REDUCTION = {"highwatermark": "max", "lowwatermark": "min"}

# Why a run has no MPI_T values (status in the log).
STATUS_READ, STATUS_OFF, STATUS_UNAVAILABLE = "read", "off", "unavailable"


def reduce_values(pclass: str, values: tuple) -> float | int:
    """The elements of one reading as one number (PVAR_REDUCTION)."""
    how = PVAR_REDUCTION.get(pclass, "sum")
    return max(values) if how == "max" else min(values) if how == "min" else sum(values)


def no_pvars():
    """An empty pvar frame (pandas imported here: the summary's lean path reads MPI_T without it)."""
    import pandas as pd

    return pd.DataFrame(columns=PVAR_COLUMNS)


@dataclass(frozen=True)
class MpitInfo:
    """The run's MPI_T section: ``status`` (STATUS_*; None: the log has no
    such section), whether a cap cut the pvars or cvars, whether Open MPI's
    MTL components were left unloaded (``mtl_unloaded``: the job selected
    no MTL, so their cvars are not listed; docs/mpit.md "Cost"), the cvars in
    force on rank 0 (name -> value as text) and each pvar's description."""

    status: str | None = None
    pvars_capped: bool = False
    cvars_capped: bool = False
    mtl_unloaded: bool = False
    cvars: dict[str, str] = field(default_factory=dict)
    descriptions: dict[str, str] = field(default_factory=dict)
