"""One plotting function per study figure (B1-B9, P1, P6, P7, P8 across runs).

Each takes analysis tables and returns a matplotlib Figure; none computes a
statistic: they pick rows and draw them.  A figure with many series splits
into small panels (one per application or per context), at most
``MAX_PANELS``, so every curve stays readable.
"""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from scalewise.analysis.study.scaling import settings_label
from scalewise.report.style import BYTES, CLASS_COLOURS, PERCENT, label_inches, legend_beside

MAX_PANELS = 12
PANEL_COLUMNS = 3


# Oversubscribed points (more ranks than cores on a node) are drawn hollow and oversubscribed bars hatched;
# the figure carries a legend entry for them and the registry adds a note to the caption.
OVERSUBSCRIBED_HATCH = "////"


def _over(frame: pd.DataFrame) -> pd.Series:
    return (frame["oversubscribed"] if "oversubscribed" in frame else pd.Series(False, index=frame.index)
            ).fillna(False).astype(bool)


def _hollow(ax, x: pd.Series, y: pd.Series, over: pd.Series, line) -> None:
    """Redraw the oversubscribed points of ``line`` hollow (white inside, the curve's colour around)."""
    if over.any():
        ax.plot(x[over], y[over], ls="none", marker="o", markerfacecolor="white",
                markeredgecolor=line.get_color(), zorder=line.get_zorder() + 0.1)


def _over_legend(fig: Figure, any_over: bool, bars: bool = False) -> None:
    """A figure-level legend entry explaining the hollow markers (hatched bars), when anything is oversubscribed."""
    if not any_over:
        return
    handle = (Patch(facecolor="white", edgecolor="#444444", hatch=OVERSUBSCRIBED_HATCH) if bars else
              Line2D([], [], ls="none", marker="o", markerfacecolor="white", markeredgecolor="#444444"))
    fig.legend(handles=[handle], labels=["oversubscribed (ranks shared cores)"], loc="upper left", fontsize=7,
               frameon=False)


def _label(row: dict, keys: list[str]) -> str:
    return settings_label(row, keys) or "all runs"


def _groups(frame: pd.DataFrame, keys: list[str]) -> list[tuple[str, pd.DataFrame]]:
    if not keys:
        return [("all runs", frame)]
    out = []
    for _, g in frame.groupby(keys, sort=False, dropna=False):
        out.append((_label(g.iloc[0].to_dict(), keys), g))
    return out


def _label_inches(labels) -> float:
    return label_inches(labels, fontsize=7, pad=0.3)


