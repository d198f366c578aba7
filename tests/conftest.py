"""Settings and fixtures every test shares; among them the profiler libraries, test programs compiled per
MPI flavour, and MPI jobs run once per key and shared by every test (and every xdist worker) that reads them."""

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from support import mpijob
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


@contextmanager
def _locked(path: Path):
    """An exclusive lock shared by the xdist workers of this run."""
    with open(path, "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        yield


@pytest.fixture(scope="session")
def shared_dir(tmp_path_factory, worker_id) -> Path:
    """A directory common to all workers of this test run (and to no other run)."""
    base = tmp_path_factory.getbasetemp()
    root = (base.parent if worker_id != "master" else base) / "runtime-shared"
    root.mkdir(exist_ok=True)
    return root


@pytest.fixture(scope="session")
def profiler_libs() -> dict[str, Path]:
    """Both libraries, built (under a lock, workers share the tree) if missing."""
    libs = {f: mpijob.library(f) for f in mpijob.FLAVOURS}
    if not all(p.is_file() for p in libs.values()):
        with _locked(mpijob.REPO / "build" / ".runtime-test.lock"):
            subprocess.run(["make", "-s", "-C", str(mpijob.REPO / "runtime"), f"BUILD={mpijob.REPO / 'build'}"],
                           check=True, capture_output=True, timeout=600)
    return libs


@pytest.fixture(scope="session")
def program(shared_dir):
    """program(source name, flavour, defines=()) -> executable, compiled once per run.
    The binary's name carries a hash of the source, so an edited source is rebuilt."""

    def build(name: str, flavour: str, defines: tuple[str, ...] = ()) -> Path:
        src = mpijob.PROGRAMS / name
        tag = hashlib.sha256(src.read_bytes() + repr(defines).encode()).hexdigest()[:10]
        out_dir = shared_dir / f"bin-{flavour}-{src.stem}-{tag}"
        exe = out_dir / src.stem
        with _locked(shared_dir / f"{out_dir.name}.lock"):
            if not exe.is_file():
                out_dir.mkdir(exist_ok=True)
                cmd = mpijob.compile_command(flavour, src, exe, defines)
                res = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
                assert res.returncode == 0, f"{' '.join(cmd)} failed:\n{res.stderr}"
        return exe

    return build


@dataclass
class Job:
    returncode: int
    stdout: str
    stderr: str
    logfile: Path
    workdir: Path


@pytest.fixture(scope="session")
def mpi_job(shared_dir, profiler_libs):
    """mpi_job(key, flavour, nranks, argv, **run options) -> Job, run once per key.
    The first worker to ask runs it; the others read its recorded result.  argv
    and the values of extra_env may contain "{workdir}", replaced by the job's own directory."""

    def run(key: str, flavour: str, nranks: int, argv: list, **options) -> Job:
        workdir = shared_dir / f"job-{key}"
        result = workdir / "result.json"
        # Tests in other folders share a job by asking for the same key; the same key with another launch
        # would read a run that is not theirs. An empty argv reads the job as recorded. The program counts
        # by its name: xdist workers that compile one into folders of their own share its first run.
        launch = [flavour, nranks, [Path(str(a)).name if i == 0 else str(a) for i, a in enumerate(argv)],
                  {k: str(v) for k, v in (options.get("extra_env") or {}).items()}]
        with _locked(shared_dir / f"job-{key}.lock"):
            if not result.is_file():
                workdir.mkdir(exist_ok=True)
                args = [str(a).replace("{workdir}", str(workdir)) for a in argv]
                if options.get("extra_env"):
                    options["extra_env"] = {k: str(v).replace("{workdir}", str(workdir))
                                            for k, v in options["extra_env"].items()}
                res = mpijob.run(flavour, nranks, args, workdir / "job.swlog", cwd=workdir, **options)
                result.write_text(json.dumps([res.returncode, res.stdout, res.stderr, launch]))
        rc, out, err, recorded = json.loads(result.read_text())
        assert not argv or recorded == launch, f"job {key}: recorded as {recorded}, asked as {launch}"
        return Job(rc, out, err, workdir / "job.swlog", workdir)

    return run


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
    """Tests on emulated nodes change the host's network interfaces: mark them so they run apart.
    Those on the session's two nodes (tests/cluster/conftest.py) run last, one after another, so the
    nodes are built once, not again after each test that takes every cluster down."""
    for item in items:
        if {"emulation", "two_nodes"} & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.emulated_nodes)
    items.sort(key=lambda item: "two_nodes" in getattr(item, "fixturenames", ()))


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
