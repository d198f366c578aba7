"""Message sizes quoted by the analysis are the real ones, from a real MPI job.

The log keeps log2 bins; the size a finding quotes comes from the bytes a
rank recorded over its count, so a 100,000-byte message reads 97.7 KiB, not
the 64 KiB or 128 KiB edge of its bin."""

from __future__ import annotations

import pytest

import scalewise
from support.mpijob import FLAVOURS
from scalewise.analysis.run.sizes import size_distribution, size_range
from scalewise.formatting import human_bytes

NRANKS = 3


@pytest.mark.parametrize("flavour", FLAVOURS)
@pytest.mark.parametrize("nbytes", [65536, 100000])
def test_size_range_quotes_the_real_message_size(flavour, nbytes, program, mpi_job):
    exe = program("ring.c", flavour)
    # "fan": every rank Isends and Irecvs one message to and from each other rank, then one Waitall.
    job = mpi_job(f"fan-{flavour}-{nbytes}", flavour, NRANKS, [exe, 1, nbytes, "fan"], timeout=60)
    assert job.returncode == 0, job.stderr
    sizes = size_distribution(scalewise.load(job.logfile))
    for function in ("MPI_Isend", "MPI_Irecv", "MPI_Waitall"):
        assert size_range(sizes, function) == (nbytes, nbytes), function
    assert human_bytes(size_range(sizes, "MPI_Waitall")[1]) == {65536: "64 KiB", 100000: "97.7 KiB"}[nbytes]
