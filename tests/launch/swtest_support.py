"""Real parts for campaign and launch tests: a small MPI program and a localhost Slurm.

Imported by tests/launch/conftest.py and tests/campaign/conftest.py.
"""

from __future__ import annotations

import os
import random
import shutil
import socket
import sqlite3
import subprocess
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from scalewise.campaign.runner import store_path
from scalewise.cluster.slurm import base_config

# Rank 0 echoes its arguments and the variables named in SWTEST_ECHO_ENV, then
# prints the result line the proxy apps print.  --sleep S holds every rank in
# MPI for S seconds, --exit N ends with status N, --fail reports status=FAIL,
# --abort N has the last rank call MPI_Abort with code N, --segv crashes rank 0.
SWTEST_C = r"""
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, code = 0, fail = 0, abort_code = -1, segv = 0;
    double sleep_s = 0;
    const char *sz = "none";
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--sleep") && i + 1 < argc) sleep_s = atof(argv[++i]);
        else if (!strcmp(argv[i], "--exit") && i + 1 < argc) code = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--size") && i + 1 < argc) sz = argv[++i];
        else if (!strcmp(argv[i], "--fail")) fail = 1;
        else if (!strcmp(argv[i], "--abort") && i + 1 < argc) abort_code = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--segv")) segv = 1;
    }
    double t0 = MPI_Wtime(), one = 1, sum = 0;
    MPI_Allreduce(&one, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (sleep_s > 0) usleep((useconds_t)(sleep_s * 1e6));
    if (abort_code >= 0 && rank == size - 1) MPI_Abort(MPI_COMM_WORLD, abort_code);
    if (segv && rank == 0) raise(SIGSEGV);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        for (int i = 0; i < argc; i++) printf("ARGV[%d]=%s\n", i, argv[i]);
        const char *names = getenv("SWTEST_ECHO_ENV");
        if (names) {
            char buf[4096];
            snprintf(buf, sizeof buf, "%s", names);
            for (char *n = strtok(buf, ","); n; n = strtok(NULL, ",")) {
                const char *v = getenv(n);
                printf("ENV[%s]=%s\n", n, v ? v : "(unset)");
            }
        }
        printf("elapsed: %.6f seconds\n", MPI_Wtime() - t0);
        printf("SCALEWISE_RESULT app=swtest ranks=%d size=%s fom=%g fom_unit=widgets/s higher_is_better=1 "
               "wall=%.6f check=%g status=%s\n", size, sz, 100.0 * size, MPI_Wtime() - t0, sum,
               (fail || sum != size) ? "FAIL" : "PASS");
        fflush(stdout);
    }
    MPI_Finalize();
    return fail ? 3 : code;
}
"""

COMPILERS = {"openmpi": "mpicc.openmpi", "mpich": "mpicc.mpich"}


def stored_rows(loaded, sql: str, *args) -> list[dict]:
    """Rows of a query on a loaded study's results database."""
    db = sqlite3.connect(store_path(loaded))
    db.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in db.execute(sql, args)]
    finally:
        db.close()


def stored_runs(loaded) -> list[dict]:
    """The runs table of a loaded study's results, in plan order."""
    return stored_rows(loaded, "SELECT * FROM runs ORDER BY position")


