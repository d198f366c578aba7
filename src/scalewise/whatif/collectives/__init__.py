"""Collective decomposition: which algorithm the target MPI library picks for
a call (its own selection rules, read from its source: data/*.json), and that
algorithm's point-to-point schedule (algorithms.py).  docs/whatif.md cites
the rules and lists each algorithm."""

from __future__ import annotations

from functools import lru_cache

from scalewise.errors import ScalewiseError
from scalewise.whatif.collectives import mpich, openmpi
from scalewise.whatif.collectives.algorithms import Schedule

LIBRARIES = {"openmpi": openmpi.choose, "mpich": mpich.choose}


@lru_cache(maxsize=4096)
def schedule(library: str, func: str, P: int, sizes: int | tuple[int, ...], root: int = 0,
             commutative: bool = True) -> tuple[str, Schedule]:
    """(algorithm name, schedule) of ``func`` on a communicator of P ranks.

    ``sizes`` is the call's byte count (docs/trace-format.md says which one
    each collective records), or for the v-collectives one entry per rank."""
    if library not in LIBRARIES:
        raise ScalewiseError(f"unknown MPI library '{library}' (expected one of {', '.join(LIBRARIES)})")
    per_rank = list(sizes) if isinstance(sizes, tuple) else [sizes] * P
    return LIBRARIES[library](func, P, per_rank, root % P if P else 0, commutative)
