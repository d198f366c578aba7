"""What the figures of both levels share: class colours, tick labels and margins in inches."""

from __future__ import annotations

from matplotlib import colormaps
from matplotlib.backends.backend_agg import RendererAgg
from matplotlib.colors import to_hex
from matplotlib.ticker import FuncFormatter

from scalewise.formatting import human_bytes

CLASS_COLOURS = {
    "p2p": "#3b75af", "collective": "#c8413b", "wait": "#e6952e", "test": "#f2c45a", "rma": "#7b5ea7",
    "io": "#5a9e6f", "comm": "#8c8c8c", "local": "#a6bddb", "init": "#b0b0b0", "other": "#d0d0d0",
}
BYTES = FuncFormatter(lambda v, _pos: human_bytes(v))
PERCENT = FuncFormatter(lambda v, _pos: f"{v:.0f}%")
# Plain numbers on log axes: matplotlib's default "10^k" labels go through its
# TeX-like parser, which cost more than drawing the rest of the figure.
COUNT = FuncFormatter(lambda v, _pos: f"{v:,.0f}" if v >= 1 else f"{v:g}")


def label_inches(labels, fontsize: float = 8, pad: float = 0.25) -> float:
    """Room for the longest tick label, at about 0.6 em per character."""
    return pad + max((len(str(s)) for s in labels), default=4) * fontsize * 0.6 / 72


# The widest a figure is shown: style.css's 1180 px body less its padding and the image border.  A wider
# figure is scaled down to it, and its text with it.
PAGE_COLUMN_PX = 1130
PX_PER_INCH = 96  # an SVG figure of w inches (72 w pt) is 96 w CSS px wide at its natural size
# Legend text is never shown smaller than this, in CSS px at the page's display size.
MIN_LEGEND_PX = 10.5


def legend_points(figure_inches: float) -> float:
    """The legend font size (pt) that a figure this wide shows at MIN_LEGEND_PX or more on the page."""
    shrink = min(1.0, PAGE_COLUMN_PX / (figure_inches * PX_PER_INCH))
    return MIN_LEGEND_PX * 72 / PX_PER_INCH / shrink


def legend_inches(labels, points: float) -> float:
    """A first guess at a one-column legend's width: handle and gap (about 3 em), the longest label at about
    0.6 em per character, and room either side."""
    return (3.0 + 0.6 * max((len(str(s)) for s in labels), default=4) + 1.2) * points / 72


def legend_beside(fig, handles, labels, title: str | None = None) -> None:
    """The legend in a column of its own right of every axes: it can never cover a bar, a line or a label.

    The figure is widened by the legend's measured width, every axes keeping its size and place in inches
    (margins are fixed in inches, figure.py), and the legend gets the font size the page shows at
    MIN_LEGEND_PX or more.  Measuring lays out the legend's text only, not the figure."""
    width, height = fig.get_size_inches()
    words = list(labels) + ([title] if title else [])
    points = legend_points(width)
    for _ in range(3):  # the font size depends on the final width, and the width on the font size
        points = legend_points(width + legend_inches(words, points))
    legend = fig.legend(handles, labels, loc="upper left", fontsize=points, title=title, title_fontsize=points,
                        frameon=False, borderaxespad=0.0)
    gap = 0.1  # inches between the old right edge and the legend
    extra = legend.get_window_extent(RendererAgg(1, 1, fig.dpi)).width / fig.dpi + 2 * gap
    boxes = [(ax, ax.get_position()) for ax in fig.axes]
    fig.set_size_inches(width + extra, height)
    scale = width / (width + extra)
    for ax, box in boxes:
        ax.set_position([box.x0 * scale, box.y0, box.width * scale, box.height])
    top = max(box.y1 for _, box in boxes) if boxes else 1.0
    legend.set_bbox_to_anchor((scale + gap / (width + extra), top), transform=fig.transFigure)


# POP's colour scale for efficiencies, continuous as POP's tools draw it: red
# up to 40%, through yellow at 70%, to green at 100% and above, so that 80% and
# up reads green, 60-80% yellow to orange and below 60% red (docs/pop.md).
EFFICIENCY_RED, EFFICIENCY_GREEN = 0.40, 1.00


def efficiency_colour(value: float) -> str:
    """The background of an efficiency (0..1) in a POP table, as #rrggbb; "" when it is unknown."""
    if value != value:  # NaN
        return ""
    t = min(max((value - EFFICIENCY_RED) / (EFFICIENCY_GREEN - EFFICIENCY_RED), 0.0), 1.0)
    return to_hex(colormaps["RdYlGn"](t))


def efficiency_style(value: float) -> str:
    """The CSS of an efficiency's cell: its colour, with white text where the colour is dark (the scale's ends)."""
    background = efficiency_colour(value)
    if not background:
        return ""
    r, g, b = (int(background[i:i + 2], 16) for i in (1, 3, 5))
    dark = 0.299 * r + 0.587 * g + 0.114 * b < 140  # perceived brightness, 0..255
    return f"background-color: {background}" + ("; color: #ffffff" if dark else "")
