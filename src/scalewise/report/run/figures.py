"""One plotting function per profile figure (P1-P6 of the reference list).

Each function takes analysis results and returns a matplotlib Figure; none
computes a statistic.  Figures are built with the object-oriented API (no
pyplot state), so rendering is safe to repeat and needs no display.

Per-rank figures switch from one bar per rank to a curve over the ranks
ordered by the analysis (sorted by MPI share or by bytes) once bars would be
thinner than a few pixels; the curve keeps every rank and still reads at
16,384 ranks.  Past MAX_RANKS_DRAWN ranks they show the distribution over
ranks the analysis made (analysis/run/distribution.py) instead.
"""

from __future__ import annotations

import math

import numpy as np
from matplotlib.colors import LogNorm
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, MultipleLocator, NullFormatter

from scalewise.analysis.run.breakdown import TimeBreakdown
from scalewise.analysis.run.distribution import RankDistribution
from scalewise.analysis.run.matrix import CommMatrix, Neighbourhood
from scalewise.analysis.run.sizes import SizeDistribution
from scalewise.analysis.run.timeline import Timeline
from scalewise.analysis.run.volume import DataVolume
from scalewise.formatting import human_bytes
from scalewise.report.style import BYTES, CLASS_COLOURS, COUNT, label_inches, legend_beside

# Up to this many ranks a per-rank figure draws one bar per rank.
MAX_BARS = 64
# Up to this many ranks a per-rank figure draws every rank (a bar or a step of a curve); past it, the
# distribution over ranks: a histogram, the ranks at percentiles and the worst ranks by id (docs/report.md).
MAX_RANKS_DRAWN = 16384
# Function figures show this many functions, busiest first; tables list them all.
MAX_FUNCTIONS = 15
COMPUTE = "#8fb3d9"
MPI = "#c8413b"
PROFILER = "#e0a030"  # the profiler's own time (format 1.4 on), between compute and MPI


def _figure(width: float, height: float, left: float = 0.75, bottom: float = 0.6, right: float = 0.25,
            top: float = 0.4, wspace: float = 0.2) -> Figure:
    """A figure with fixed margins in inches.

    Margins are set by hand rather than by matplotlib's constrained layout:
    that engine draws every figure an extra time to measure it, which tripled
    the cost of a report.
    """
    fig = Figure(figsize=(width, height), dpi=100)
    fig.subplots_adjust(left=left / width, right=1 - right / width, bottom=bottom / height, top=1 - top / height,
                        wspace=wspace)
    return fig


def _distribution(d: RankDistribution, title: str, xlabel: str, parts, axis) -> Figure:
    """Left: ranks per bin of the quantity; right: the parts of the ranks at percentiles and of the worst
    ranks, each labelled with its rank id."""
    fig = _figure(10.0, 3.8, left=0.8, bottom=1.05, wspace=0.3)
    hist, marks = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1, 1.4]})
    hist.stairs(d.counts, d.edges, fill=True, color="#777777")
    hist.set_yscale("log")
    hist.set_ylim(bottom=0.7)
    hist.yaxis.set_major_formatter(COUNT)
    hist.xaxis.set_major_locator(MaxNLocator(nbins=4))
    hist.set_xlabel(xlabel)
    hist.set_ylabel("ranks")
    hist.set_title(f"{d.nranks:,} ranks", fontsize=9)
    m = d.marks
    x = np.arange(len(m))
    bottom = np.zeros(len(m))
    for col, label, colour in parts:
        marks.bar(x, m[col], bottom=bottom, color=colour, label=label, width=0.75)
        bottom = bottom + m[col].to_numpy(dtype=float)
    marks.set_xticks(x, [f"{lab}\nrank {r}" for lab, r in zip(m["label"], m["rank"])], fontsize=7, rotation=60,
                     ha="right", rotation_mode="anchor")
    marks.set_title("ranks at percentiles, and the worst ranks", fontsize=9)
    axis(marks, float(bottom.max()) if len(bottom) else 0.0)
    fig.suptitle(title, fontsize=10)
    legend_beside(fig, *marks.get_legend_handles_labels())
    return fig


def _seconds_axis(ax, _top: float) -> None:
    ax.set_ylabel("seconds")


