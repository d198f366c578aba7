"""Fixtures for the emulated cluster: one cluster at a time on this machine, even across test workers.

Two kinds of test use it. ``emulation`` is for a test about the cluster's life (up, down, what a crash
leaves, a study or measurement that brings its own up and down): it starts from no cluster and leaves
none. ``two_nodes`` is for a test that only needs two nodes to run on: it gets the session's pair of
nodes, at the default queue and the cluster's launch settings, and may reshape its links (cluster_up
does that in place); the pair stays up for the next such test instead of being built again
(namespaces, veths, bridge, shaping) and taken down each time. The emulated tests are ordered so the
``two_nodes`` ones run one after another (conftest.py at the top)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from scalewise.cluster import cluster_down, cluster_up, current_cluster, parse_rate
from scalewise.cluster.links import DEFAULT_QUEUE_US
from scalewise.cluster.lock import cluster_lock


def _why_not() -> str | None:
    if os.geteuid() != 0:
        return "emulated nodes need root (network namespaces, veth, tc)"
    for tool in ("ip", "tc", "unshare", "nsenter", "taskset"):
        if shutil.which(tool) is None:
            return f"emulated nodes need {tool}"
    if not Path("/proc/self/ns/net").exists():
        return "this kernel has no network namespaces"
    return None


@pytest.fixture
def emulation():
    """Holds the machine-wide cluster lock for one test; takes any cluster down before and after."""
    why = _why_not()
    if why:
        pytest.skip(why)
    with cluster_lock():
        cluster_down()
        try:
            yield
        finally:
            cluster_down()


@pytest.fixture(scope="session")
def _pair_kept_up():
    """The session's two nodes are taken down when the session ends (and before its first use, so a
    cluster some earlier run left behind is not taken for them)."""
    state = {"fresh": False}
    yield state
    if state["fresh"]:
        with cluster_lock():
            cluster_down()


@pytest.fixture
def two_nodes(_pair_kept_up):
    """Holds the cluster lock for one test and gives it two emulated nodes: the ones the previous
    ``two_nodes`` test used when they are still whole, at the default queue and launch settings
    (a test may have changed either), their links at whatever rate they had (each test sets its own)."""
    why = _why_not()
    if why:
        pytest.skip(why)
    with cluster_lock():
        if not _pair_kept_up["fresh"]:
            cluster_down()
            _pair_kept_up["fresh"] = True
        running = current_cluster()
        rate = running.rate_bits if running and len(running.nodes) == 2 else parse_rate("gige")
        cluster_up(2, rate, queue_us=DEFAULT_QUEUE_US, tcp_defaults=False)
        yield
