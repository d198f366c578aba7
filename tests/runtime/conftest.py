"""Fixtures of the runtime tests: the profiler libraries, test programs
compiled per MPI flavour, and MPI jobs run once per (program, flavour,
nranks) and shared by every test (and every xdist worker) that reads them."""

from __future__ import annotations

import fcntl
import hashlib
import json
import subprocess
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from support import mpijob


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
        with _locked(shared_dir / f"job-{key}.lock"):
            if not result.is_file():
                workdir.mkdir(exist_ok=True)
                args = [str(a).replace("{workdir}", str(workdir)) for a in argv]
                if options.get("extra_env"):
                    options["extra_env"] = {k: str(v).replace("{workdir}", str(workdir))
                                            for k, v in options["extra_env"].items()}
                res = mpijob.run(flavour, nranks, args, workdir / "job.swlog", cwd=workdir, **options)
                result.write_text(json.dumps([res.returncode, res.stdout, res.stderr]))
        rc, out, err = json.loads(result.read_text())
        return Job(rc, out, err, workdir / "job.swlog", workdir)

    return run