def p1_mpi_vs_compute(b: TimeBreakdown) -> Figure:
    """P1: MPI vs compute time per rank, ranks ordered by MPI share of their wall time; the
    profiler's own time, when the log has it (format 1.4), stacked between them."""
    if len(b.sorted_by_mpi) > MAX_RANKS_DRAWN:
        own = [("profiler_time", "profiler", PROFILER)] if b.profiler is not None else []
        return _distribution(b.mpi_pct_distribution,
                             f"MPI vs compute per rank: MPI is {100 * b.mpi_share:.1f}% of wall time overall",
                             "MPI share of the rank's wall time (%)",
                             [("compute_time", "compute", COMPUTE), *own, ("mpi_time", "MPI", MPI)], _seconds_axis)
    fig = _figure(8.0, 3.6, bottom=0.75 if len(b.sorted_by_mpi) > 24 else 0.6)
    ax = fig.add_subplot()
    s = b.sorted_by_mpi
    compute = s["compute_time"].to_numpy(float)
    below_mpi = compute + s["profiler_time"].to_numpy(float)
    if len(s) <= MAX_BARS:
        x = np.arange(len(s))
        ax.bar(x, compute, color=COMPUTE, label="compute", width=0.8)
        if b.profiler is not None:
            ax.bar(x, s["profiler_time"], bottom=compute, color=PROFILER, label="profiler", width=0.8)
        ax.bar(x, s["mpi_time"], bottom=below_mpi, color=MPI, label="MPI", width=0.8)
        ax.set_xticks(x, [str(r) for r in s["rank"]], fontsize=7 if len(s) > 24 else 9,
                      rotation=90 if len(s) > 24 else 0)
        ax.set_xlabel("rank (ordered by MPI share)")
    else:
        x = s["order"].to_numpy()
        top = below_mpi + s["mpi_time"].to_numpy(float)
        # Rasterised: as vectors, thousands of steps make a multi-megabyte SVG.
        ax.fill_between(x, 0, compute, color=COMPUTE, label="compute", step="mid", linewidth=0, rasterized=True)
        if b.profiler is not None:
            ax.fill_between(x, compute, below_mpi, color=PROFILER, label="profiler", step="mid", linewidth=0,
                            rasterized=True)
        ax.fill_between(x, below_mpi, top, color=MPI, label="MPI", step="mid", linewidth=0, rasterized=True)
        ax.set_xlim(0, max(len(s) - 1, 1))
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel(f"{len(s):,} ranks ordered by MPI share (position, not rank id)")
    ax.set_ylabel("seconds")
    own = (f", the profiler {100 * b.total_profiler / b.total_wall:.2f}%" if b.profiler is not None and b.total_wall > 0
           else "")
    ax.set_title(f"MPI vs compute per rank: MPI is {100 * b.mpi_share:.1f}% of wall time overall{own}", fontsize=10)
    legend_beside(fig, *ax.get_legend_handles_labels())
    return fig


def _function_bars(ax, names, values, classes, xlabel, labels):
    y = np.arange(len(names))[::-1]
    ax.barh(y, values, color=[CLASS_COLOURS.get(c, "#999999") for c in classes])
    ax.set_yticks(y, names, fontsize=8)
    for yy, v, text in zip(y, values, labels):
        ax.text(v, yy, " " + text, va="center", fontsize=7)
    ax.set_xlabel(xlabel)
    ax.margins(x=0.18)


def p2_time_per_function(functions) -> Figure:
    """P2: time per MPI function as % of wall time and % of MPI time."""
    top = functions.head(MAX_FUNCTIONS)
    fig = _figure(9.0, 1.0 + 0.28 * max(len(top), 3), left=label_inches(top["function"]), top=0.45, wspace=0.08)
    left, right = fig.subplots(1, 2, sharey=True)
    _function_bars(left, top["function"], top["pct_wall"], top["fclass"], "% of wall time (all ranks)",
                   [f"{v:.1f}%" for v in top["pct_wall"]])
    _function_bars(right, top["function"], top["pct_mpi"], top["fclass"], "% of MPI time",
                   [f"{v:.1f}%" for v in top["pct_mpi"]])
    right.tick_params(labelleft=False)
    fig.suptitle("Time per MPI function (colour = class)", fontsize=10)
    return fig


