"""A collective's per-call cost that its point-to-point decomposition lacks.

`scalewise calibrate` times a few collectives and keeps each beside the replay
of one such call on the fitted ranges (the network file's ``collectives``).
What the library spends beyond that replay (argument checks, algorithm
selection, requests, the reduction itself, the exchange both ways at once)
is charged to every rank's call of that collective as time inside the call
before it posts its messages: measured less predicted, interpolated linearly
in bytes between the measured sizes and held beyond them, never below 0.
Only calls with the measured number of ranks get it, and only when the
network was calibrated with the library the replay runs (docs/whatif.md).
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from scalewise.whatif.network import Network


def extra_seconds(net: Network, library: str) -> dict[tuple[str, int], tuple[np.ndarray, np.ndarray]]:
    """(collective, ranks) -> (measured sizes, seconds to add at each), for ``library``'s replay."""
    if not net.collectives or (net.library and net.library != library):
        return {}
    points: dict[tuple[str, int], list[tuple[int, float]]] = defaultdict(list)
    for c in net.collectives:
        points[(c.name, c.ranks)].append((c.bytes, max(c.measured_us - c.predicted_us, 0.0) * 1e-6))
    return {key: (np.array([b for b, _ in sorted(p)], dtype=np.float64), np.array([x for _, x in sorted(p)]))
            for key, p in points.items()}


def call_costs(net: Network, library: str, functions: list[str], calls: np.ndarray) -> np.ndarray:
    """Seconds to add to each collective call (rows of engine.CALL) on ``net``."""
    cost = np.zeros(len(calls), dtype=np.float64)
    for (name, ranks), (sizes, extra) in extra_seconds(net, library).items():
        if name not in functions:
            continue
        hit = (calls["func"] == functions.index(name)) & (calls["ranks"] == ranks)
        cost[hit] = np.interp(calls["bytes"][hit].astype(np.float64), sizes, extra)
    return cost
