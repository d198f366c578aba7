"""Session fixture for the proxy-app tests: build every proxy once."""
from __future__ import annotations

import fcntl
import subprocess
from pathlib import Path

import pytest

from proxy_harness import APPS, BUILD, ROOT, binary
from support.mpijob import FLAVOURS


@pytest.fixture(scope="session")
def proxies_built() -> Path:
    """Builds (or incrementally refreshes) every proxy for every flavour.
    A file lock keeps parallel test workers from compiling the same files."""
    BUILD.mkdir(exist_ok=True)
    with open(BUILD / ".proxies-build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        proc = subprocess.run(
            ["make", "-C", str(ROOT / "proxies"), f"BUILD={BUILD}",
             f"FLAVOURS={' '.join(FLAVOURS)}"],
            capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"proxy build failed:\n{proc.stdout}\n{proc.stderr}"
    for flavour in FLAVOURS:
        for app in APPS:
            assert binary(flavour, app).is_file(), f"missing {binary(flavour, app)}"
    return BUILD
