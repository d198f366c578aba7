"""Names and places every part of the emulated cluster agrees on."""

from __future__ import annotations

import os
from pathlib import Path

SUBNET = "10.213.0"  # the one private /24 the nodes and the host side use
HOST_ADDRESS = f"{SUBNET}.254"
NODE_PREFIX = "swnode"  # node N's hostname is swnodeN
NOT_ROOT = "cluster: emulating nodes needs root (network namespaces, veth, tc)"


def state_dir() -> Path:
    return Path(os.environ.get("SCALEWISE_CLUSTER_DIR", "/run/scalewise-cluster"))
