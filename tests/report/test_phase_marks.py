"""MPI_Pcontrol phases marked on the one-run timeline where the log's totals and time bins place them, and a
note where they cannot be placed (a phase entered again, a run that looks the same throughout)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from report_profiles import halo_profile

from scalewise.analysis.run.timeline import OUTSIDE, phase_marks, timeline
from scalewise.model.profile import BIN_COLUMNS, PHASE_COLUMNS
from scalewise.report.run.figures import p1_mpi_share_heatmap, p1_mpi_share_over_time

WIDTH = 0.01  # s per bin


def _planted(segments: dict[int, list[tuple[str, float, float]]]):
    """A 2-rank profile whose ranks ran ``segments``: (phase, seconds, MPI share) one after another."""
    bins, phases = [], []
    for rank, segs in segments.items():
        t, order, per_phase = 0.0, {}, {}
        mpi_at = []
        for name, secs, share in segs:
            order.setdefault(name, len(order))
            w, m = per_phase.get(name, (0.0, 0.0))
            per_phase[name] = (w + secs, m + secs * share)
            mpi_at.append((t, t + secs, share))
            t += secs
        for k in range(int(round(t / WIDTH))):
            lo, hi = k * WIDTH, (k + 1) * WIDTH
            mpi = sum(max(0.0, min(hi, b) - max(lo, a)) * s for a, b, s in mpi_at)
            bins.append((rank, k, lo, WIDTH, mpi, WIDTH - mpi))
        phases += [(rank, name, order[name], w, m, w - m) for name, (w, m) in per_phase.items()]
    base = halo_profile(2, 1)
    return replace(base, bins=pd.DataFrame(bins, columns=BIN_COLUMNS),
                   phases=pd.DataFrame(phases, columns=PHASE_COLUMNS))


def _run(rank_mpi: float, tail: float = 0.10, exchange_twice: bool = False):
    """Set-up 50 ms outside phases, "exchange" 100 ms (MPI share ``rank_mpi``), "solve" 150 ms of compute,
    ``tail`` outside phases at half MPI; or the exchange split in two around the solve's first half."""
    if exchange_twice:
        segs = [(OUTSIDE, 0.05, 0.0), ("exchange", 0.05, rank_mpi), ("solve", 0.10, 0.0), ("exchange", 0.05, rank_mpi),
                ("solve", 0.05, 0.0), (OUTSIDE, tail, 0.5)]
    else:
        segs = [(OUTSIDE, 0.05, 0.0), ("exchange", 0.10, rank_mpi), ("solve", 0.15, 0.0), (OUTSIDE, tail, 0.5)]
    return segs


def test_phases_run_once_each_are_placed_where_they_ran():
    p = _planted({0: _run(0.5), 1: _run(1.0)})
    marks = phase_marks(p)
    assert marks.why == ""
    m = marks.marks.set_index("phase")
    assert list(m.index) == ["exchange", "solve"], "time outside phases gets no mark"
    assert m.loc["exchange", "start"] == pytest.approx(0.05, abs=1.5 * WIDTH)
    assert m.loc["exchange", "end"] == pytest.approx(0.15, abs=1.5 * WIDTH)
    assert m.loc["solve", "end"] - m.loc["solve", "start"] == pytest.approx(0.15, abs=1e-9)
    # Without a tail the set-up's 50 ms are all before the phases: the same marks.
    no_tail = phase_marks(_planted({0: _run(0.5, tail=0.0), 1: _run(1.0, tail=0.0)})).marks.set_index("phase")
    assert no_tail.loc["exchange", "start"] == pytest.approx(0.05, abs=1.5 * WIDTH)


def test_a_phase_entered_twice_is_not_placed():
    marks = phase_marks(_planted({0: _run(0.5, exchange_twice=True), 1: _run(1.0, exchange_twice=True)}))
    assert marks.marks.empty and "did not run once each" in marks.why


def test_a_run_that_looks_the_same_throughout_cannot_say_where_its_phases_were():
    flat = [(OUTSIDE, 0.05, 0.2), ("a", 0.10, 0.2), ("b", 0.10, 0.2), (OUTSIDE, 0.10, 0.2)]
    marks = phase_marks(_planted({0: flat, 1: flat}))
    assert marks.marks.empty and "cannot tell how much of the time outside phases came before" in marks.why


def test_no_phases_no_marks():
    assert phase_marks(_planted({0: [(OUTSIDE, 0.2, 0.3)], 1: [(OUTSIDE, 0.2, 0.3)]})) is None


def _vlines(fig) -> list[float]:
    ax = fig.axes[0]
    return sorted(float(line.get_xdata()[0]) for line in ax.get_lines() if line.get_linestyle() == "--")


def test_the_timeline_figures_draw_the_marks_or_say_why_not():
    placed = timeline(_planted({0: _run(0.5), 1: _run(1.0)}))
    for draw in (p1_mpi_share_over_time, p1_mpi_share_heatmap):
        fig = draw(placed)
        edges = placed.phases.marks
        assert _vlines(fig) == pytest.approx(sorted({*edges["start"], *edges["end"]}))
        assert {t.get_text() for t in fig.axes[0].texts} == {"exchange", "solve"}
    refused = timeline(_planted({0: _run(0.5, exchange_twice=True), 1: _run(1.0, exchange_twice=True)}))
    fig = p1_mpi_share_over_time(refused)
    assert _vlines(fig) == []
    note = [t.get_text() for t in fig.axes[0].texts][0]
    assert note.startswith("phases not marked: the phases did not run once each")
    assert np.isfinite(placed.width)
