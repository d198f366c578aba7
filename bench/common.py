"""What the benchmarks share: the repository, how to build and launch a
small MPI program bare or under the profiler, and result tables.  The
scripts import the installed scalewise package; those that need the test
suite's synthetic builders (tests/support) run with PYTHONPATH=tests, as
bench/run-all.sh does."""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "SCALEWISE_QUIET": "1"}


def table(title: str, *columns: str) -> Table:
    """A table of numbers: every column right-aligned."""
    t = Table(title=title)
    for col in columns:
        t.add_column(col, justify="right")
    return t


def launcher(flavour: str, n: int) -> list[str]:
    if flavour == "openmpi":
        # osc sm,pt2pt: Open MPI 4.1's default one-sided component fails on one rank over shared memory
        return ["mpirun.openmpi", "--oversubscribe", "--bind-to", "none", "--mca", "btl", "self,vader",
                "--mca", "osc", "sm,pt2pt", "-np", str(n)]
    return ["mpiexec.mpich", "-n", str(n)]


def build(flavour: str, src: str, outdir: Path) -> Path:
    """bench/<src> compiled with this flavour's mpicc into ``outdir``."""
    exe = outdir / f"{Path(src).stem}-{flavour}"
    subprocess.run([f"mpicc.{flavour}", "-O2", "-o", str(exe), str(ROOT / "bench" / src)], check=True)
    return exe


def run_once(cmd: list[str], preload: Path | None, log: Path,
             extra: dict[str, str] | None = None) -> dict[str, list[float] | int]:
    """One run of a bench program: its kernels' calls per iteration and times, and rank 0's memory high-water mark."""
    env = {**ENV, **(extra or {})}
    if preload:
        env["LD_PRELOAD"] = str(preload)
        env["SCALEWISE_LOGFILE"] = str(log)
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout
    res: dict = {}
    for line in out.splitlines():
        fields = dict(f.split("=", 1) for f in line.split())
        if "kernel" in fields:
            res[fields["kernel"]] = (int(fields["calls_per_iter"]), [float(x) for x in fields["ns_per_iter"].split(",")])
        elif "vm_hwm_kib" in fields:
            res["hwm"] = int(fields["vm_hwm_kib"])
    return res


@contextmanager
def on_emulated_cluster() -> Iterator[Path]:
    """The frame of a bench on the emulated cluster: this process and the ranks it starts ahead of
    the host's other work, the cluster lock held, no cluster up before or after, a scratch folder;
    the load average printed before and after."""
    from scalewise.cluster import cluster_down
    from scalewise.cluster.dedicated import ahead_of_others
    from scalewise.cluster.lock import cluster_lock

    ahead_of_others()
    print(f"load before: {os.getloadavg()[0]:.2f}", flush=True)
    with cluster_lock(), tempfile.TemporaryDirectory() as tmp:
        try:
            cluster_down()
            yield Path(tmp)
        finally:
            cluster_down()
    print(f"load after: {os.getloadavg()[0]:.2f}")

