"""Settings and fixtures every test shares."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from support.swtest import build_swtest

# Open MPI refuses to start as root without these.
os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")


@pytest.fixture(scope="session")
def chromium() -> str:
    """The real browser; its absence is a set-up error, not a reason to skip."""
    path = shutil.which("chromium") or "/usr/bin/chromium"
    assert Path(path).exists(), "chromium is required: make system installs it (Debian package 'chromium')"
    subprocess.run([path, "--version"], check=True, capture_output=True, timeout=60)
    return path


@pytest.fixture(scope="session")
def swtest_dir(tmp_path_factory):
    """Folder holding ``openmpi/swtest`` and ``mpich/swtest`` (support/swtest.py), compiled for this test session."""
    return build_swtest(tmp_path_factory.mktemp("swtest"))


@pytest.fixture
def write_study(tmp_path):
    """Write a study file into a fresh folder and return its path."""
    def write(text: str, name: str = "study.yaml") -> Path:
        path = tmp_path / name
        path.write_text(text)
        return path
    return write


@pytest.fixture
def under(monkeypatch):
    """under(name) -> the PyPI MPI's identity (tests/support/pypi_mpis.py), this process's environment
    that of its module loaded, installed if missing: what the commands that launch from PATH read
    (calibrate, memory, the emulated nodes' launchers, the runtime builds)."""
    from support.pypi_mpis import IDENTITIES, loaded_env

    def load(name: str) -> str:
        for key, value in loaded_env(name).items():
            if os.environ.get(key) != value:
                monkeypatch.setenv(key, value)
        return IDENTITIES[name]
    return load


def pytest_collection_modifyitems(items):
    """Tests on emulated nodes change the host's network interfaces: mark them so they run apart."""
    for item in items:
        if "emulation" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.emulated_nodes)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """A test marked ``alone`` compares the times of a planted run with what the profile says: it and
    the processes it starts (its fixtures' runs included) run ahead of the host's other work, as the
    emulated nodes do (scalewise.cluster.dedicated; root only), so a busy machine does not move them."""
    if item.get_closest_marker("alone") is None:
        yield
        return
    from scalewise.cluster.dedicated import ahead_of_others, back_to_usual
    raised = ahead_of_others(quiet=True)
    try:
        yield
    finally:
        back_to_usual(raised)
