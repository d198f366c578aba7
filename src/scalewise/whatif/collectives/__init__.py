"""Collective decomposition: which algorithm the target MPI library picks for
a call (its own selection rules, read from its source: data/*.json), and that
algorithm's point-to-point schedule (algorithms.py).  docs/whatif.md cites
the rules and lists each algorithm.

A library is named by its short name or identity and read down to its release
line (launch/releases.py); each line replays the rules of its own source.
Intel MPI publishes no rules: it is replayed with the decisions observed in
Intel MPI 2021.19 (intelmpi.py), and with MPICH 5.0's rules where none was observed,
which :func:`assumption` says.

Open MPI 5.0 runs coll/han on a communicator whose ranks share nodes (han.py): a call's schedule
then depends on the node of each of its ranks, which :func:`layout` gives for the libraries whose
rules look at it (None for the others, whose schedules stay those of one rank per node)."""

from __future__ import annotations

from functools import lru_cache, partial

from scalewise.launch.releases import release_line
from scalewise.whatif.collectives import han, intelmpi, mpich, openmpi
from scalewise.whatif.collectives.algorithms import Schedule

# Release line -> the rules it is replayed with.
RULES = {"openmpi-4.1": "openmpi-4.1", "openmpi-5.0": "openmpi-5.0", "mpich-4.0": "mpich-4.0",
         "mpich-5.0": "mpich-5.0", "intelmpi-2021": intelmpi.LINE}
_CHOOSE = {**{line: partial(openmpi.choose, line=line) for line in openmpi.LINES},
           **{line: partial(mpich.choose, line=line) for line in mpich.LINES}, intelmpi.LINE: intelmpi.choose}


@lru_cache(maxsize=64)
def rules_of(library: str) -> str:
    """The rules ``library`` (openmpi, mpich, an identity or a study's name) is replayed with."""
    return RULES[release_line(library, "--mpi")]


def assumption(library: str) -> str | None:
    """What the replay assumes about ``library``'s collectives beyond its own published rules, or None."""
    line = release_line(library, "--mpi")
    if RULES[line] == intelmpi.LINE:
        return _intel_note(library)
    if RULES[line].split("-")[0] != line.split("-")[0]:
        return (f"{library} publishes no collective selection rules: its collectives are replayed with "
                f"{RULES[line].replace('mpich-', 'MPICH ')}'s default rules (its own tuning files may pick others)")
    return None


def _intel_note(library: str) -> str:
    """Where the replay of Intel MPI comes from, and (after a replay) which calls fell back, how often."""
    doc = intelmpi.observed()
    ranks = ",".join(sorted({p for cells in doc["observed"].values() for p in cells}, key=int))
    sizes = sorted({int(n) for cells in doc["observed"]["allreduce"].values() for n in cells})
    note = (f"{library}'s collectives are replayed with the decisions observed in {doc['library']}, "
            f"{intelmpi.table_cpu()[1]} ({doc['setting']}; {ranks} ranks, {sizes[0]} to {sizes[-1]} B); a call "
            "outside them, or whose "
            "algorithm was compiled inline or is not modelled, with MPICH 5.0's default rules")
    fell = intelmpi.fallbacks()
    if fell:
        note += "; fell back: " + ", ".join(f"{func}: {why} x{n}" for (func, why), n in sorted(fell.items()))
    return note


# Release lines whose collectives depend on where the ranks are.
NODE_AWARE = {han.LINE}


def layout(library: str, nodes) -> tuple[int, ...] | None:
    """The node of each rank of a communicator as ``library``'s schedule looks at it (nodes numbered
    by first appearance, so one shape is one cache entry), or None where its rules do not."""
    if nodes is None or rules_of(library) not in NODE_AWARE:
        return None
    first: dict[int, int] = {}
    return tuple(first.setdefault(int(n), len(first)) for n in nodes)


@lru_cache(maxsize=4096)
def schedule(library: str, func: str, P: int, sizes: int | tuple[int, ...], root: int = 0,
             commutative: bool = True, nodes: tuple[int, ...] | None = None) -> tuple[str, Schedule]:
    """(algorithm name, schedule) of ``func`` on a communicator of P ranks.

    ``sizes`` is the call's byte count (docs/trace-format.md says which one
    each collective records), or for the v-collectives one entry per rank.
    ``nodes`` (from :func:`layout`): the node of each rank; None, every rank on a node of its own."""
    per_rank = list(sizes) if isinstance(sizes, tuple) else [sizes] * P
    root = root % P if P else 0
    nodes = layout(library, nodes)
    if nodes is not None:
        return han.choose(func, P, per_rank, root, commutative, nodes)
    return _CHOOSE[rules_of(library)](func, P, per_rank, root, commutative)
