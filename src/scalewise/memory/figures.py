"""B10: memory per node against node count, eager against on-demand connection set-up."""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure

from scalewise.report.style import BYTES, COUNT

_SETUP_STYLE = {"eager": "-", "on-demand": "--"}
_MPI_COLOURS = {"openmpi": "#3b75af", "mpich": "#c8413b"}


def b10_memory_vs_nodes(projection: pd.DataFrame, node_memory: float, ranks_per_node: int) -> Figure:
    """One line per library and set-up; the node's memory as a horizontal line."""
    fig = Figure(figsize=(6.4, 4.0), dpi=100)
    ax = fig.add_subplot(1, 1, 1)
    for (mpi, setup), group in projection.groupby(["mpi", "setup"], sort=False):
        colour = _MPI_COLOURS.get(mpi, "#555555")
        ax.plot(group["nodes"], group["node_bytes"], _SETUP_STYLE.get(setup, ":"), marker="o", markersize=3,
                color=colour, label=f"{mpi} {setup}")
        if "node_bytes_high" in group:  # the interval of the fit, ±2 standard errors
            ax.fill_between(group["nodes"], group["node_bytes_low"].clip(lower=1), group["node_bytes_high"],
                            color=colour, alpha=0.12, linewidth=0)
    ax.axhline(node_memory, color="#333333", linewidth=1.2, linestyle=":", label="node memory")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.xaxis.set_major_formatter(COUNT)
    ax.yaxis.set_major_formatter(BYTES)
    ax.set_xlabel(f"nodes ({ranks_per_node} ranks each)")
    ax.set_ylabel("MPI memory per node")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    return fig
