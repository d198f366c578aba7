"""Phase marks of real runs: placed where planted phases ran once each; refused for programs/phases.c, whose
"compute" phase is entered twice."""

from __future__ import annotations

import pytest
from support.mpijob import FLAVOURS

import scalewise
from scalewise.analysis.run.timeline import phase_marks


def _profile(program, mpi_job, flavour: str, source: str) -> scalewise.Profile:
    exe = program(source, flavour)
    job = mpi_job(f"marks-{flavour}-{exe.parent.name}", flavour, 2, [exe])
    assert job.returncode == 0, job.stderr
    return scalewise.load(job.logfile)


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_phases_run_once_each_are_marked_where_they_ran(program, mpi_job, flavour):
    p = _profile(program, mpi_job, flavour, "phases_once.c")
    marks = phase_marks(p)
    assert marks.why == ""
    m = marks.marks.set_index("phase")
    assert list(m.index) == ["exchange", "solve"]
    width = float(p.bins["width"].max())
    walls = p.phases.groupby("phase")["wall"].median()
    # The marks sit where the log's own numbers put them: after the set-up, each as long as the phase's wall;
    # a sleep ends late, never early, so the set-up is at least its 80 ms.
    assert m.loc["exchange", "start"] >= 0.080 - 1.5 * width
    assert m.loc["exchange", "end"] - m.loc["exchange", "start"] == pytest.approx(walls["exchange"], abs=width)
    assert m.loc["solve", "start"] == pytest.approx(m.loc["exchange", "end"])
    assert m.loc["solve", "end"] - m.loc["solve", "start"] == pytest.approx(walls["solve"], abs=width)
    outside = walls["(outside phases)"]
    assert m.loc["exchange", "start"] < outside - 0.030, "the 40 ms after the phases are not put before them"


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_a_phase_entered_twice_is_not_marked(program, mpi_job, flavour):
    marks = phase_marks(_profile(program, mpi_job, flavour, "phases.c"))
    assert marks.marks.empty and "did not run once each" in marks.why
