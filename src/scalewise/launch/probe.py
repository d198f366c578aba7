"""A tiny preloaded library that proves how many ranks a launch really started.

A misconfigured launch (MPICH under ``srun --mpi=pmix``) starts N single-rank
worlds and still exits 0, so exit codes prove nothing.  When a run is not
profiled (the profile log then carries the world size), this library is
preloaded instead: at ``MPI_Init`` every rank writes ``rank size host`` to its
own file in ``SCALEWISE_PROBE_DIR``.  A correct launch leaves exactly P files,
ranks 0..P-1, all reporting size P.

Both ``MPI_Init`` and ``PMPI_Init`` are defined (forwarding to the real
``PMPI_Init`` found with ``dlsym(RTLD_NEXT)``) so that Fortran programs whose
bindings call the PMPI layer are seen too.  It is compiled once per MPI
flavour with that MPI's compiler wrapper and cached.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from scalewise.errors import ScalewiseError

PROBE_SOURCE = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void sw_probe_note(void) {
    const char *dir = getenv("SCALEWISE_PROBE_DIR");
    int rank = -1, size = -1;
    char host[256] = "?", path[4096];
    if (!dir) return;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    gethostname(host, sizeof host - 1);
    snprintf(path, sizeof path, "%s/rank.%d.%ld", dir, rank, (long)getpid());
    FILE *f = fopen(path, "w");
    if (f) { fprintf(f, "%d %d %s\n", rank, size, host); fclose(f); }
}

typedef int (*init_fn)(int *, char ***);
typedef int (*init_thread_fn)(int *, char ***, int, int *);

int PMPI_Init(int *argc, char ***argv) {
    init_fn real = (init_fn)dlsym(RTLD_NEXT, "PMPI_Init");
    int rc = real(argc, argv);
    if (rc == MPI_SUCCESS) sw_probe_note();
    return rc;
}
int MPI_Init(int *argc, char ***argv) { return PMPI_Init(argc, argv); }

int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
    init_thread_fn real = (init_thread_fn)dlsym(RTLD_NEXT, "PMPI_Init_thread");
    int rc = real(argc, argv, required, provided);
    if (rc == MPI_SUCCESS) sw_probe_note();
    return rc;
}
int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
    return PMPI_Init_thread(argc, argv, required, provided);
}
"""

COMPILERS = {"openmpi": "mpicc.openmpi", "mpich": "mpicc.mpich"}


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "scalewise"


def probe_library(flavour: str) -> Path:
    """The probe built for ``flavour``, compiling it on first use (atomic: safe in parallel)."""
    digest = hashlib.sha256(PROBE_SOURCE.encode()).hexdigest()[:12]
    lib = cache_dir() / f"probe-{flavour}-{digest}.so"
    if lib.is_file():
        return lib
    compiler = COMPILERS.get(flavour)
    if compiler is None:
        raise ScalewiseError(f"no world-size probe for MPI flavour '{flavour}'")
    lib.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=lib.parent) as tmp:
        src, out = Path(tmp) / "probe.c", Path(tmp) / "probe.so"
        src.write_text(PROBE_SOURCE)
        try:
            done = subprocess.run([compiler, "-O2", "-shared", "-fPIC", "-o", str(out), str(src), "-ldl"],
                                  capture_output=True, text=True, timeout=120)
        except FileNotFoundError:
            raise ScalewiseError(f"cannot build the world-size probe: {compiler} not found") from None
        if done.returncode != 0:
            raise ScalewiseError(f"cannot build the world-size probe with {compiler}: {done.stderr.strip()[:300]}")
        os.replace(out, lib)
    return lib


@dataclass
class WorldReport:
    """What the ranks of one launch said about their world."""

    entries: list[tuple[int, int, str]]

    @property
    def hosts(self) -> list[str]:
        return sorted({host for _, _, host in self.entries})

    def problem(self, asked: int) -> str | None:
        """Why the launch is not one world of ``asked`` ranks, or None if it is."""
        if not self.entries:
            return "no rank reached MPI_Init (world-size probe wrote nothing)"
        sizes = Counter(size for _, size, _ in self.entries)
        ranks = sorted(rank for rank, _, _ in self.entries)
        if len(sizes) == 1 and next(iter(sizes)) == asked and ranks == list(range(asked)):
            return None
        if set(sizes) == {1} and len(self.entries) > 1:
            return (f"world size mismatch: asked for {asked} ranks, the launch started {len(self.entries)} "
                    "separate 1-rank worlds (wrong PMI plugin?)")
        shown = ", ".join(f"{n} x size {s}" for s, n in sorted(sizes.items()))
        return f"world size mismatch: asked for {asked} ranks, ranks reported {shown}"


def read_probe(directory: Path) -> WorldReport:
    entries = []
    for path in sorted(directory.glob("rank.*")):
        parts = path.read_text().split()
        if len(parts) >= 3:
            entries.append((int(parts[0]), int(parts[1]), parts[2]))
    return WorldReport(entries)


def probe_env(env: dict[str, str], lib: Path, directory: Path) -> dict[str, str]:
    """``env`` plus what loads the probe into every rank and tells it where to write."""
    env = dict(env)
    env["LD_PRELOAD"] = str(lib) + (":" + env["LD_PRELOAD"] if env.get("LD_PRELOAD") else "")
    env["SCALEWISE_PROBE_DIR"] = str(directory)
    return env
