"""The figures of the connection-memory page."""

from __future__ import annotations

from scalewise.memory import figures
from scalewise.report.figure import FigureSpec

SECTIONS = {"memory": "Connection memory"}

FIGURES = [
    FigureSpec(
        id="b10-memory-vs-nodes", ref="B10", section="memory", title="MPI memory per node vs node count",
        function=figures.b10_memory_vs_nodes,
        arguments=lambda a: (a.projection, a.target.node_memory, a.target.ranks_per_node),
        caption="Fixed cost plus measured bytes per connected peer (user space and the kernel's socket objects), "
                "times the peers each set-up connects: all ranks (eager) or the application's neighbours "
                "(on-demand); the shaded band is the interval of ±2 standard errors of the fit; the dotted line is "
                "the node's memory.",
        missing=lambda a: None if len(a.projection) else "no fit: the probe produced no readings",
    ),
]