def _panels(count: int, width: float = 4.1, height: float = 3.0, left: float = 0.75) -> tuple[Figure, list]:
    """A grid of panels with fixed margins in inches (no layout engine: it would draw every figure twice)."""
    count = max(1, min(count, MAX_PANELS))
    cols = min(count, PANEL_COLUMNS)
    if count == 1:  # a lone panel gets the width of a row
        width, height = max(width, 7.5), max(height, 3.4)
    rows = -(-count // cols)
    width = max(width, left + 2.5)
    total_w, total_h = width * cols, height * rows + 0.4
    fig = Figure(figsize=(total_w, total_h), dpi=100)
    fig.subplots_adjust(left=left / total_w, right=1 - 0.2 / total_w, bottom=0.55 / total_h, top=1 - 0.55 / total_h,
                        wspace=(left + 0.1) / (width - left - 0.1), hspace=0.85 / (height - 0.85))
    axes = fig.subplots(rows, cols, squeeze=False).ravel().tolist()
    for ax in axes[count:]:
        ax.set_visible(False)
    return fig, axes[:count]


def _scale_axis(ax, scale: str, values) -> None:
    vals = sorted({float(v) for v in values})
    if len(vals) > 1 and vals[-1] / max(vals[0], 1) >= 8:
        ax.set_xscale("log", base=2)
    ax.set_xticks(vals)
    ax.set_xticklabels([f"{v:g}" for v in vals])
    ax.set_xlabel(scale)
    ax.grid(alpha=0.3)


def _percent_panels(frame: pd.DataFrame, scale: str, panel_keys: list[str], series_keys: list[str], column: str,
                    ylabel: str) -> tuple[Figure, list]:
    """A fraction column in % against the scale, one curve per series, a panel per value of ``panel_keys``.
    Returns the figure and (axes, rows) per panel, for the caller's reference lines and limits."""
    panels = _groups(frame, panel_keys)
    fig, axes = _panels(len(panels))
    for ax, (title, g) in zip(axes, panels):
        for label, h in _groups(g, series_keys):
            h = h.sort_values(scale)
            line, = ax.plot(h[scale], 100 * h[column], marker="o", label=label)
            _hollow(ax, h[scale], 100 * h[column], _over(h), line)
        _scale_axis(ax, scale, g[scale])
        ax.yaxis.set_major_formatter(PERCENT)
        ax.set_title(title, fontsize=9)
        ax.set_ylabel(ylabel, fontsize=8)
        ax.legend(fontsize=7)
    _over_legend(fig, _over(frame).any())
    return fig, [(ax, g) for ax, (_, g) in zip(axes, panels)]


def performance_by_axis(summary: pd.DataFrame, axis: str, scale: str, panel_keys: list[str]) -> Figure:
    """B1-B7: performance (median, min-max bars) vs scale, one curve per value of ``axis``, a panel per context."""
    panels = _groups(summary, panel_keys)
    fig, axes = _panels(len(panels))
    for ax, (title, g) in zip(axes, panels):
        for value, h in g.groupby(axis, sort=False):
            h = h.sort_values(scale)
            err = [h["median"] - h["min"], h["max"] - h["median"]]
            line = ax.errorbar(h[scale], h["median"], yerr=err, marker="o", capsize=3, label=str(value)).lines[0]
            _hollow(ax, h[scale], h["median"], _over(h), line)
        _scale_axis(ax, scale, g[scale])
        unit = g["unit"].iloc[0]
        better = "higher" if g["higher_is_better"].iloc[0] else "lower"
        ax.set_ylabel(f"{unit} ({better} is better)", fontsize=8)
        ax.set_title(title, fontsize=9)
        ax.legend(title=axis, fontsize=7, title_fontsize=7)
        ax.set_ylim(bottom=0)
    _over_legend(fig, _over(summary).any())
    return fig


def b8_efficiency(scalability: pd.DataFrame, scale: str, panel_keys: list[str], series_keys: list[str]) -> Figure:
    """B8: scaling efficiency in % of the base run's per-rank (per-node) performance, one curve per series."""
    fig, panels = _percent_panels(scalability, scale, panel_keys, series_keys, "efficiency", "efficiency vs base")
    for ax, g in panels:
        ax.axhline(100, color="#888888", lw=0.8, ls="--")
        ax.axhline(90, color="#bbbbbb", lw=0.6, ls=":")
        ax.set_ylim(0, max(110, float(100 * g["efficiency"].max()) + 10))
    return fig


def p1_mpi_share(profile: pd.DataFrame, scale: str, panel_keys: list[str], series_keys: list[str]) -> Figure:
    """P1 across scale: MPI share of wall time vs scale, one curve per series."""
    fig, panels = _percent_panels(profile, scale, panel_keys, series_keys, "mpi_share", "MPI time, % of wall")
    for ax, _ in panels:
        ax.set_ylim(0, 100)
    return fig


def p7_function_time(functions: pd.DataFrame, scale: str, series_keys: list[str], top: list[str]) -> Figure:
    """P2/P7: time per rank in each of the busiest MPI functions vs scale, a panel per series."""
    f = functions[functions["function"].isin(top)]
    panels = _groups(f, series_keys)
    fig, axes = _panels(len(panels))
    colours = {fn: f"C{i}" for i, fn in enumerate(top)}
    for ax, (title, g) in zip(axes, panels):
        for fn, h in g.groupby("function", sort=False):
            h = h.sort_values(scale)
            line, = ax.plot(h[scale], h["time_per_rank"], marker="o", label=fn, color=colours[fn])
            _hollow(ax, h[scale], h["time_per_rank"], _over(h), line)
        _scale_axis(ax, scale, g[scale])
        ax.set_ylabel("seconds per rank", fontsize=8)
        ax.set_title(title, fontsize=9)
        ax.legend(fontsize=7)
    _over_legend(fig, _over(f).any())
    return fig


def p6_data(profile: pd.DataFrame, scale: str, series_keys: list[str]) -> Figure:
    """P6 across scale: bytes sent per rank (left) and by the whole job (right), one curve per series."""
    fig, axes = _panels(2, width=5.2)
    for label, h in _groups(profile, series_keys):
        h = h.sort_values(scale)
        for ax, column in zip(axes, ("bytes_per_rank", "bytes")):
            line, = ax.plot(h[scale], h[column], marker="o", label=label)
            _hollow(ax, h[scale], h[column], _over(h), line)
    for ax, title in zip(axes, ("data sent per rank", "data sent, all ranks")):
        _scale_axis(ax, scale, profile[scale])
        ax.yaxis.set_major_formatter(BYTES)
        ax.set_title(title, fontsize=9)
        ax.legend(fontsize=6)
    _over_legend(fig, _over(profile).any())
    return fig


def p8_comm_share(comm: pd.DataFrame, top: list[str], oversubscribed_runs: frozenset = frozenset()) -> Figure:
    """P8: share of wall time per MPI function, one bar per value of the axis, a panel per context; the bars of
    configurations with an oversubscribed run (``oversubscribed_runs``: their IDs) hatched."""
    comm = comm.assign(oversubscribed=[bool(set(str(r).split(",")) & oversubscribed_runs) for r in comm["run_ids"]])
    panels = _groups(comm, ["context"])
    fig, axes = _panels(len(panels), width=4.6, height=2.6, left=_label_inches(comm["value"].astype(str)))
    for ax, (title, g) in zip(axes, panels):
        values = list(dict.fromkeys(g["value"].astype(str)))
        left = [0.0] * len(values)
        for i, fn in enumerate(top + ["other"]):
            sel = g[~g["function"].isin(top)] if fn == "other" else g[g["function"] == fn]
            width = [float(sel.loc[sel["value"].astype(str) == v, "pct_wall"].sum()) for v in values]
            bars = ax.barh(values, width, left=left, label=fn,
                           color=f"C{i}" if fn != "other" else CLASS_COLOURS["other"])
            for bar, v in zip(bars, values):
                if g.loc[g["value"].astype(str) == v, "oversubscribed"].any():
                    bar.set_hatch(OVERSUBSCRIBED_HATCH)
            left = [a + b for a, b in zip(left, width)]
        ax.xaxis.set_major_formatter(PERCENT)
        ax.set_xlabel("% of wall time in MPI", fontsize=8)
        context = g["context"].iloc[0]
        ax.set_title(f"{g['axis'].iloc[0]} ({context})" if context else g["axis"].iloc[0], fontsize=9)
    legend_beside(fig, *axes[0].get_legend_handles_labels())  # every panel has the same functions and colours
    _over_legend(fig, comm["oversubscribed"].any(), bars=True)
    return fig


def b9_energy(energy: pd.DataFrame, scale: str, label_keys: list[str]) -> Figure:
    """B9: yearly electricity cost of the same workload per configuration, at each application's largest scale."""
    panels = _groups(energy, ["app"])
    labels = [_label(r, label_keys) for r in energy.to_dict("records")]
    fig, axes = _panels(len(panels), width=4.6, height=2.8, left=_label_inches(labels))
    for ax, (title, g) in zip(axes, panels):
        top = g[g[scale] == g[scale].max()].sort_values("yearly_cost")
        labels = [_label(r, label_keys) for r in top.to_dict("records")]
        colours = ["#5a9e6f" if c else "#9a9a9a" for c in top["saving_claimed"].astype(bool)]
        bars = ax.barh(labels, top["yearly_cost"], color=colours)
        for bar, over in zip(bars, _over(top)):
            if over:
                bar.set_hatch(OVERSUBSCRIBED_HATCH)
        ax.set_xlabel("cost per year", fontsize=8)
        ax.set_title(f"{title} at {scale}={top[scale].iloc[0]}", fontsize=9)
        ax.tick_params(axis="y", labelsize=7)
    _over_legend(fig, _over(energy).any(), bars=True)
    return fig


VERDICT_COLOURS = {"better": "#2a9d4b", "worse": "#c0392b", "same": "#8c8c8c", "too few": "#d9d9d9",
                   "default": "#1f4e79"}


def b3_tuning(tuning: pd.DataFrame) -> Figure:
    """B3: gain of each parameter set over the default (%), with its exact test's interval, coloured by the verdict."""
    panels = list(tuning.groupby("group", sort=False))
    height = 0.9 + 0.22 * max(len(g) for _, g in panels)
    labels = tuning["params"].astype(str)
    fig, axes = _panels(len(panels), width=4.6, height=max(2.4, height), left=_label_inches(labels))
    for ax, (title, g) in zip(axes, panels):
        g = g.iloc[::-1]  # the default on top
        y = range(len(g))
        colours = [VERDICT_COLOURS.get(v, "#8c8c8c") for v in g["verdict"]]
        bars = ax.barh(list(y), g["gain_pct"], color=colours)
        for bar, over in zip(bars, _over(g)):
            if over:
                bar.set_hatch(OVERSUBSCRIBED_HATCH)
        err = [(g["gain_pct"] - g["gain_low_pct"]).fillna(0).clip(lower=0),
               (g["gain_high_pct"] - g["gain_pct"]).fillna(0).clip(lower=0)]
        ax.errorbar(g["gain_pct"], list(y), xerr=err, fmt="none", ecolor="black", capsize=2, linewidth=0.8)
        ax.set_yticks(list(y), g["params"].astype(str), fontsize=7)
        ax.axvline(0, color="black", linewidth=0.8)
        metric = g["metric"].iloc[0]
        levels = g["level"].dropna() if "level" in g else []
        level = f"{levels.min():.0%} interval" if len(levels) else "no interval"
        ax.set_xlabel(f"gain over default in {metric} (%), {level}", fontsize=8)
        ax.set_title(title, fontsize=9)
    handles = [Patch(color=c, label=v) for v, c in VERDICT_COLOURS.items() if v in set(tuning["verdict"])]
    fig.legend(handles=handles, loc="upper right", fontsize=7, ncol=len(handles))
    _over_legend(fig, _over(tuning).any(), bars=True)
    return fig
