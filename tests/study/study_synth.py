"""Synthetic studies with planted effects, written through the real results store and log writer.

A planted run names its settings and results; :func:`write_study_db` inserts
the plan with ``Store.add_plan``, records each result with ``Store.record``
and, when the run carries a profile, writes it with the real log writer so
``scalewise.open_study`` reads it back through ``scalewise.load``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from scalewise.campaign.expand import RunSpec
from scalewise.campaign.store import RunResult, Store
from scalewise.logfile.writer import write_profile
from scalewise.model.profile import Profile
from support.profiles import build_profile


@dataclass
class Planted:
    app: str = "halo"
    mpi: str = "openmpi"
    transport: str = "default"
    ranks: int = 1
    nodes: int = 1
    repetition: int = 0
    status: str = "ok"
    wall: float | None = 10.0
    fom: float | None = None
    fom_name: str | None = None
    higher_is_better: bool | None = None
    reason: str | None = None
    profile: Profile | None = None
    custom: tuple = field(default_factory=tuple)
    cores: int = 64  # cores of the node the run had: planted runs are not oversubscribed unless asked

    def run_id(self) -> str:
        key = f"{self.app}/{self.mpi}/{self.transport}/{self.ranks}/{self.nodes}/{self.custom}/{self.repetition}"
        return hashlib.sha256(key.encode()).hexdigest()[:12]


def halo_profile(nranks: int, compute: float, allreduce: float, waitall: float, halo_bytes: int = 1 << 16,
                 steps: int = 100) -> Profile:
    """A ring halo exchange: per rank ``compute`` s of work, ``waitall`` s in MPI_Waitall, ``allreduce`` s in Allreduce."""
    r = np.arange(nranks)
    mpi = allreduce + waitall
    ranks = pd.DataFrame({"rank": r, "host": "node000", "pid": 100 + r, "wall": compute + mpi, "mpi_time": mpi,
                          "compute_time": compute, "maxrss": 1 << 26})
    peers = 0 if nranks == 1 else 2
    rows = [("MPI_Allreduce", "collective", steps, allreduce, 8 * steps)]
    if peers:
        rows += [("MPI_Isend", "p2p", peers * steps, 0.0, peers * steps * halo_bytes),
                 ("MPI_Waitall", "wait", steps, waitall, 2 * peers * steps * halo_bytes)]
    functions = pd.concat([pd.DataFrame({"rank": r, "function": fn, "fclass": fc, "calls": calls, "time": t,
                                         "bytes": b}) for fn, fc, calls, t, b in rows], ignore_index=True)
    hist = [pd.DataFrame({"rank": r, "function": "MPI_Allreduce", "bin": 4, "count": steps})]
    if peers:
        hist.append(pd.DataFrame({"rank": r, "function": "MPI_Isend", "bin": halo_bytes.bit_length(),
                                  "count": peers * steps}))
    p2p = ()
    if peers:
        p2p = pd.DataFrame({"src": np.tile(r, 2), "dst": np.concatenate([(r + 1) % nranks, (r - 1) % nranks]),
                            "messages": steps, "bytes": steps * halo_bytes})
        p2p = p2p.groupby(["src", "dst"], as_index=False)[["messages", "bytes"]].sum()
    meta = {"nranks": nranks, "command": ["./halo"], "mpi_library": "synthetic", "start_time": 1.7e9,
            "end_time": 1.7e9 + compute + mpi}
    return build_profile(ranks, functions, pd.concat(hist, ignore_index=True), p2p, meta)


def write_study_db(folder: Path, runs: list[Planted], name: str = "planted") -> Path:
    """The study's ``results.sqlite`` in ``folder``, holding ``runs``; returns its path."""
    folder.mkdir(parents=True, exist_ok=True)
    store = Store(folder / "results.sqlite")
    try:
        store.set_study_info({"name": name, "description": "planted effects", "study_path": str(folder / "x.yaml"),
                              "study_sha256": "0" * 64})
        specs = [RunSpec(run_id=p.run_id(), position=i, app=p.app, variant="default", mpi=p.mpi,
                         transport=p.transport, params="default", nodes=p.nodes, ranks=p.ranks, ranks_per_node=None,
                         threads=1, repetition=p.repetition, custom=p.custom) for i, p in enumerate(runs)]
        store.add_plan(specs)
        session = store.begin_session({"started_at": "2025-01-01T00:00:00+00:00", "scheduler": "local",
                                       "study_path": str(folder / "x.yaml"), "study_sha256": "0" * 64,
                                       "scalewise_version": "test", "hostname": "testhost", "cpu_model": "Test CPU",
                                       "cpu_count": 2}, {"mpi.openmpi.version": "Open MPI 4.1"})
        for p in runs:
            rel = None
            if p.profile is not None:
                rel = f"runs/{p.run_id()}/profile.swlog"
                (folder / rel).parent.mkdir(parents=True, exist_ok=True)
                write_profile(p.profile, folder / rel)
            store.mark_running(p.run_id(), session, "local")
            fom = p.fom if p.fom is not None else p.wall
            store.record(p.run_id(), RunResult(
                status=p.status, reason=p.reason, exit_code=0 if p.status == "ok" else 1, wall=p.wall,
                started_at="2025-01-01T00:00:00+00:00", ended_at="2025-01-01T00:00:10+00:00", fom=fom,
                fom_name=p.fom_name or ("wall" if p.fom is None else "fom"), fom_unit="s" if p.fom is None else "x/s",
                higher_is_better=p.higher_is_better if p.higher_is_better is not None else p.fom is not None,
                world_size=p.ranks, profile_path=rel, cores_per_node=p.cores, placed_per_node=-(-p.ranks // p.nodes),
                oversubscribed=-(-p.ranks // p.nodes) > p.cores, provenance={"mpi_version": f"{p.mpi} 1.0"}))
        store.end_session(session)
    finally:
        store.close()
    return folder / "results.sqlite"


# Five repetitions: with three a side the exact test's smallest p is 0.05, which no claim in a report of several
# comparisons survives under the false discovery rate control (docs/study-report.md).
FIVE = (0.97, 0.985, 1.0, 1.015, 1.03)


def mpi_race(jitter=(0.97, 1.0, 1.03), slow_at_4=1.20, slow_elsewhere=1.01, profiles=True, cores=64) -> list[Planted]:
    """Open MPI vs MPICH at 1, 2, 4 ranks, three repetitions (``FIVE`` for five), strong scaling of a 40 s job.

    MPICH is ``slow_at_4`` times slower at 4 ranks and ``slow_elsewhere`` times
    slower at 1 and 2 ranks; ``jitter`` multiplies the wall of each repetition.
    """
    runs = []
    for rep, j in enumerate(jitter):
        for ranks in (1, 2, 4):
            for mpi in ("openmpi", "mpich"):
                slow = 1.0 if mpi == "openmpi" else (slow_at_4 if ranks == 4 else slow_elsewhere)
                wall = 40.0 / ranks * slow * j
                prof = halo_profile(ranks, 0.8 * wall, 0.5 * ranks, 0.1 * wall) if profiles else None
                runs.append(Planted(mpi=mpi, ranks=ranks, repetition=rep, wall=wall, profile=prof, cores=cores))
    return runs
