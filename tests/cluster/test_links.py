"""Link settings as tc takes them: rates, the queue, the shaping a calibration records."""

from __future__ import annotations

import pytest

from scalewise.cluster.links import (DEFAULT_QUEUE_US, bucket_bytes, link_shaping, parse_queue, queue_text,
                                     tbf_args)
from scalewise.errors import ScalewiseError


@pytest.mark.parametrize("text, us", [("2ms", 2000), ("500us", 500), ("0.1s", 100_000), (" 3 MS ", 3000),
                                      ("1.5ms", 1500)])
def test_queue_times(text, us):
    assert parse_queue(text) == us


@pytest.mark.parametrize("text", ["", "deep", "2", "0ms", "-1ms", "11s", "2 kb"])
def test_a_queue_that_is_not_a_time_is_refused(text):
    with pytest.raises(ScalewiseError, match=f"link queue '{text}' is not a time"):
        parse_queue(text)


def test_tbf_gets_the_bucket_and_the_queue():
    assert tbf_args(10**8, 3000) == ["tbf", "rate", "100000000bit", "burst", str(bucket_bytes(10**8)),
                                     "latency", "3000us"]
    assert tbf_args(10**9)[-1] == f"{DEFAULT_QUEUE_US}us"


def test_the_shaping_names_the_queue():
    shaping = link_shaping(10**9, 100_000)
    assert shaping["rate_gbit_s"] == 1.0 and shaping["bucket_bytes"] == bucket_bytes(10**9)
    assert shaping["source"] == "tc tbf of the emulated links, 1 Gbit/s, queue 100 ms"
    assert queue_text(500) == "500 us" and queue_text(2500) == "2.5 ms"
