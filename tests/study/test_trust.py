"""What a finding may rest on: no oversubscribed runs, a base that means something, the cause of MPI time,
the scaling mode, and an opening of at most ten findings that never contradict each other."""

from __future__ import annotations

import sqlite3

import pytest
from study_synth import FIVE, Planted, halo_profile, mpi_race

import scalewise
from scalewise.analysis.study.findings import analyse_study
from scalewise.analysis.study.ranking import OPENING_SIZE, opening


def _runs_of(a, kinds=None):
    return [f for f in a.findings if kinds is None or f.kind in kinds]


def test_oversubscribed_runs_give_no_finding_but_stay_in_the_tables(planted):
    """On 2 cores the 4-rank runs share cores: their 20% is in the tables, marked, and claimed nowhere."""
    study = scalewise.open_study(planted(mpi_race(FIVE, cores=2)))
    four = set(study.runs.loc[study.runs["ranks"] == 4, "run_id"])
    assert study.runs.set_index("ranks")["oversubscribed"].groupby(level=0).all().to_dict() == {
        1: False, 2: False, 4: True}
    assert set(study.runs["cores_per_node"]) == {2}
    a = analyse_study(study)
    for f in a.findings:
        if f.kind != "note":
            assert not four & set(f.runs), f.text
    note = [f for f in a.findings if f.kind == "note" and "oversubscribed" in f.text]
    assert len(note) == 1 and note[0].numbers["oversubscribed"] == 10 and "4 ranks on a node of 2 cores" in note[0].text
    row = a.comparisons[a.comparisons["scale"] == 4].iloc[0]
    assert row["oversubscribed"] and row["rule"] == "oversubscribed" and not row["claimed"]
    assert row["gain_pct"] == pytest.approx(20.0), "the number stays in the table"
    assert a.summary.set_index("ranks")["oversubscribed"].groupby(level=0).all().to_dict()[4]

    opted = analyse_study(study, include_oversubscribed=True)
    cells = [f for f in opted.findings if f.kind == "cell"]
    assert len(cells) == 1 and "Caveat: 10 of its runs were oversubscribed (up to 4 ranks on 2 cores)" in cells[0].text


def test_older_stores_are_read_with_the_placement_derived(planted):
    """A version-2 store (no placement columns) reads as before, placement from the session's CPU count."""
    db = planted(mpi_race())
    con = sqlite3.connect(db)
    for col in ("cores_per_node", "placed_per_node", "oversubscribed", "stale"):
        con.execute(f"ALTER TABLE runs DROP COLUMN {col}")
    con.execute("UPDATE schema_version SET version = 2")
    con.commit()
    con.close()
    runs = scalewise.open_study(db).runs.set_index("ranks")
    assert set(runs["cores_per_node"]) == {2}, "the planted session ran on 2 CPUs"
    assert runs["oversubscribed"].groupby(level=0).all().to_dict() == {1: False, 2: False, 4: True}
    assert not runs["stale"].any()


def _skewed(nranks: int, slow: float) -> object:
    """A halo run whose rank 0 computes ``slow`` s and the others 1 s; everyone ends together."""
    prof = halo_profile(nranks, compute=1.0, allreduce=0.1, waitall=slow - 1.0)
    r, f = prof.ranks, prof.functions
    r.loc[r["rank"] == 0, ["compute_time", "mpi_time"]] = [slow, 0.1]
    f.loc[(f["rank"] == 0) & (f["function"] == "MPI_Waitall"), "time"] = 0.0
    r["wall"] = r["compute_time"] + r["mpi_time"]
    return prof


def test_waiting_for_the_slow_rank_is_imbalance_bound_not_communication_bound(planted):
    """Both apps spend most of their time in MPI; only the even one is bound by moving data."""
    runs = [Planted(app="skewed", ranks=4, repetition=k, wall=4.1, profile=_skewed(4, 4.0)) for k in range(3)]
    runs += [Planted(app="even", ranks=4, repetition=k, wall=4.1,
                     profile=halo_profile(4, compute=1.0, allreduce=0.1, waitall=3.0)) for k in range(3)]
    a = analyse_study(scalewise.open_study(planted(runs)))
    bound = {f.text.split(" ")[0]: f for f in a.findings if f.kind == "bound"}
    skewed, even = bound["app=skewed"], bound["app=even"]
    assert skewed.numbers["kind"] == "imbalance-bound" and even.numbers["kind"] == "communication-bound"
    assert skewed.numbers["load_balance"] == pytest.approx(1.75 / 4.0)
    assert skewed.numbers["imbalance_share"] == pytest.approx((4.0 - 1.75) / 4.1)
    assert "waiting for the slowest rank is 55% of the run time" in skewed.text
    p = a.profile.set_index("app")
    assert p.loc["skewed", "load_balance"] == pytest.approx(1.75 / 4.0) and p.loc["even", "load_balance"] == 1.0


