"""A tiny preloaded library that proves how many ranks a launch really started.

A misconfigured launch (MPICH under ``srun --mpi=pmix``) starts N single-rank
worlds and still exits 0, so exit codes prove nothing.  When a run is not
profiled (the profile log then carries the world size), this library is
preloaded instead: at ``MPI_Init`` every rank writes ``rank size host`` to its
own file in ``SCALEWISE_PROBE_DIR``.  A correct launch leaves exactly P files,
ranks 0..P-1, all reporting size P.

Both ``MPI_Init`` and ``PMPI_Init`` are defined (forwarding to the real
``PMPI_Init`` found with ``dlsym(RTLD_NEXT)``) so that Fortran programs whose
bindings call the PMPI layer are seen too.  Its source is
``runtime/probe/probe.c``, built per MPI flavour by ``make runtime``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from scalewise.formatting import plural
from scalewise.launch.preload import built_library

PROBE_LIBRARY = "libscalewise-probe.so"


def probe_library(flavour: str) -> Path:
    """The probe built for ``flavour`` by ``make runtime``; a clear error when it is missing."""
    return built_library(flavour, PROBE_LIBRARY, "world-size probe")


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
            return (f"world size mismatch: asked for {plural(asked, 'rank')}, the launch started {len(self.entries)} "
                    "separate 1-rank worlds (wrong PMI plugin?)")
        shown = ", ".join(f"{n} x size {s}" for s, n in sorted(sizes.items()))
        return f"world size mismatch: asked for {plural(asked, 'rank')}, ranks reported {shown}"


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
