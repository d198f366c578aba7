"""Per-rank figures of large jobs: past MAX_RANKS_DRAWN ranks, P1 and P6 show the distribution over ranks with
the worst ranks named, while totals stay exact sums; smaller jobs keep one bar (or one step) per rank."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from report_profiles import halo_profile
from rich.console import Console

from scalewise.analysis.run.distribution import WORST
from scalewise.analysis.run.findings import analyse
from scalewise.formatting import count, human_bytes
from scalewise.report.figure import draw_figures
from scalewise.report.run.figures import MAX_RANKS_DRAWN, p1_mpi_vs_compute, p6_data_per_rank
from scalewise.report.run.registry import FIGURES
from scalewise.report.run.terminal import print_summary
from support.profiles import build_profile

# Planted outliers: the highest MPI share, in this order, and the biggest senders, in this order.
SLOW = [70_001, 5, 131_071, 42, 99_999]
LOUD = [12_345, 0, 65_536, 3, 100_000]


def ring_job(n: int):
    """n ranks in a ring: rank r computes 10 + r % 7 / 10 s, spends 1 s in 3 Allreduce calls (more on the SLOW
    ranks) and sends 1 + r % 5 messages of 4 KiB to rank r + 1 (far more from the LOUD ranks)."""
    r = np.arange(n)
    compute = 10.0 + (r % 7) / 10
    mpi = np.ones(n)
    sent = (1 + r % 5) * 4096
    for k, rank in enumerate(x for x in SLOW if x < n):
        mpi[rank] = 60.0 - 5 * k
    for k, rank in enumerate(x for x in LOUD if x < n):
        sent[rank] = (50 - 5 * k) << 30
    ranks = pd.DataFrame({"rank": r, "wall": compute + mpi, "mpi_time": mpi})
    functions = pd.DataFrame({"rank": r, "function": "MPI_Allreduce", "fclass": "collective", "calls": 3,
                              "time": mpi, "bytes": 24})
    p2p = pd.DataFrame({"src": r, "dst": (r + 1) % n, "messages": sent // 4096, "bytes": sent})
    return build_profile(ranks, functions, p2p=p2p), compute, mpi, sent


@pytest.fixture(scope="module")
def big():
    """A 131,072-rank ring job, built once for the tests of this module."""
    return ring_job(131_072)


def mark_labels(fig) -> list[str]:
    return [t.get_text() for t in fig.axes[1].get_xticklabels()]


def test_a_131072_rank_job_shows_distributions_with_exact_totals_and_the_worst_ranks_named(big):
    n = 131_072
    profile, compute, mpi, sent = big
    a = analyse(profile)
    wall = compute + mpi
    # Totals are sums over every rank, not over the ranks a figure shows.
    assert a.total_calls == 3 * n
    assert a.volume.p2p_total == int(sent.sum()) and a.matrix.total_bytes == int(sent.sum())
    assert a.volume.total == int(sent.sum()) + 24 * n  # plus the Allreduce payloads
    assert a.matrix.total_messages == int((sent // 4096).sum())
    assert abs(a.breakdown.total_mpi - mpi.sum()) < 1e-6 * mpi.sum()

    fig = p1_mpi_vs_compute(a.breakdown)
    assert len(fig.axes) == 2  # histogram over ranks, and the marked ranks
    d = a.breakdown.mpi_pct_distribution
    assert d.nranks == n and int(d.counts.sum()) == n
    labels = mark_labels(fig)
    assert labels[-WORST:] == [f"worst {k + 1}\nrank {rank}" for k, rank in enumerate(SLOW)]
    assert labels[0].startswith("min\n") and any(t.startswith("median\n") for t in labels)
    share = 100 * mpi.sum() / wall.sum()
    assert f"MPI is {share:.1f}% of wall time overall" in fig.texts[0].get_text()
    # The bars of the worst rank are its own compute and MPI time.
    worst = d.marks[d.marks["label"] == "worst 1"].iloc[0]
    assert worst["mpi_time"] == mpi[SLOW[0]] and worst["compute_time"] == pytest.approx(compute[SLOW[0]])

    fig = p6_data_per_rank(a.volume)
    assert len(fig.axes) == 2 and int(a.volume.total_distribution.counts.sum()) == n
    assert mark_labels(fig)[-WORST:] == [f"worst {k + 1}\nrank {rank}" for k, rank in enumerate(LOUD)]
    assert f"{human_bytes(a.volume.total)} in total over all ranks" in fig.texts[0].get_text()

    # The point-to-point matrix is binned: at most 256 x 256 cells, whose sums are the exact totals.
    assert a.matrix.ncells <= 256 and int(a.matrix.bytes.sum()) == int(sent.sum())
    drawn = draw_figures(a, FIGURES)
    assert {f.spec.id for f in drawn if f.svg} >= {"p1-mpi-vs-compute", "p6-data-per-rank", "p5-matrix"}


def test_the_terminal_summary_of_a_large_job_quotes_exact_totals_and_the_worst_rank(big):
    profile, _compute, _mpi, sent = big
    console = Console(record=True, width=200, color_system=None)
    print_summary(profile, console)
    out = console.export_text()
    assert f"total bytes sent {human_bytes(int(sent.sum()) + 24 * 131_072)}" in out
    assert count(3 * 131_072) in out
    assert f"(rank {LOUD[0]})" in out


def test_up_to_the_threshold_every_rank_is_drawn_and_one_more_rank_gives_the_distribution():
    at = analyse(ring_job(MAX_RANKS_DRAWN)[0])
    fig = p1_mpi_vs_compute(at.breakdown)
    assert len(fig.axes) == 1 and "ranks ordered by MPI share" in fig.axes[0].get_xlabel()
    assert len(p6_data_per_rank(at.volume).axes) == 1
    above = analyse(ring_job(MAX_RANKS_DRAWN + 1)[0])
    assert len(p1_mpi_vs_compute(above.breakdown).axes) == 2
    assert len(p6_data_per_rank(above.volume).axes) == 2


def test_small_jobs_keep_one_bar_per_rank():
    p = halo_profile(4, 4)
    a = analyse(p)
    for fig in (p1_mpi_vs_compute(a.breakdown), p6_data_per_rank(a.volume)):
        assert len(fig.axes) == 1
        assert sorted(int(t.get_text()) for t in fig.axes[0].get_xticklabels()) == list(range(16))
