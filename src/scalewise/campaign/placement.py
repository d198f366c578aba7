"""Where a run's ranks sat: cores on a node, ranks on the busiest node, and whether they shared cores.

A run whose ranks (times their threads) outnumber a node's cores measures the
sharing, not the application: busy-polling MPI ranks starve each other, so
such a run may be many times slower under one library than another for no
reason a real cluster would show.  The scheduler reports the placement when it
knows it (``Launch.placement``); otherwise the ranks are spread evenly over
the nodes and a node has the campaign host's cores (Slurm on this host).
"""

from __future__ import annotations

import os


def ranks_on_busiest_node(ranks: int, nodes: int) -> int:
    return -(-ranks // max(nodes, 1))


def placement(ranks: int, nodes: int, threads: int, known: tuple[int, int] | None,
              host_cores: int | None = None) -> tuple[int, int, bool]:
    """(cores per node, ranks on the busiest node, oversubscribed)."""
    cores, placed = known if known else (host_cores or os.cpu_count() or 1, ranks_on_busiest_node(ranks, nodes))
    return cores, placed, placed * max(threads, 1) > cores
