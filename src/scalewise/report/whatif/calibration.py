"""What `scalewise calibrate` prints after the fit: each measured collective
beside the replay's prediction on the fitted network, and the ones beyond the bound."""

from __future__ import annotations

import re

from rich import box
from rich.table import Table

from scalewise.formatting import human_bytes, seconds
from scalewise.whatif.collbench import BOUND, off_bound
from scalewise.whatif.network import MeasuredCollective, Network


def _short(algorithm: str) -> str:
    """MPICH's function names without the part the row already says: MPIR_Bcast_intra_binomial -> binomial."""
    return re.sub(r"^MPIR_[A-Za-z]+_intra_", "", algorithm)


def _label(c: MeasuredCollective) -> str:
    return c.name if c.name == "MPI_Barrier" else f"{c.name} {human_bytes(c.bytes)}"


def collectives_table(net: Network, library: str, statistic: str) -> Table:
    """One row per measured collective (all from one run, so one rank count, in the title); ``error`` is
    predicted over measured, less 1."""
    entries = net.collectives or []
    ranks = ", ".join(sorted({str(c.ranks) for c in entries}))
    t = Table(title=f"{library}, {ranks} ranks: collectives measured ({statistic}, slowest rank) and replayed",
              box=box.SIMPLE_HEAD, padding=(0, 1, 0, 0), pad_edge=False)
    for k in ("collective", "size", "algorithm", "measured", "predicted", "error"):
        t.add_column(k, justify="left" if k in ("collective", "algorithm") else "right")
    for c in entries:
        t.add_row(c.name, "" if c.name == "MPI_Barrier" else human_bytes(c.bytes), _short(c.algorithm),
                  seconds(c.measured_us * 1e-6), seconds(c.predicted_us * 1e-6), f"{c.error * 100:+.0f}%")
    return t


def bound_sentence(net: Network) -> str:
    """Which collectives the replay misses by more than the bound, in one line."""
    off = off_bound(net)
    if not off:
        return f"every collective's prediction is within {BOUND:.0%} of its measurement"
    named = ", ".join(f"{_label(c)} ({c.error * 100:+.0f}%)" for c in off)
    return f"off by more than {BOUND:.0%}: {named}"
