"""Planted effects come out with the right numbers; noise does not become a claim."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from study_synth import FIVE, Planted, mpi_race

import scalewise
from scalewise.analysis.study import scaling
from scalewise.analysis.study.energy import energy_costs
from scalewise.analysis.study.findings import analyse_study
from scalewise.errors import ScalewiseError


def _faster(a):
    """The claimed cells (each one difference at one scale)."""
    return [f for f in a.findings if f.kind == "cell"]


def test_twenty_percent_faster_mpi_at_4_ranks_is_claimed_with_its_number(planted):
    study = scalewise.open_study(planted(mpi_race(FIVE)))
    a = analyse_study(study)
    claims = _faster(a)
    assert len(claims) == 1, [f.text for f in claims]
    f = claims[0]
    assert f.numbers["winner"] == "openmpi" and f.numbers["loser"] == "mpich" and f.numbers["scale"] == 4
    assert f.numbers["gain_pct"] == pytest.approx(20.0, abs=1e-9)
    assert "openmpi is 20.0% faster than mpich at 4 ranks" in f.text
    assert "median 8,640 vs 7,200 jobs/day" in f.text
    four = study.runs[(study.runs["ranks"] == 4)]
    assert set(f.runs) == set(four["run_id"]) and len(f.runs) == 10
    merged = [f for f in a.findings if f.kind == "faster"]
    assert len(merged) == 1 and merged[0].numbers["cells"] == 3 and merged[0].numbers["claimed"] == 1
    assert "mpi: openmpi is faster than mpich in 1 of 3 cells compared, by 20.0% (at 4 ranks)" in merged[0].text


def test_one_percent_inside_the_noise_is_not_claimed(planted):
    a = analyse_study(scalewise.open_study(planted(mpi_race(FIVE))))
    small = a.comparisons[a.comparisons["scale"].isin([1, 2])]
    assert len(small) == 2
    assert small["gain_pct"].round(6).tolist() == [1.0, 1.0]
    assert not small["claimed"].any()
    assert not any("at 1 rank" in f.text or "at 2 ranks" in f.text for f in _faster(a))
    noise = [f for f in a.findings if f.kind == "noise"]
    assert len(noise) == 1 and noise[0].numbers["count"] == 2


def test_the_margin_is_the_scatter_or_five_percent(planted):
    """Repetitions 0.1% apart: 10% is claimed, 1% (below the 5% margin) is not; 3% scatter raises no margin."""
    a = analyse_study(scalewise.open_study(planted(mpi_race(jitter=(0.999, 0.9995, 1.0, 1.0005, 1.001), slow_elsewhere=1.10))))
    small = a.comparisons[a.comparisons["scale"].isin([1, 2])]
    assert small["claimed"].all() and small["margin_pct"].tolist() == pytest.approx([5.0, 5.0])
    assert {round(f.numbers["gain_pct"], 6) for f in _faster(a)} == {10.0, 20.0}
    tight = analyse_study(scalewise.open_study(planted(mpi_race(jitter=(0.999, 0.9995, 1.0, 1.0005, 1.001)))))
    assert not tight.comparisons[tight.comparisons["scale"] < 4]["claimed"].any()
    # 20% apart at 4 ranks, but each side's repetitions scatter by a third (interquartile range of jobs/day
    # 1/1.15 to 1/0.85 over their median): the margin is that scatter, and 20% is not claimed.
    wide = analyse_study(scalewise.open_study(planted(mpi_race(jitter=(0.7, 0.85, 1.0, 1.15, 1.3)))))
    four = wide.comparisons[wide.comparisons["scale"] == 4].iloc[0]
    assert four["margin_pct"] == pytest.approx(100 * (1 / 0.85 - 1 / 1.15)) and not four["claimed"]


def test_fewer_than_three_repetitions_are_never_claimed_and_the_report_says_what_it_needs(planted):
    a = analyse_study(scalewise.open_study(planted(mpi_race(jitter=(1.0, 1.0)))))
    assert set(a.comparisons["rule"]) == {"too-few"} and not a.comparisons["claimed"].any()
    note = [f for f in a.findings if f.kind == "note"]
    assert len(note) == 1 and note[0].numbers == {"count": 3, "fewest": 2, "needed": 3}
    assert "3 repetitions per configuration" in note[0].text
    assert not [f for f in a.findings if f.kind in ("faster", "cell", "scaling")]


def test_noise_intervals_follow_the_documented_rule():
    lo, hi, rule, _ = scaling.median_interval(np.array([10.0, 12.0]))
    assert (lo, hi, rule) == (10.0, 12.0, "range")
    assert scaling.median_interval(np.array([7.0]))[:3] == (7.0, 7.0, "single")
    # five runs: the min-max range is the narrowest order-statistics interval, and it covers the median 93.75%
    assert scaling.median_interval(np.array([9.0, 10.0, 10.5, 11.0, 30.0])) == (9.0, 30.0, "order statistics",
                                                                               1 - 2 / 32)
    lo, hi, rule, level = scaling.median_interval(np.arange(10.0))
    assert (lo, hi) == (1.0, 8.0) and level >= 0.95, "from six runs a true 95% interval exists"


def _strong(walls: dict[int, float], **extra) -> list[Planted]:
    return [Planted(ranks=r, wall=w, repetition=rep, **extra) for rep in range(2) for r, w in walls.items()]


def test_efficiency_against_the_smallest_run_and_a_declared_base(planted):
    study = scalewise.open_study(planted(_strong({1: 40.0, 2: 25.0, 4: 12.5, 8: 8.0})))
    default = analyse_study(study).scalability.set_index("ranks")
    assert default["efficiency"].to_dict() == pytest.approx({1: 1.0, 2: 0.8, 4: 0.8, 8: 0.625})
    assert (default["base_scale"] == 1).all()
    declared = analyse_study(study, base={"ranks": 2}).scalability.set_index("ranks")
    assert declared["efficiency"].to_dict() == pytest.approx({1: 1.25, 2: 1.0, 4: 1.0, 8: 0.78125})
    assert declared.loc[8, "speedup"] == pytest.approx(25.0 / 8.0)
    with pytest.raises(ScalewiseError, match="scale axis 'ranks'"):
        analyse_study(study, base={"nodes": 1})


def test_figure_of_merit_orientation(planted):
    """A lower-is-better FOM inverts the speedup; a higher-is-better one is used as is."""
    lower = [Planted(ranks=r, wall=5.0, fom=f, fom_name="time_to_solution", higher_is_better=False)
             for r, f in ((1, 100.0), (4, 50.0))]
    s = analyse_study(scalewise.open_study(planted(lower, "lower"))).scalability.set_index("ranks")
    assert s.loc[4, "speedup"] == pytest.approx(2.0) and s.loc[4, "efficiency"] == pytest.approx(0.5)
    higher = [Planted(ranks=r, wall=5.0, fom=f, fom_name="steps_per_s", higher_is_better=True)
              for r, f in ((1, 100.0), (4, 300.0))]
    a = analyse_study(scalewise.open_study(planted(higher, "higher")))
    assert a.summary["metric"].unique().tolist() == ["steps_per_s"]
    assert a.scalability.set_index("ranks").loc[4, "efficiency"] == pytest.approx(0.75)
    jobs = analyse_study(scalewise.open_study(planted(higher, "higher2")), metric="jobs/day")
    assert jobs.summary["median"].tolist() == pytest.approx([86400 / 5.0] * 2)


def test_energy_per_job_and_yearly_cost():
    """With jobs per day as the performance the time per job is the wall; the saving is claimed from 3 runs."""
    walls = {"x": (99.0, 100.0, 101.0), "y": (124.0, 125.0, 126.0)}
    summary = pd.DataFrame({"app": ["a", "a"], "mpi": ["x", "y"], "nodes": [2, 2], "ranks": [8, 8],
                            "median": [86400 / 100.0, 86400 / 125.0], "higher_is_better": [True, True],
                            "values": [tuple(86400 / w for w in walls[m]) for m in ("x", "y")],
                            "median_wall": [100.0, 125.0], "oversubscribed": [False, False],
                            "run_ids": ["r1", "r2"]})
    e = energy_costs(summary, scaling.Scale("ranks", ["app", "mpi", "nodes"]), watts_per_node=400.0,
                     price_per_kwh=0.25).set_index("mpi")
    assert e.loc["x", "kwh_per_job"] == pytest.approx(400 * 2 * 100 / 3.6e6)
    assert e.loc["y", "seconds_per_job"] == pytest.approx(125.0)
    assert e.loc["y", "jobs_per_year"] == pytest.approx(365 * 86400 / 100.0), "the same workload for both"
    assert e.loc["y", "yearly_cost"] == pytest.approx(365 * 86400 / 100.0 * 400 * 2 * 125 / 3.6e6 * 0.25)
    assert e.loc["x", "saving"] == pytest.approx(e.loc["y", "yearly_cost"] - e.loc["x", "yearly_cost"])
    assert e.loc["y", "saving"] == 0
    assert e.loc["x", "saving_claimed"] and not e.loc["y", "saving_claimed"]


def test_failed_runs_are_reported_and_left_out(planted):
    runs = mpi_race() + [
        Planted(mpi="mpich", ranks=8, status="failed", wall=None, reason="exit code 1"),
        Planted(mpi="openmpi", ranks=8, status="timeout", wall=60.0, reason="timed out after 60 s"),
    ]
    study = scalewise.open_study(planted(runs))
    a = analyse_study(study)
    failed = [f for f in a.findings if f.kind == "failed"]
    assert len(failed) == 1
    assert failed[0].numbers == {"not_ok": 2, "total": 20, "by_status": {"failed": 1, "timeout": 1}}
    assert set(failed[0].runs) == set(study.runs.loc[study.runs["ranks"] == 8, "run_id"])
    assert "2 of 20 runs did not succeed" in failed[0].text
    assert 8 not in set(a.summary["ranks"]), "failed runs carry no performance"


def test_profile_across_scale(planted):
    a = analyse_study(scalewise.open_study(planted(mpi_race())))
    growth = [f for f in a.findings if f.kind == "growth"]
    # Allreduce takes 0.5 s per rank count; its base is 2 ranks, where it first moves data between ranks.
    assert {f.numbers["function"] for f in growth} == {"MPI_Allreduce"}
    assert all(f.numbers["growth"] == pytest.approx(2.0) for f in growth)
    assert all("from 2 ranks to 4 ranks (1.000 s to 2.000 s)" in f.text for f in growth), [f.text for f in growth]
    p = a.profile.set_index(["mpi", "ranks"])
    wall = 40.0 / 4  # openmpi at 4 ranks, middle repetition
    assert p.loc[("openmpi", 4), "mpi_share"] == pytest.approx((2.0 + 0.1 * wall) / (0.8 * wall + 2.0 + 0.1 * wall))
    comm = a.comm
    assert set(comm["value"]) == {"openmpi", "mpich"} and set(comm["ranks"]) == {4}


def test_nodes_are_the_scale_when_swept(planted):
    """Nodes 1, 2, 4 with 2 ranks per node: efficiency is per node, the base one node."""
    runs = [Planted(nodes=n, ranks=2 * n, wall=w, repetition=k)
            for k in range(5) for n, w in ((1, 30.0), (2, 16.0), (4, 10.0))]
    a = analyse_study(scalewise.open_study(planted(runs)))
    assert a.scale.axis == "nodes"
    eff = a.scalability.set_index("nodes")["efficiency"]
    assert eff.to_dict() == pytest.approx({1: 1.0, 2: 30.0 / 16.0 / 2, 4: 30.0 / 10.0 / 4})
    scaling_finding = [f for f in a.findings if f.kind == "scaling"][0]
    assert "falls to 75% at 4 nodes" in scaling_finding.text and "against 1 node" in scaling_finding.text


def test_key_findings_take_the_strongest_of_each_kind_first():
    from scalewise.analysis.finding import Finding, key_findings

    fs = [Finding(k, f"{k}{i}", {}, ()) for k, n in (("volume", 2), ("faster", 3), ("failed", 1)) for i in range(n)]
    assert [f.text for f in key_findings(fs, limit=4)] == ["failed0", "faster0", "volume0", "faster1"]
    assert len(key_findings(fs, limit=50)) == len(fs)
