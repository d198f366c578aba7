"""Small hand-checkable networks for the what-if tests."""

import math

from scalewise.whatif.network import Network


def loggp(latency_us=2.0, overhead_us=1.0, gap_us=0.0, gbit_s=8.0, eager_limit=1 << 20) -> Network:
    """A one-range network; 8 Gbit/s makes G exactly 1 ns per byte."""
    return Network(name="hand", eager_limit=eager_limit,
                   ranges=[dict(upto=math.inf, latency_us=latency_us, overhead_us=overhead_us, gap_us=gap_us,
                                bandwidth_gbit_s=gbit_s)])
