"""What the figures of both levels share: class colours, tick labels and margins in inches."""

from __future__ import annotations

from matplotlib.ticker import FuncFormatter

from scalewise.formatting import human_bytes

CLASS_COLOURS = {
    "p2p": "#3b75af", "collective": "#c8413b", "wait": "#e6952e", "test": "#f2c45a", "rma": "#7b5ea7",
    "io": "#5a9e6f", "comm": "#8c8c8c", "init": "#b0b0b0", "other": "#d0d0d0",
}
BYTES = FuncFormatter(lambda v, _pos: human_bytes(v))
PERCENT = FuncFormatter(lambda v, _pos: f"{v:.0f}%")
# Plain numbers on log axes: matplotlib's default "10^k" labels go through its
# TeX-like parser, which cost more than drawing the rest of the figure.
COUNT = FuncFormatter(lambda v, _pos: f"{v:,.0f}" if v >= 1 else f"{v:g}")


def label_inches(labels, fontsize: float = 8, pad: float = 0.25) -> float:
    """Room for the longest tick label, at about 0.6 em per character."""
    return pad + max((len(str(s)) for s in labels), default=4) * fontsize * 0.6 / 72
