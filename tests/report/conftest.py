"""Fixtures of the report tests: where artifacts go, and the real browser."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "report"


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


@pytest.fixture(scope="session")
def chromium() -> str:
    """The real browser; its absence is a set-up error, not a reason to skip."""
    path = shutil.which("chromium") or "/usr/bin/chromium"
    assert Path(path).exists(), "chromium is required: make system installs it (Debian package 'chromium')"
    subprocess.run([path, "--version"], check=True, capture_output=True, timeout=60)
    return path
