"""The job log gathered in bounded batches (docs/log-gather.md): with
SCALEWISE_GATHER_BATCH_BYTES at 64 bytes, a 4-rank job splits every rank's
block and records across many batches (no batch holds more than two ranks'
bytes), and its log reads back the same as the same job gathered whole:
the same ranks, counts, bytes, histograms, point-to-point rows, call sites,
phases and MPI_T names, rank by rank, under both MPIs."""

from __future__ import annotations

import math
import re
import struct

import pandas as pd
import pytest

import scalewise
from scalewise.logfile import layout as L
from support.mpijob import FLAVOURS

NRANKS, ITERS, BYTES, BOUND = 4, 20, 3000, 64
RAW_GATHERED = (L.SEC_RANKS, L.SEC_RANK_SETUP)  # stored as gathered: their size is the bytes gathered


def run(mpi_job, program, flavour: str, bound: int | None):
    exe = program("ring.c", flavour)
    env = {"SCALEWISE_QUIET": "0"}
    if bound is not None:
        env["SCALEWISE_GATHER_BATCH_BYTES"] = str(bound)
    job = mpi_job(f"gather-{flavour}-{bound or 'default'}", flavour, NRANKS, [exe, ITERS, BYTES, "fan"],
                  extra_env=env)
    assert job.returncode == 0, job.stderr
    return job


def section_table(path) -> dict[int, tuple[int, int]]:
    """Section id -> (flags, stored size), from the file's own table."""
    data = path.read_bytes()
    nsec = struct.unpack_from("<I", data, 28)[0]
    out = {}
    for i in range(nsec):
        ident, _, flags, _, size, _, _ = struct.unpack_from("<" + L.SECTION_ENTRY, data,
                                                            L.HEADER_SIZE + i * L.SECTION_ENTRY_SIZE)
        out[ident] = (flags, size)
    return out


def content(p: scalewise.Profile) -> dict[str, object]:
    """Everything of a log that does not depend on timing, as sorted records."""

    def rows(df: pd.DataFrame, cols: list[str]) -> list[tuple]:
        return sorted(map(tuple, df[cols].astype(str).itertuples(index=False, name=None)))

    return {
        "nranks": p.nranks, "flags": sorted(p.flags),
        "ranks": rows(p.ranks, ["rank", "host", "partial", "nthreads", "cpus_online", "ranks_on_node"]),
        "functions": rows(p.functions, ["rank", "function", "fclass", "calls", "bytes"]),
        "hist": rows(p.hist, ["rank", "function", "bin", "count"]),
        "p2p": rows(p.p2p, ["src", "dst", "messages", "bytes"]),
        "sites": rows(p.sites, ["rank", "function", "object", "offset", "calls", "bytes"]),
        "ranks_with_bins": sorted(set(p.bins["rank"])),  # how many bins is timing
        "phases": rows(p.phases, ["rank", "phase", "order"]),
        "phase_functions": rows(p.phase_functions, ["rank", "phase", "function", "calls", "bytes"]),
        "pvars": rows(p.pvars, ["rank", "variable", "pclass"]),
        "mpit": (p.mpit.status, sorted(p.mpit.cvars)),
    }


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_a_log_gathered_in_tiny_batches_reads_back_the_same(flavour, mpi_job, program):
    whole = run(mpi_job, program, flavour, None)
    split = run(mpi_job, program, flavour, BOUND)
    assert "gathered in" not in whole.stderr, whole.stderr  # one batch per section
    m = re.search(r"gathered in (\d+) batches of at most (\d+) bytes", split.stderr)
    assert m and int(m.group(2)) == BOUND, split.stderr
    # Every rank's block is cut at each BOUND bytes of the stream, so the raw
    # sections alone need ceil(size / BOUND) batches, each compressed module
    # section at least one more.
    table = section_table(split.logfile)
    fixed = {L.SEC_META, L.SEC_FUNCTIONS, L.SEC_RANK_INDEX, L.SEC_RANKS, L.SEC_RANK_LIFECYCLE}
    modules = [s for s in table if s not in fixed]
    floor = sum(math.ceil(table[s][1] / BOUND) for s in RAW_GATHERED if s in table)
    floor += sum(1 for s in modules if s not in RAW_GATHERED)
    assert L.SEC_RANK_SETUP in table and L.SEC_CALL_SITES in table and L.SEC_TIMELINE in table
    assert int(m.group(1)) >= floor > 4 * NRANKS, (m.group(1), floor)
    assert table[L.SEC_RANKS][1] > NRANKS * BOUND  # each rank's block spans batches
    assert sorted(table) == sorted(section_table(whole.logfile))
    a, b = scalewise.load(whole.logfile), scalewise.load(split.logfile)
    got, want = content(b), content(a)
    # Not an empty comparison: every rank, with its ring and fan traffic.
    assert want["nranks"] == NRANKS and len({r[0] for r in want["ranks"]}) == NRANKS
    assert len(want["p2p"]) == NRANKS * (NRANKS - 1) and want["sites"] and want["hist"]
    for key in want:
        assert got[key] == want[key], key
    for job in (whole, split):
        assert not [f.name for f in job.workdir.iterdir() if ".tmp." in f.name]
