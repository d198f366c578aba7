"""Helpers for the proxy-app tests: where the binaries are, how to launch them
under each MPI flavour, and parsing of the SCALEWISE_RESULT line and the
'# app:' note line."""
from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "build"
APPS = ("sem", "ocean", "amr", "dft")
RUN_TIMEOUT = 120

RESULT_KEYS = (
    "app", "ranks", "size", "fom", "fom_unit", "higher_is_better", "wall", "check", "status",
)


def binary(flavour: str, app: str) -> Path:
    return BUILD / flavour / "proxies" / app


def launcher(flavour: str, nranks: int) -> list[str]:
    if flavour == "openmpi":
        return ["mpirun.openmpi", "--oversubscribe", "--mca", "btl", "self,vader",
                "-np", str(nranks)]
    return ["mpiexec.mpich", "-n", str(nranks)]


def mpi_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
    env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
    env.update(extra or {})
    return env


@dataclass
class ProxyRun:
    returncode: int
    stdout: str
    stderr: str
    results: list[dict[str, str]] = field(default_factory=list)
    note: dict[str, str] = field(default_factory=dict)

    @property
    def result(self) -> dict[str, str]:
        assert len(self.results) == 1, (
            f"expected exactly one SCALEWISE_RESULT line, got {len(self.results)}:\n"
            f"{self.stdout}\n{self.stderr}")
        return self.results[0]


def parse_output(stdout: str) -> tuple[list[dict[str, str]], dict[str, str]]:
    results, note = [], {}
    for line in stdout.splitlines():
        if line.startswith("SCALEWISE_RESULT "):
            results.append(dict(kv.split("=", 1) for kv in line.split()[1:]))
        elif re.match(r"^# \w+: ", line):
            note.update(dict(kv.split("=", 1) for kv in line.split(": ", 1)[1].split()
                             if "=" in kv))
    return results, note


def run_proxy(flavour: str, app: str, nranks: int, *args: str,
              env: dict[str, str] | None = None) -> ProxyRun:
    cmd = launcher(flavour, nranks) + [str(binary(flavour, app)), *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=RUN_TIMEOUT,
                          env=mpi_env(env), stdin=subprocess.DEVNULL)
    results, note = parse_output(proc.stdout)
    return ProxyRun(proc.returncode, proc.stdout, proc.stderr, results, note)
