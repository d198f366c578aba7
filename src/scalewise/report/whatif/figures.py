"""What-if figures: B1-style jobs per day per network, time per MPI function
(P2) and per rank (P1), measured and predicted side by side."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

MEASURED_COLOUR = "#555555"
PALETTE = ("#3b75af", "#c8413b", "#e6952e", "#5a9e6f", "#7b5ea7", "#8c564b", "#e377c2", "#17becf")


def colours(sources) -> dict[str, str]:
    out, k = {}, 0
    for s in sources:
        if s == "measured":
            out[s] = MEASURED_COLOUR
        else:
            out[s] = PALETTE[k % len(PALETTE)]
            k += 1
    return out


def b1_jobs_per_day(summary: pd.DataFrame) -> Figure:
    """One bar per source: jobs per day (higher is better), the value on the bar."""
    fig = Figure(figsize=(6.4, 3.6), dpi=100)
    ax = fig.add_subplot(1, 1, 1)
    finite = summary["jobs_per_day"].replace(np.inf, np.nan)
    c = colours(summary.index)
    bars = ax.bar(range(len(summary)), finite.fillna(0), color=[c[s] for s in summary.index])
    for bar, s in zip(bars, summary.index):
        if s == "measured":
            bar.set_hatch("//")
            bar.set_facecolor("white")
            bar.set_edgecolor(MEASURED_COLOUR)
    for i, v in enumerate(finite):
        ax.annotate("∞" if np.isnan(v) else f"{v:,.0f}", (i, 0 if np.isnan(v) else v), ha="center",
                    va="bottom", fontsize=8)
    ax.set_xticks(range(len(summary)), list(summary.index), fontsize=8)
    ax.set_ylabel("jobs per day")
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    return fig


def p2_time_per_function(functions: pd.DataFrame, top: int = 8) -> Figure:
    """Seconds in each MPI function (summed over ranks), one bar per source."""
    f = functions.head(top)
    fig = Figure(figsize=(6.4, 0.5 + 0.45 * len(f) * max(1, len(f.columns)) ** 0.5), dpi=100)
    ax = fig.add_subplot(1, 1, 1)
    c = colours(f.columns)
    height = 0.8 / max(len(f.columns), 1)
    y = np.arange(len(f))
    for k, s in enumerate(f.columns):
        ax.barh(y + k * height, f[s], height, color=c[s], label=s)
    ax.set_yticks(y + 0.4 - height / 2, list(f.index), fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("seconds in the function, all ranks")
    ax.legend(fontsize=8)
    ax.grid(True, axis="x", alpha=0.3)
    fig.tight_layout()
    return fig


def p1_time_per_rank(ranks: pd.DataFrame) -> Figure:
    """MPI time (solid) and compute (dotted) of every rank, one line per source."""
    fig = Figure(figsize=(6.4, 3.6), dpi=100)
    ax = fig.add_subplot(1, 1, 1)
    c = colours(ranks["source"].unique())
    for s, g in ranks.groupby("source", sort=False):
        g = g.sort_values("rank")
        ax.plot(g["rank"], g["mpi"], "-o", markersize=3, color=c[s], label=f"{s} MPI")
        ax.plot(g["rank"], g["compute"], ":", color=c[s], label=f"{s} compute")
    ax.set_xlabel("rank")
    ax.set_ylabel("seconds")
    ax.legend(fontsize=7, ncol=2)
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    return fig
