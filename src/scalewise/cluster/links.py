"""Link speeds: the studies' networks by name, and rates written as tc writes them.

A preset names the network a study compared and the line rate it stands for.
Latency is not a preset: this kernel has no netem, so a link's latency is what
the veth pair and the MPI library give; it is measured (``cluster check``),
never configured or claimed.  A link's queue is a setting: how long a packet
may wait in front of the shaper (tbf ``latency``), as the buffer of a switch
port would hold it.
"""

from __future__ import annotations

import re

from scalewise.errors import ScalewiseError

# name -> (bits per second, what it stands for)
LINK_PRESETS: dict[str, tuple[int, str]] = {
    "fe": (100_000_000, "Fast Ethernet, 100 Mbit/s"),
    "gige": (1_000_000_000, "Gigabit Ethernet, 1 Gbit/s"),
    "10gige": (10_000_000_000, "10 Gigabit Ethernet, 10 Gbit/s"),
    "25gige": (25_000_000_000, "25 Gigabit Ethernet, 25 Gbit/s"),
}

_UNITS = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9}
_QUEUE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|ms|us)\s*$", re.IGNORECASE)
_QUEUE_UNITS = {"s": 1_000_000, "ms": 1_000, "us": 1}

# How long a packet may wait in a link's queue.  Switch ports buffer on the order of 100 KB each
# (a few MB shared by tens of ports), 1 ms at 1 Gbit/s, 8 ms at 100 Mbit/s; Linux hosts keep a
# sparse flow's packets ahead of a bulk flow's (fq_codel, 5 ms target).  Behind 100 ms Open MPI's
# exchanges took turns at 1 Gbit/s too (docs/decisions.md).
DEFAULT_QUEUE_US = 2_000
# What every cluster was built with before the queue was a setting: a cluster recorded
# without one has it.
EARLIER_QUEUE_US = 100_000
_RATE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmg]?)(?:bit|b)?(?:/s|ps)?\s*$", re.IGNORECASE)


def parse_rate(text: str) -> int:
    """Bits per second from ``100mbit``, ``1gbit``, ``2.5G``, ``10gbit/s`` or a preset name."""
    key = text.strip().lower()
    if key in LINK_PRESETS:
        return LINK_PRESETS[key][0]
    m = _RATE.match(key)
    if not m or float(m.group(1)) <= 0:
        raise ScalewiseError(f"link rate '{text}' is neither a preset ({', '.join(LINK_PRESETS)}) "
                             "nor a rate such as 100mbit or 1gbit")
    return int(float(m.group(1)) * _UNITS[m.group(2).lower()])


def rate_names(bits: int) -> list[str]:
    """Every name a study's ``interconnect`` may give this rate: its presets and its rate (``gige``, ``1gbit``)."""
    names = [name for name, (rate, _) in LINK_PRESETS.items() if rate == bits]
    for unit, scale in (("gbit", 10**9), ("mbit", 10**6), ("kbit", 10**3)):
        if bits % scale == 0:
            return names + [f"{bits // scale}{unit}"]
    return names + [f"{bits}bit"]


def rate_text(bits: int) -> str:
    """``1 Gbit/s``, ``100 Mbit/s``."""
    for unit, scale in (("Gbit/s", 10**9), ("Mbit/s", 10**6), ("kbit/s", 10**3)):
        if bits >= scale:
            return f"{bits / scale:g} {unit}"
    return f"{bits} bit/s"


def bucket_bytes(bits: int) -> int:
    """The token bucket of a link shaped to ``bits`` per second: 100 us of traffic, at least
    64 KiB (one GSO segment).  A bigger bucket lets each message of a ping-pong start at full
    speed and overshoots the rate (a 1 MiB bucket gave 112-120% of 1 Gbit/s with 4 MiB
    messages; 128 KiB gave 98%).  A rested link passes this much at memory speed, which the
    what-if replay models (scalewise calibrate --cluster records it)."""
    return max(64 * 1024, bits // 8 // 10_000)


def parse_queue(text: str) -> int:
    """Microseconds from ``2ms``, ``500us``, ``0.1s``: how long a packet may wait in a link's queue."""
    m = _QUEUE.match(text)
    us = round(float(m.group(1)) * _QUEUE_UNITS[m.group(2).lower()]) if m else 0
    if us < 1 or us > 10_000_000:
        raise ScalewiseError(f"link queue '{text}' is not a time from 1us to 10s such as 2ms or 500us")
    return us


def queue_text(us: int) -> str:
    """``2 ms``, ``500 us``."""
    return f"{us / 1000:g} ms" if us >= 1000 else f"{us} us"


def tbf_args(bits: int, queue_us: int = DEFAULT_QUEUE_US) -> list[str]:
    """``tc qdisc ... tbf`` parameters for a rate: its bucket, and a queue of ``queue_us`` of traffic
    beyond it (tc makes the queue's byte limit rate x latency + burst)."""
    return ["tbf", "rate", f"{bits}bit", "burst", str(bucket_bytes(bits)), "latency", f"{queue_us}us"]


# Shaped links here delivered 90-97% of up to 10 Gbit/s, 85-97% of 25 Gbit/s,
# and unshaped ones 27-50 Gbit/s between two ranks; beyond this
# a configured rate is not what the link delivers.
SUSTAINED_BITS = 10_000_000_000


def link_shaping(bits: int, queue_us: int = DEFAULT_QUEUE_US) -> dict[str, object]:
    """The token bucket every emulated link of ``bits`` per second is shaped with, as the what-if
    replay's ``Shaping`` takes it (``Shaping(**link_shaping(bits, queue_us))``); the source names
    the queue, which decides whether Open MPI's exchanges take turns."""
    return {"rate_gbit_s": bits / 1e9, "bucket_bytes": bucket_bytes(bits),
            "source": f"tc tbf of the emulated links, {rate_text(bits)}, queue {queue_text(queue_us)}"}