def build_swtest(folder: Path) -> Path:
    """Compile the test program for both MPIs into ``folder/<mpi>/swtest``; returns ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    src = folder / "swtest.c"
    src.write_text(SWTEST_C)
    for mpi, cc in COMPILERS.items():
        (folder / mpi).mkdir(parents=True, exist_ok=True)
        subprocess.run([cc, "-O1", "-o", str(folder / mpi / "swtest"), str(src)], check=True)
    return folder


def _port_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def pick_ports(count: int) -> int:
    """A base port such that base, base+1 and base+10 .. base+9+count are all free."""
    for _ in range(200):
        base = random.randrange(20000, 60000, 20)
        if all(_port_free(p) for p in [base, base + 1] + [base + 10 + i for i in range(count)]):
            return base
    raise RuntimeError("no free ports for the test Slurm")


@contextmanager
def running_slurm(nodes: int, cpus: int = 2):
    """A started :class:`SlurmCluster`, stopped (daemons and folder) however the block ends."""
    cluster = SlurmCluster(nodes=nodes, cpus=cpus)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


class SlurmCluster:
    """slurmctld + N emulated slurmd (``slurmd -N nI``) + munged, all under one fresh folder."""

    def __init__(self, nodes: int = 4, cpus: int = 2):
        # munged wants every folder above its socket world-executable, and socket
        # paths must stay short: a fresh folder directly in /tmp satisfies both.
        self.base = Path(tempfile.mkdtemp(prefix="swslurm-", dir="/tmp"))
        os.chmod(self.base, 0o755)
        self.nodes, self.cpus = nodes, cpus
        self.port = pick_ports(nodes)
        self.host = socket.gethostname().split(".")[0]
        self.conf = self.base / "etc" / "slurm.conf"
        self.env = dict(os.environ, SLURM_CONF=str(self.conf))

    def _config(self) -> str:
        b, n, p = self.base, self.nodes, self.port
        return "\n".join([
            *base_config(b, "swtest", f"{self.host}(127.0.0.1)", p, p + 1),
            f"NodeName=n[1-{n}] NodeHostname={self.host} NodeAddr=127.0.0.1 Port=[{p + 10}-{p + 9 + n}] "
            f"CPUs={self.cpus} State=UNKNOWN",
            f"PartitionName=debug Nodes=n[1-{n}] Default=YES MaxTime=INFINITE State=UP", ""])

    def start(self) -> None:
        b = self.base
        for sub in ("etc", "state", "spool", "log", "munge", "mungekey"):
            (b / sub).mkdir(parents=True, exist_ok=True)
        for i in range(1, self.nodes + 1):
            (b / "tmp" / f"n{i}").mkdir(parents=True, exist_ok=True)
        os.chmod(b / "munge", 0o755)
        os.chmod(b / "mungekey", 0o700)
        key = b / "mungekey" / "munge.key"
        key.write_bytes(os.urandom(1024))
        os.chmod(key, 0o400)
        subprocess.run(["munged", f"--socket={b}/munge/munge.socket.2", f"--key-file={key}",
                        f"--pid-file={b}/munge/munged.pid", f"--log-file={b}/munge/munged.log",
                        f"--seed-file={b}/mungekey/seed"], check=True)
        self.conf.write_text(self._config())
        subprocess.run(["slurmctld", "-c"], env=self.env, check=True)
        for i in range(1, self.nodes + 1):
            subprocess.run(["slurmd", "-N", f"n{i}"], env=self.env, check=True)
        deadline = time.time() + 30
        while time.time() < deadline:
            out = subprocess.run(["sinfo", "-h", "-o", "%T %D"], env=self.env, capture_output=True, text=True).stdout
            if out.split()[:2] == ["idle", str(self.nodes)]:
                return
            time.sleep(0.3)
        raise RuntimeError(f"test Slurm did not come up: {out!r}; logs in {b / 'log'}")

    def stop(self) -> None:
        subprocess.run(["scontrol", "shutdown"], env=self.env, capture_output=True)
        for pidfile in [self.base / "slurmctld.pid"] + [self.base / f"slurmd-n{i}.pid" for i in range(1, self.nodes + 1)]:
            _wait_gone(pidfile)
        munge_pid = self.base / "munge" / "munged.pid"
        if munge_pid.exists():
            _kill(munge_pid)
        shutil.rmtree(self.base, ignore_errors=True)


def _pid(pidfile: Path) -> int | None:
    try:
        return int(pidfile.read_text().strip())
    except (OSError, ValueError):
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False


def _wait_gone(pidfile: Path, timeout: float = 10) -> None:
    pid = _pid(pidfile)
    deadline = time.time() + timeout
    while pid and _alive(pid) and time.time() < deadline:
        time.sleep(0.1)
    if pid and _alive(pid):
        os.kill(pid, 9)


def _kill(pidfile: Path) -> None:
    pid = _pid(pidfile)
    if pid and _alive(pid):
        os.kill(pid, 15)
        _wait_gone(pidfile, 5)


def ranks_running(exe: str) -> int:
    """How many live processes run ``exe`` (the ranks of a test job still alive)."""
    count = 0
    for entry in Path("/proc").iterdir():
        try:
            count += entry.name.isdigit() and os.readlink(entry / "exe") == exe
        except OSError:
            continue
    return count
