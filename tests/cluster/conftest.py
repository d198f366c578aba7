"""Fixtures for the emulated cluster: one cluster at a time on this machine, even across test workers."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from scalewise.cluster import cluster_down
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

