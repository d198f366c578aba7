"""MPI share over time and per phase, on profiles whose answers are worked out by hand."""

from __future__ import annotations

import dataclasses
import math

import pandas as pd
import pytest

from scalewise.analysis.run.findings import analyse
from scalewise.analysis.run.timeline import phase_function_table, phase_table, timeline
from scalewise.model.profile import BIN_COLUMNS, PHASE_COLUMNS, PHASE_FUNCTION_COLUMNS


def with_timeline(p, bins=(), phases=(), phase_functions=()):
    return dataclasses.replace(p, bins=pd.DataFrame(list(bins), columns=BIN_COLUMNS),
                               phases=pd.DataFrame(list(phases), columns=PHASE_COLUMNS),
                               phase_functions=pd.DataFrame(list(phase_functions), columns=PHASE_FUNCTION_COLUMNS))


@pytest.fixture
def two_ranks(make_profile):
    """Rank 0: 2 s then 1 s of MPI in 2-s bins; rank 1: 1 s, 2 s, and a last 1-s bin all MPI."""
    p = make_profile([(0, 4.0, 3.0), (1, 5.0, 4.0)],
                     [(0, "MPI_Barrier", "collective", 2, 3.0, 0), (1, "MPI_Barrier", "collective", 2, 3.0, 0),
                      (1, "MPI_Send", "p2p", 10, 1.0, 80)])
    bins = [(0, 0, 0.0, 2.0, 2.0, 0.0), (0, 1, 2.0, 2.0, 1.0, 1.0),
            (1, 0, 0.0, 2.0, 1.0, 1.0), (1, 1, 2.0, 2.0, 2.0, 0.0), (1, 2, 4.0, 2.0, 1.0, 0.0)]
    phases = [(0, "(outside phases)", 0, 1.0, 0.0, 1.0), (0, "solve", 1, 3.0, 3.0, 0.0),
              (1, "(outside phases)", 0, 2.0, 1.0, 1.0), (1, "solve", 1, 2.0, 2.0, 0.0), (1, "phase 7", 2, 1.0, 1.0, 0.0)]
    pf = [(0, "solve", "MPI_Barrier", 2, 3.0, 0), (1, "solve", "MPI_Barrier", 2, 2.0, 0),
          (1, "(outside phases)", "MPI_Send", 10, 1.0, 80), (1, "phase 7", "MPI_Barrier", 0, 1.0, 0)]
    return with_timeline(p, bins, phases, pf)


def test_mpi_share_per_rank_and_over_time(two_ranks):
    t = timeline(two_ranks)
    assert t.width == 2.0
    assert t.share.loc[0].tolist()[:2] == [1.0, 0.5] and math.isnan(t.share.loc[0, 2])
    assert t.share.loc[1].tolist() == [0.5, 1.0, 1.0]
    o = t.over_time.set_index("bin")
    assert o["mpi_share"].tolist() == [3 / 4, 3 / 4, 1.0]
    assert o.loc[0, ["share_min", "share_max"]].tolist() == [0.5, 1.0]
    assert o["start"].tolist() == [0.0, 2.0, 4.0]


def test_phase_table_over_ranks(two_ranks):
    t = phase_table(two_ranks).set_index("phase")
    assert list(t.index) == ["(outside phases)", "solve", "phase 7"]
    assert t.loc["solve", ["ranks", "wall_max", "wall_mean", "mpi_mean", "mpi_pct", "calls"]].tolist() == \
        [2, 3.0, 2.5, 2.5, 100.0, 4]
    assert t.loc["(outside phases)", "mpi_pct"] == pytest.approx(100 / 3)
    assert t.loc["(outside phases)", "top_function"] == "MPI_Send" and t.loc["phase 7", "ranks"] == 1


def test_phase_functions_in_phase_order_with_their_share(two_ranks):
    f = phase_function_table(two_ranks)
    assert list(zip(f["phase"], f["function"])) == [("(outside phases)", "MPI_Send"), ("solve", "MPI_Barrier"),
                                                    ("phase 7", "MPI_Barrier")]
    assert f["calls"].tolist() == [10, 4, 0] and f["pct_phase_mpi"].tolist() == [100.0, 100.0, 100.0]


def test_logs_without_a_timeline_give_none_and_empty_tables(make_profile):
    p = make_profile([(0, 1.0, 0.5)], [(0, "MPI_Barrier", "collective", 1, 0.5, 0)])
    a = analyse(p)
    assert a.timeline is None and a.phases.empty and a.phase_functions.empty
    d = a.to_json_dict()
    assert d["timeline"] is None and d["phases"] == [] and d["phase_functions"] == []


def test_json_holds_bins_and_phases(two_ranks):
    d = analyse(two_ranks).to_json_dict()
    assert d["timeline"]["bin_width"] == 2.0
    assert d["timeline"]["per_rank"][0] == {"rank": 0, "mpi_share": [1.0, 0.5, None]}
    assert [p["phase"] for p in d["phases"]] == ["(outside phases)", "solve", "phase 7"]
    ranks = two_ranks.to_json_dict()["ranks"]
    assert ranks[1]["bins"] == {"width": 2.0, "mpi_time": [1.0, 2.0, 1.0], "compute_time": [1.0, 0.0, 0.0]}
    assert ranks[1]["phases"]["(outside phases)"]["functions"]["MPI_Send"] == {"calls": 10, "time": 1.0, "bytes": 80}