def p3_calls_per_function(calls) -> Figure:
    """P3: number of calls per MPI function and its % of all calls."""
    top = calls.head(MAX_FUNCTIONS)
    fig = _figure(8.0, 1.0 + 0.28 * max(len(top), 3), left=label_inches(top["function"]), top=0.35)
    ax = fig.add_subplot()
    _function_bars(ax, top["function"], top["calls"], top["fclass"], "calls (all ranks)",
                   [f"{c:,} ({p:.1f}%)" for c, p in zip(top["calls"], top["pct_calls"])])
    ax.set_title("Calls per MPI function", fontsize=10)
    return fig


def p4_message_sizes(d: SizeDistribution) -> Figure:
    """P4: message-size distribution per function, incl. sizes credited to the completing Wait/Test."""
    names = d.functions[:MAX_FUNCTIONS]
    bins = d.bins
    grid = np.zeros((len(names), len(bins)))
    row, col = {n: i for i, n in enumerate(names)}, {b: j for j, b in enumerate(bins)}
    for r in d.counts.itertuples(index=False):
        if r.function in row:
            grid[row[r.function], col[r.bin]] = r.count
    labels = dict(zip(d.counts["bin"], d.counts["label"]))
    credited = set(d.counts.loc[d.counts["credited"].astype(bool), "function"])
    label_in = label_inches([f"{n} (completes)" for n in names])
    fig = _figure(max(6.0, label_in + 2.3 + 0.55 * len(bins)), 1.4 + 0.35 * max(len(names), 2), left=label_in,
                  bottom=1.1, right=0.9, top=0.35)  # right: room for the colour bar's labels
    ax = fig.add_subplot()
    masked = np.ma.masked_equal(grid, 0)
    im = ax.imshow(masked, aspect="auto", cmap="viridis", norm=LogNorm(vmin=1, vmax=max(grid.max(), 1)))
    ax.set_xticks(range(len(bins)), [labels[b] for b in bins], rotation=60, ha="right", fontsize=7)
    ax.set_yticks(range(len(names)), [f"{n} (completes)" if n in credited else n for n in names], fontsize=8)
    if grid.size <= 400:
        for (i, j), v in np.ndenumerate(grid):
            if v > 0:
                ax.text(j, i, f"{int(v):,}", ha="center", va="center", fontsize=6,
                        color="white" if v < grid.max() ** 0.5 else "black")
    bar = fig.colorbar(im, ax=ax, label="messages")
    bar.ax.yaxis.set_major_formatter(COUNT)
    bar.ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_title("Messages per size bin", fontsize=10)
    return fig


def _heatmap(ax, values: np.ndarray, m: CommMatrix, what: str, fig: Figure):
    masked = np.ma.masked_equal(values, 0)
    vmax = max(float(values.max()), 1.0)
    im = ax.imshow(masked, cmap="magma_r", norm=LogNorm(vmin=max(float(masked.min()) if masked.count() else 1, 1e-9), vmax=vmax),
                   interpolation="nearest", origin="upper")
    unit = "rank" if m.block == 1 else f"block of {m.block} ranks"
    ax.set_xlabel(f"receiver ({unit})")
    ax.set_ylabel(f"sender ({unit})")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True, nbins=6))
    ax.yaxis.set_major_locator(MaxNLocator(integer=True, nbins=6))
    if m.block > 1:
        ticks = FuncFormatter(lambda v, _p: f"{int(v) * m.block}")
        ax.xaxis.set_major_formatter(ticks)
        ax.yaxis.set_major_formatter(ticks)
    bar = fig.colorbar(im, ax=ax, shrink=0.85)
    bar.set_label(what)
    bar.ax.yaxis.set_minor_formatter(NullFormatter())  # log-scale minor labels collide with the major ones
    # 1-2-5 ticks: a matrix whose cells span less than a decade still gets labels.
    bar.ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    bar.ax.yaxis.set_major_formatter(BYTES if what == "bytes" else COUNT)


