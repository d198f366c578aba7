"""The profiler's own time (docs/runtime.md, "The profiler's own time"), from
real Open MPI and MPICH runs of tests/runtime/programs/owntime.c: 200,000
recorded MPI_Comm_rank calls (SCALEWISE_HOT_LOCAL=1) and 2,000 rounds of
Isend/Irecv/Waitall on two ranks.  The per-call part is sampled (one call in
256 per thread), the MPI_Init and MPI_Finalize parts are timed; the log's
profiler section (format 1.4) carries them, the summary, the report and the
JSON show them, and wall = MPI + profiler + compute on every rank."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console

import scalewise
from scalewise.analysis.run.findings import analyse
from scalewise.logfile.writer import write_profile
from scalewise.model.profile import PROFILER_COLUMNS
from scalewise.report.run.html import render_html
from scalewise.report.run.terminal import print_summary
from support.mpijob import FLAVOURS

CALLS, EXCHANGES = 200_000, 2_000
# What one recorded call can plausibly cost the runtime beyond its two clock
# reads: more than 1 ns (it updates tables), less than 2 us (35-50 ns measured
# on an idle machine, docs/benchmarks.md; a loaded one stretches it).
PER_CALL_LOW, PER_CALL_HIGH = 1e-9, 2e-6
DATA = Path(__file__).resolve().parents[1] / "data"


@pytest.fixture(params=FLAVOURS)
def profile(request, program, mpi_job):
    flavour = request.param
    job = mpi_job(f"owntime-{flavour}", flavour, 2, [program("owntime.c", flavour), CALLS, EXCHANGES],
                  extra_env={"SCALEWISE_HOT_LOCAL": "1"})
    assert job.returncode == 0, job.stderr
    return scalewise.load(job.logfile)


def test_own_time_is_recorded_per_rank_and_plausible(profile):
    p = profile
    assert p.meta["format"] == "1.4" and set(PROFILER_COLUMNS) <= set(p.ranks.columns)
    f = p.functions[p.functions["fclass"] != "init"]  # MPI_Init and MPI_Finalize lie outside the window
    calls = f.groupby("rank")["calls"].sum()
    for r in p.ranks.itertuples():
        assert calls[r.rank] >= CALLS + 5 * EXCHANGES  # the program's calls, all recorded
        assert PER_CALL_LOW * calls[r.rank] <= r.profiler_time <= PER_CALL_HIGH * calls[r.rank], \
            (r.rank, r.profiler_time, calls[r.rank])
        # wall = MPI + profiler + compute, to the ns the log rounds to
        assert r.mpi_time + r.profiler_time + r.compute_time == pytest.approx(r.wall, abs=2e-9)
        assert r.compute_time >= 0
        # outside the window: the set-up (MPI_T, tables, the log's name) and the log's packing
        assert r.profiler_init > 0 and r.profiler_finalize > 0
    row = p.to_json_dict()["ranks"][0]
    assert row["profiler_time"] == pytest.approx(float(p.ranks["profiler_time"].iloc[0]))
    assert {"profiler_init", "profiler_finalize"} <= set(row)


def test_summary_and_report_show_the_profiler_line(profile):
    a = analyse(profile)
    console = Console(record=True, width=200)
    print_summary(profile, console=console, analysis=a)
    text = console.export_text()
    total = float(profile.ranks["profiler_time"].sum())
    lines = {line.split()[0]: line for line in text.splitlines() if line.strip()}
    assert "profiler" in lines and "prof. Init" in text and "prof. Finalize" in text
    assert a.breakdown.total_profiler == pytest.approx(total)
    assert a.to_json_dict()["breakdown"]["total_profiler"] == pytest.approx(total)
    page = render_html(profile, a)
    assert 'data-spread="profiler"' in page and 'id="profiler-time"' in page
    assert f'data-metric="total_profiler" data-value="{a.breakdown.total_profiler}"' in page


def test_python_writer_keeps_the_profiler_section(profile, tmp_path):
    back = scalewise.load(write_profile(profile, tmp_path / "copy.swlog"))
    cols = ["rank", "wall", "mpi_time", "compute_time", *PROFILER_COLUMNS]
    for a, b in zip(profile.ranks[cols].itertuples(index=False), back.ranks[cols].itertuples(index=False)):
        assert a == pytest.approx(b, abs=2e-9)


def test_older_logs_have_no_profiler_line():
    """Before format 1.4 the profiler's time was in compute: the columns are absent, not invented."""
    p = scalewise.load(DATA / "golden-1.3-mpich-busy.swlog")
    assert not set(PROFILER_COLUMNS) & set(p.ranks.columns)
    assert (p.ranks["compute_time"] == p.ranks["wall"] - p.ranks["mpi_time"]).all()
    a = analyse(p)
    console = Console(record=True, width=200)
    print_summary(p, console=console, analysis=a)
    assert "profiler" not in console.export_text()
    assert a.breakdown.profiler is None and a.to_json_dict()["breakdown"]["total_profiler"] is None
    assert 'data-spread="profiler"' not in render_html(p, a)
