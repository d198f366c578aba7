"""What `scalewise calibrate` prints after the fit: the measured half round trips
beside the fitted model's, each measured collective beside the replay's
prediction on the fitted network, and the ones beyond the bound."""

from __future__ import annotations

import re

from rich import box
from rich.table import Table

from scalewise.formatting import human_bytes, seconds
from scalewise.whatif.calibrate.collbench import BOUND, off_bound
from scalewise.whatif.calibrate.pingpong import Calibration
from scalewise.whatif.network import MeasuredCollective, Network, Shaping


def _short(algorithm: str) -> str:
    """MPICH's function names without the part the row already says: MPIR_Bcast_intra_binomial -> binomial."""
    return re.sub(r"^MPIR_[A-Za-z]+_intra_", "", algorithm)


def _label(c: MeasuredCollective) -> str:
    return c.name if c.name == "MPI_Barrier" else f"{c.name} {human_bytes(c.bytes)}"


def collectives_table(net: Network, library: str, statistic: str) -> Table:
    """One row per measured collective (all from one run, so one rank count, in the title); ``error`` is
    predicted over measured, less 1."""
    entries = net.collectives or []
    ranks = ", ".join(sorted({str(c.ranks) for c in entries}))
    t = Table(title=f"{library}, {ranks} ranks: collectives measured ({statistic}, slowest rank) and replayed",
              box=box.SIMPLE_HEAD, padding=(0, 1, 0, 0), pad_edge=False)
    for k in ("collective", "size", "algorithm", "measured", "predicted", "error"):
        t.add_column(k, justify="left" if k in ("collective", "algorithm") else "right")
    for c in entries:
        t.add_row(c.name, "" if c.name == "MPI_Barrier" else human_bytes(c.bytes), _short(c.algorithm),
                  seconds(c.measured_us * 1e-6), seconds(c.predicted_us * 1e-6), f"{c.error * 100:+.0f}%")
    return t


def bound_sentence(net: Network) -> str:
    """Which collectives the replay misses by more than the bound, in one line."""
    off = off_bound(net)
    if not off:
        return f"every collective's prediction is within {BOUND:.0%} of its measurement"
    named = ", ".join(f"{_label(c)} ({c.error * 100:+.0f}%)" for c in off)
    return f"off by more than {BOUND:.0%}: {named}"


def _one_way(net: Network, nbytes: int) -> float:
    """The replay of one message of ``nbytes`` from rank 0 to rank 1 on a rested link: the model's half round trip."""
    from scalewise.whatif.api import replay
    from scalewise.whatif.trace import Call, from_calls

    [p] = replay(from_calls([[Call("MPI_Send", 1, nbytes)], [Call("MPI_Recv", 0, nbytes)]]), net)
    return p.wall_time


def points_table(cal: Calibration, statistic: str) -> Table:
    """What the ping-pong measured at each size (the fastest and the median half round trip, their
    spread) beside what the fitted network gives there: measured points, not the fit's pieces."""
    best, median = cal.points["best"], cal.points["median"]
    t = Table(title=f"{cal.network.name}: half round trips measured (fitted: {statistic}; "
                    f"o {cal.overhead * 1e6:.2f} us per message)", box=box.SIMPLE_HEAD, padding=(0, 1, 0, 0),
              pad_edge=False)
    for k in ("size", "fastest", "median", "median/fastest", "model", "payload rate"):
        t.add_column(k, justify="right")
    for size in sorted(best):
        chosen = cal.points[statistic][size]
        rate = f"{8 * size / chosen / 1e9:.3g} Gbit/s" if size >= 1024 and chosen > 0 else ""
        t.add_row(human_bytes(size), seconds(best[size]), seconds(median[size]),
                  f"{median[size] / best[size]:.2f}" if best[size] > 0 else "", seconds(_one_way(cal.network, size)),
                  rate)
    return t


def shaping_sentence(s: Shaping) -> str:
    """The shaped link as the replay models it, in one line."""
    return (f"shaped: {s.bucket_bytes} B bucket at {s.rate_gbit_s:g} Gbit/s ({s.source}); large messages "
            f"measured at {s.payload_share:.1%} of it as payload ({s.rate_gbit_s * s.payload_share * 1e3:.0f} Mbit/s)")


def duplex_sentence(cal: Calibration) -> str:
    """The both-ways exchanges and what the network took from them, in one line."""
    net = cal.network
    took = ", ".join(f"{r:.2f}" for r in cal.both_ways_launches)
    mean = ", ".join(f"{r:.2f}" for r in cal.both_ways_means)
    if net.duplex == "half":
        verdict = "half duplex: the directions take turns"
    elif net.both_ways is not None:
        verdict = f"full duplex, both_ways {net.both_ways:g}"
    else:
        verdict = "no duplex term (the launches disagree; see the warning)"
    return (f"both ways at once: {took} times the fastest one way in {len(cal.both_ways_launches)} launches (median "
            f"exchange), {mean} (mean exchange); {verdict}")