def p5_matrix(m: CommMatrix) -> Figure:
    """P5: point-to-point matrix, sender x receiver, bytes and message counts (block-aggregated at scale)."""
    fig = _figure(10.0, 4.6, left=0.8, bottom=0.6, right=0.3, top=0.5, wspace=0.45)
    left, right = fig.subplots(1, 2)
    _heatmap(left, m.bytes, m, "bytes", fig)
    _heatmap(right, m.messages, m, "messages", fig)
    left.set_title("bytes", fontsize=9)
    right.set_title("messages", fontsize=9)
    scope = f"{m.nranks:,} ranks" + (f", {m.block} ranks per cell" if m.block > 1 else "")
    fig.suptitle(f"Point-to-point matrix ({scope}); tick labels are world ranks", fontsize=10)
    return fig


def p5_locality(nb: Neighbourhood) -> Figure:
    """P5: share of point-to-point bytes and messages exchanged within +-k ranks."""
    fig = _figure(6.0, 3.0, left=0.7, bottom=0.6, top=0.35)
    ax = fig.add_subplot()
    w = nb.within
    ax.plot(w["k"], 100 * w["bytes_share"], marker="o", color=MPI, label="bytes")
    ax.plot(w["k"], 100 * w["messages_share"], marker="s", color="#3b75af", label="messages", linestyle="--")
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(COUNT)
    ax.set_ylim(0, 105)
    ax.set_xlabel("distance k = |receiver - sender| (ranks)")
    ax.set_ylabel("% within +-k")
    ax.set_title("How local is the point-to-point traffic", fontsize=10)
    legend_beside(fig, *ax.get_legend_handles_labels())
    return fig


def binary_byte_axis(ax, top: float, ticks: int = 4) -> None:
    """A byte axis with ticks at multiples of a power of two (512 KiB, 1 MiB, 1.5 MiB; never 1.91 MiB),
    and room above the tallest bar so that it never touches the frame."""
    ax.yaxis.set_major_formatter(BYTES)
    if top <= 0:
        return
    step = 2.0 ** math.floor(math.log2(top / ticks))  # ticks .. 2 x ticks intervals
    ax.yaxis.set_major_locator(MultipleLocator(step))
    ax.set_ylim(0, math.ceil(top * 1.06 / step) * step)


def _bytes_axis(ax, top: float) -> None:
    binary_byte_axis(ax, top)
    ax.set_ylabel("bytes sent")


def p6_data_per_rank(v: DataVolume) -> Figure:
    """P6: data sent per rank (point-to-point, collective, one-sided) and the job total."""
    if len(v.sorted_by_total) > MAX_RANKS_DRAWN:
        fig = _distribution(v.total_distribution,
                            f"Data per rank; {human_bytes(v.total)} in total over all ranks",
                            "bytes sent by the rank", _P6_PARTS, _bytes_axis)
        fig.axes[0].xaxis.set_major_formatter(BYTES)
        return fig
    fig = _figure(8.0, 3.6, left=0.95, bottom=0.75 if len(v.sorted_by_total) > 24 else 0.6)
    ax = fig.add_subplot()
    s = v.sorted_by_total
    parts = _P6_PARTS
    bottom = np.zeros(len(s))
    if len(s) <= MAX_BARS:
        x = np.arange(len(s))
        for col, label, colour in parts:
            ax.bar(x, s[col], bottom=bottom, color=colour, label=label, width=0.8)
            bottom = bottom + s[col].to_numpy()
        ax.set_xticks(x, [str(r) for r in s["rank"]], fontsize=7 if len(s) > 24 else 9,
                      rotation=90 if len(s) > 24 else 0)
        ax.set_xlabel("rank (ordered by bytes)")
    else:
        x = s["order"].to_numpy()
        for col, label, colour in parts:
            top = bottom + s[col].to_numpy()
            ax.fill_between(x, bottom, top, color=colour, label=label, step="mid", linewidth=0, rasterized=True)
            bottom = top
        ax.set_xlim(0, max(len(s) - 1, 1))
        ax.set_xlabel(f"{len(s):,} ranks ordered by bytes (position, not rank id)")
    binary_byte_axis(ax, float(bottom.max()) if len(bottom) else 0.0)
    ax.set_ylabel("bytes sent")
    ax.set_title(f"Data per rank; {human_bytes(v.total)} in total over all ranks", fontsize=10)
    legend_beside(fig, *ax.get_legend_handles_labels())
    return fig