def _weak(walls: dict[int, float]) -> list[Planted]:
    return [Planted(ranks=r, wall=w, repetition=k) for k in range(5) for r, w in walls.items()]


def test_weak_scaling_keeps_the_time_as_its_ideal(planted):
    """The problem grows with the ranks: 10 s everywhere is perfect, 20 s at 4 ranks is 50%."""
    study = scalewise.open_study(planted(_weak({1: 10.0, 2: 10.0, 4: 20.0})))
    weak = analyse_study(study, scaling_mode="weak").scalability.set_index("ranks")
    assert weak["ideal"].tolist() == [1.0, 1.0, 1.0]
    assert weak["efficiency"].to_dict() == pytest.approx({1: 1.0, 2: 1.0, 4: 0.5})
    strong = analyse_study(study).scalability.set_index("ranks")
    assert strong["efficiency"].to_dict() == pytest.approx({1: 1.0, 2: 0.5, 4: 0.125})
    f = [f for f in analyse_study(study, scaling_mode="weak").findings if f.kind == "scaling"]
    assert len(f) == 1 and "weak scaling efficiency stays at or above 90% up to 2 ranks and falls to 50% at 4 ranks" \
        in f[0].text


def test_the_study_file_says_weak_and_the_report_follows(planted, tmp_path):
    from click.testing import CliRunner

    from scalewise.cli.main import cli
    db = planted(_weak({1: 10.0, 2: 10.0, 4: 20.0}))
    study_file = tmp_path / "weak.yaml"
    study_file.write_text(f"name: weak\nscaling: weak\napplications:\n  app:\n    command: [app]\noutput: {db.parent}\n")
    out = CliRunner().invoke(cli, ["study", "report", str(study_file), "-o", str(tmp_path / "w.html"), "--include-stale",
                                   "--csv", str(tmp_path / "t")])
    assert out.exit_code == 0, out.output
    import pandas as pd
    assert pd.read_csv(tmp_path / "t" / "scalability.csv").set_index("ranks")["efficiency"].to_dict() == \
        pytest.approx({1: 1.0, 2: 1.0, 4: 0.5})
    assert 'data-mode="weak"' in (tmp_path / "w.html").read_text()


def test_the_opening_merges_ranks_and_reconciles(planted):
    """Open MPI wins in both cells of params=a, MPICH in both of params=b: one interaction, no two facts."""
    runs = []
    for k, j in enumerate((0.99, 0.995, 1.0, 1.005, 1.01)):
        for ranks in (1, 2):
            for params, slow in (("a", "mpich"), ("b", "openmpi")):
                for mpi in ("openmpi", "mpich"):
                    wall = 10.0 / ranks * j * (1.5 if mpi == slow else 1.0)
                    runs.append(Planted(mpi=mpi, ranks=ranks, repetition=k, wall=wall, custom=(("params2", params),)))
    a = analyse_study(scalewise.open_study(planted(runs)))
    key = opening(a.findings)
    assert len(key) <= OPENING_SIZE
    mpi = [f for f in key if f.numbers.get("axis") == "mpi"]
    assert len(mpi) == 1 and mpi[0].kind == "interaction"
    assert mpi[0].numbers["winners"] == {"openmpi": 2, "mpich": 2}
    assert "which of mpich and openmpi wins depends on the other settings" in mpi[0].text
    p2 = [f for f in key if f.numbers.get("axis") == "params2"]
    assert all(f.kind == "interaction" for f in p2)
    assert not [f for f in key if f.kind == "cell"], "single cells stay in the full list"


def test_energy_is_a_finding_only_with_the_users_power(planted):
    study = scalewise.open_study(planted(mpi_race(FIVE, slow_elsewhere=1.3)))
    assert not [f for f in analyse_study(study).findings if f.kind == "energy"]
    given = [f for f in analyse_study(study, watts_per_node=400.0).findings if f.kind == "energy"]
    assert given and "400 W per node" in given[0].text
