"""open_study: tidy frames from the real store and real logs, read-only, with one-line errors."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3

import pytest
from study_synth import Planted, halo_profile, mpi_race

import scalewise
from scalewise.analysis.run.breakdown import time_breakdown
from scalewise.analysis.run.volume import data_volume
from scalewise.errors import ScalewiseError


def test_runs_frame_has_settings_results_and_profile_metrics(planted):
    runs = mpi_race()
    db = planted(runs)
    study = scalewise.open_study(db)
    assert study.name == "planted" and len(study.runs) == 18
    assert study.swept == ["mpi", "ranks"]
    for column in ("run_id", "app", "mpi", "ranks", "repetition", "status", "wall", "fom", "mpi_share", "bytes"):
        assert column in study.runs
    by_id = study.runs.set_index("run_id")
    for p in runs[:6]:
        row, profile = by_id.loc[p.run_id()], p.profile
        assert row["wall"] == p.wall and row["status"] == "ok"
        assert row["mpi_share"] == pytest.approx(time_breakdown(profile).mpi_share)
        assert row["bytes"] == data_volume(profile).total, "same bytes rule as the per-run analysis"
        assert row["bytes_per_rank_max"] == data_volume(profile).per_rank_total.max
        f = study.functions[study.functions["run_id"] == p.run_id()].set_index("function")
        assert f.loc["MPI_Allreduce", "calls"] == 100 * p.ranks
        assert f.loc["MPI_Allreduce", "time_per_rank"] == pytest.approx(0.5 * p.ranks)
    sizes = study.sizes[study.sizes["run_id"] == runs[4].run_id()]  # 4 ranks
    assert sizes.set_index("function").loc["MPI_Isend", "count"] == 4 * 200


def test_where_and_ok_return_new_sets(planted):
    study = scalewise.open_study(planted(mpi_race() + [Planted(ranks=8, status="failed", wall=None)]))
    four = study.where(ranks=4, mpi="mpich")
    assert len(four.runs) == 3 and set(four.functions["run_id"]) == set(four.runs["run_id"])
    assert len(study.ok().runs) == 18 and len(study.runs) == 19
    assert study.failed().runs["ranks"].tolist() == [8]


def test_custom_axes_become_columns(planted):
    runs = [Planted(ranks=r, custom=(("size", s),), wall=w) for r in (1, 2) for s, w in (("small", 1.0), ("big", 9.0))]
    study = scalewise.open_study(planted(runs))
    assert "size" in study.runs and set(study.runs["size"]) == {"small", "big"}
    assert study.swept == ["ranks", "size"]
    assert study.runs["mpi_share"].isna().all(), "no profiles, no profile metrics"


def test_study_file_folder_and_database_all_open(planted, tmp_path):
    db = planted(mpi_race(profiles=False))
    study_file = tmp_path / "s.yaml"
    study_file.write_text(f"name: planted\noutput: {db.parent}\napplications:\n  halo:\n    command: [./halo]\n")
    for source in (db, db.parent):
        assert len(scalewise.open_study(source).runs) == 18
    # The study file plans none of these runs: they are stale, kept in the store and left out unless asked.
    assert scalewise.open_study(study_file).runs.empty
    kept = scalewise.open_study(study_file, include_stale=True).runs
    assert len(kept) == 18 and kept["stale"].all()


def test_reading_never_writes(planted):
    db = planted(mpi_race())
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    scalewise.open_study(db)
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before


def test_an_unreadable_profile_is_a_note_not_an_error(planted):
    runs = [Planted(ranks=2, repetition=k, profile=halo_profile(2, 8.0, 1.0, 1.0)) for k in range(2)]
    db = planted(runs)
    bad = db.parent / f"runs/{runs[0].run_id()}/profile.swlog"
    bad.write_bytes(bad.read_bytes()[:40])
    study = scalewise.open_study(db)
    assert len(study.notes) == 1 and runs[0].run_id() in study.notes[0]
    by_id = study.runs.set_index("run_id")
    assert by_id["mpi_share"].isna().tolist() == [True, False]


def test_user_errors_are_one_line(planted, tmp_path):
    with pytest.raises(ScalewiseError, match="no such file"):
        scalewise.open_study(tmp_path / "missing.sqlite")
    not_db = tmp_path / "notes.txt"
    not_db.write_text("hello " * 200)
    with pytest.raises(ScalewiseError, match="not a scalewise results database"):
        scalewise.open_study(not_db)
    with pytest.raises(ScalewiseError, match="no results yet"):
        scalewise.open_study(tmp_path)
    newer = tmp_path / "newer" / "results.sqlite"
    newer.parent.mkdir()
    shutil.copy(planted(mpi_race(profiles=False)), newer)
    con = sqlite3.connect(newer)
    con.execute("UPDATE schema_version SET version = 99")
    con.commit()
    con.close()
    with pytest.raises(ScalewiseError, match="newer than this scalewise understands"):
        scalewise.open_study(newer)