_P6_PARTS = [("p2p_sent", "point-to-point", "#3b75af"), ("collective", "collective", MPI),
             ("rma", "one-sided", "#7b5ea7")]


def _time_axis(ax, t: Timeline) -> None:
    ax.set_xlabel(f"seconds after MPI_Init (bins of {t.width * 1e3:.3g} ms)")
    _phase_marks(ax, t)


def _phase_room(t: Timeline) -> float:
    """Inches above the plot for the phases' names (or the note why they are not marked)."""
    return 0.2 if t.phases is not None else 0.0


# A phase's name is written above the plot when its span is at least this share of the run (lines mark them all).
PHASE_LABEL_FROM = 0.04


def _phase_marks(ax, t: Timeline) -> None:
    """MPI_Pcontrol phases: a dashed line where each starts and ends, its name above the plot; or, when the log
    cannot place them in time, a note saying why (analysis.run.timeline.phase_marks)."""
    if t.phases is None:
        return
    top = ax.get_xaxis_transform()  # x in seconds, y in the axes' height
    if t.phases.marks.empty:
        ax.text(0.0, 1.02, f"phases not marked: {t.phases.why}", transform=ax.transAxes, fontsize=6.5,
                color="#555555", va="bottom", wrap=True)
        return
    m = t.phases.marks
    span = float(m["end"].max()) or 1.0
    for edge in sorted(set(m["start"]) | set(m["end"])):
        ax.axvline(edge, color="#333333", lw=0.8, ls="--", alpha=0.7)
    for row in m.itertuples():
        if (row.end - row.start) >= PHASE_LABEL_FROM * span:
            ax.text((row.start + row.end) / 2, 1.01, row.phase, transform=top, ha="center", va="bottom",
                    fontsize=7, clip_on=False)


def p1_mpi_share_heatmap(t: Timeline) -> Figure:
    """P1: MPI share of each rank (rows) in each time bin (columns)."""
    ranks = len(t.share)
    fig = _figure(9.0, min(1.6 + 0.12 * ranks, 6.0) + _phase_room(t), left=0.8, right=0.3, top=0.45 + _phase_room(t))
    ax = fig.add_subplot()
    end = float(t.over_time["start"].iloc[-1]) + t.width
    # Rasterised: thousands of cells as vectors make a multi-megabyte SVG.
    im = ax.imshow(np.ma.masked_invalid(t.share.to_numpy(float)) * 100, cmap="Reds", vmin=0, vmax=100,
                   aspect="auto", interpolation="nearest", extent=(0, end, ranks - 0.5, -0.5), rasterized=True)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True, nbins=8))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _p: str(t.share.index[int(v)]) if 0 <= v < ranks else ""))
    ax.set_ylabel("rank")
    _time_axis(ax, t)
    fig.colorbar(im, ax=ax, shrink=0.9, pad=0.01).set_label("% MPI")
    ax.set_title("MPI share per rank over time", fontsize=10, pad=6 + 72 * _phase_room(t))
    return fig


def p1_mpi_share_over_time(t: Timeline) -> Figure:
    """P1: MPI share of all ranks together per time bin, with the lowest and highest rank."""
    fig = _figure(8.0, 3.0 + _phase_room(t), top=0.4 + _phase_room(t))
    ax = fig.add_subplot()
    o = t.over_time
    mid = o["start"] + t.width / 2
    ax.fill_between(mid, 100 * o["share_min"], 100 * o["share_max"], color=MPI, alpha=0.18, linewidth=0,
                    label="lowest to highest rank")
    ax.plot(mid, 100 * o["mpi_share"], color=MPI, label="all ranks")
    ax.set_ylim(0, 100)
    ax.set_ylabel("% MPI")
    _time_axis(ax, t)
    ax.set_title("MPI share over time", fontsize=10, pad=6 + 72 * _phase_room(t))
    legend_beside(fig, *ax.get_legend_handles_labels())
    return fig
