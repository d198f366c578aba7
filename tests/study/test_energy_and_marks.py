"""Energy follows the comparisons' performance and noise rule; oversubscribed points are marked in every figure
and table; the study says when compute time is imbalanced; a 1-rank job's self-traffic is no base for a change."""

from __future__ import annotations

import pytest
from matplotlib.lines import Line2D
from study_synth import FIVE, Planted, halo_profile, mpi_race
from test_trust import _skewed

import scalewise
from scalewise.analysis.run.findings import IMBALANCE_MAX_OVER_MEAN
from scalewise.analysis.study import noise
from scalewise.analysis.study.findings import analyse_study
from scalewise.report.study import figures as sf
from scalewise.report.study.html import render_study_html
from scalewise.report.study.registry import figures_for, panel_keys


def _fom_race(fom_openmpi: float, fom_mpich: float, wall_openmpi: float = 0.724, wall_mpich: float = 0.225,
              jitter=(0.98, 1.0, 1.02)) -> list[Planted]:
    """Open MPI's launcher takes 3x MPICH's wall; the figure of merit (lower is better, seconds) is what ran."""
    runs = []
    for rep, j in enumerate(jitter):
        for mpi, fom, wall in (("openmpi", fom_openmpi, wall_openmpi), ("mpich", fom_mpich, wall_mpich)):
            runs.append(Planted(mpi=mpi, ranks=2, repetition=rep, wall=wall * (2 - j), fom=fom * j,
                                fom_name="time", higher_is_better=False))
    return runs


def test_energy_follows_the_figure_of_merit_not_the_launchers_wall(planted):
    """FOMs 0.152 vs 0.144 s (within noise) under walls 0.724 vs 0.225 s: no saving claimed, costs 5% apart."""
    a = analyse_study(scalewise.open_study(planted(_fom_race(0.152, 0.144))), watts_per_node=400.0)
    assert not a.comparisons["claimed"].any()
    assert not [f for f in a.findings if f.kind == "energy"]
    e = a.energy.set_index("mpi")
    assert e.loc["openmpi", "yearly_kwh"] / e.loc["mpich", "yearly_kwh"] == pytest.approx(0.152 / 0.144)
    assert e.loc["mpich", "jobs_per_year"] == e.loc["openmpi", "jobs_per_year"] == pytest.approx(
        365 * 86400 / 0.225), "the job count rests on the fastest configuration's wall"
    assert not e["saving_claimed"].any() and e.loc["mpich", "saving_rule"] == noise.RULE
    assert e.loc["openmpi", "saving_rule"] == "dearest"


def test_energy_saving_claimed_where_the_comparison_is(planted):
    """A 2x figure of merit is claimed by the noise rule; the saving is half the dearest cost and said."""
    a = analyse_study(scalewise.open_study(planted(_fom_race(0.30, 0.15))), watts_per_node=400.0)
    assert a.comparisons["claimed"].all()
    e = a.energy.set_index("mpi")
    assert e.loc["mpich", "saving_claimed"] and e.loc["mpich", "saving"] == pytest.approx(
        e.loc["openmpi", "yearly_cost"] / 2)
    f = [f for f in a.findings if f.kind == "energy"]
    assert len(f) == 1 and "mpi=mpich saves" in f[0].text and "the noise rule claims" in f[0].text
    assert not [f for f in analyse_study(scalewise.open_study(planted(_fom_race(0.30, 0.15), "nopower"))).findings
                if f.kind == "energy"], "no finding from an assumed power"


def test_energy_leaves_oversubscribed_runs_out_and_b9_needs_the_power(planted):
    study = scalewise.open_study(planted(mpi_race(FIVE, cores=2, slow_elsewhere=1.3)))
    a = analyse_study(study, watts_per_node=400.0)
    assert set(a.energy["ranks"]) == {1, 2}, "the 4-rank runs shared 2 cores"
    assert 4 in set(analyse_study(study, watts_per_node=400.0, include_oversubscribed=True).energy["ranks"])
    energy = [f for f in a.findings if f.kind == "energy"]
    assert len(energy) == 1 and "at 2 ranks" in energy[0].text
    b9 = {s.id: s for s in figures_for(a)}["b9-energy"]
    assert b9.missing(a) is None
    assumed = analyse_study(study)
    assert "--watts-per-node" in {s.id: s for s in figures_for(assumed)}["b9-energy"].missing(assumed)
    html = render_study_html(assumed)
    assert 'data-missing="b9-energy"' in html and 'id="energy-assumptions" data-given="false"' in html


def _hollow_points(fig) -> list[tuple[float, float]]:
    out = []
    for ax in fig.axes:
        for line in ax.get_lines():
            if line.get_linestyle() == "None" and line.get_markerfacecolor() == "white":
                out += list(zip(line.get_xdata(), line.get_ydata()))
    return out


def test_oversubscribed_points_are_hollow_and_captioned(planted):
    """B8, P1, P8, the performance figures and the POP table mark the 4-rank runs on 2 cores."""
    a = analyse_study(scalewise.open_study(planted(mpi_race(cores=2))))
    b8 = sf.b8_efficiency(a.scalability, "ranks", panel_keys(a), ["mpi"])
    assert sorted(x for x, _ in _hollow_points(b8)) == [4, 4], "one hollow point per curve, at 4 ranks"
    p1 = sf.p1_mpi_share(a.profile, "ranks", panel_keys(a), ["mpi"])
    assert sorted(x for x, _ in _hollow_points(p1)) == [4, 4]
    assert any(isinstance(h, Line2D) for leg in b8.legends for h in leg.legend_handles), "a legend entry says so"
    perf = sf.performance_by_axis(a.summary, "mpi", "ranks", [])
    assert sorted(x for x, _ in _hollow_points(perf)) == [4, 4]
    over = frozenset(a.study.runs.loc[a.study.runs["ranks"] == 4, "run_id"])
    p8 = sf.p8_comm_share(a.comm, a.top_functions, over)
    hatched = [p for ax in p8.axes for p in ax.patches if p.get_hatch()]
    assert hatched and len(hatched) == len([p for ax in p8.axes for p in ax.patches]), "P8 is at 4 ranks only"
    captions = {s.id: s.caption for s in figures_for(a)}
    for fid in ("b8-efficiency", "p1-mpi-share", "p8-comm-share", "perf-mpi", "p6-data", "p7-function-time"):
        assert "oversubscribed" in captions[fid], fid
    html = render_study_html(a)
    assert html.count('data-scale="4" data-oversubscribed="true"') == 2, "the 4-rank column of both POP tables"
    assert 'data-scale="2" data-oversubscribed="false"' in html and 'data-pop-note="oversubscribed"' in html

    quiet = analyse_study(scalewise.open_study(planted(mpi_race(cores=64), "quiet")))
    assert not _hollow_points(sf.b8_efficiency(quiet.scalability, "ranks", [], ["mpi"]))
    assert not any("oversubscribed" in s.caption for s in figures_for(quiet))


def test_study_imbalance_uses_the_one_run_threshold(planted):
    """Rank 0 computing 2.2 s against 1 s (1.69x the mean) is imbalanced; 1.1 s (1.07x) is not."""
    runs = [Planted(app="skewed", ranks=4, repetition=k, wall=2.3, profile=_skewed(4, 2.2)) for k in range(3)]
    runs += [Planted(app="mild", ranks=4, repetition=k, wall=1.3, profile=_skewed(4, 1.1)) for k in range(3)]
    a = analyse_study(scalewise.open_study(planted(runs)))
    found = {f.text.split(":")[0]: f for f in a.findings if f.kind == "imbalance"}
    assert set(found) == {"app=skewed"}
    f = found["app=skewed"]
    mean = (2.2 + 3) / 4
    assert f.numbers["load_balance"] == pytest.approx(mean / 2.2)
    assert f.numbers["max_over_mean"] >= IMBALANCE_MAX_OVER_MEAN > 1.1 / ((1.1 + 3) / 4)
    assert "compute time is imbalanced: POP load balance 59% at 4 ranks" in f.text


def test_volume_change_is_never_against_a_one_rank_jobs_self_traffic(planted):
    a = analyse_study(scalewise.open_study(planted(mpi_race())))
    vol = [f for f in a.findings if f.kind == "volume"]
    assert vol and all("at 1 rank" not in f.text for f in vol)
    assert all(f.text.split("data sent per rank goes from ")[1].split(" at ")[1].startswith("2 ranks") for f in vol)
    one = a.profile[a.profile["ranks"] == 1]
    assert (one["bytes"] > 0).all(), "the 1-rank runs do count their Allreduce bytes"
    ids_one = set(",".join(one["run_ids"]).split(","))
    assert not any(ids_one & set(f.runs) for f in vol)


def test_one_rank_only_series_give_no_volume_finding(planted):
    runs = [Planted(ranks=1, repetition=k, wall=10.0, profile=halo_profile(1, 8.0, 0.5, 0.0)) for k in range(3)]
    runs += [Planted(ranks=2, repetition=k, wall=5.0, profile=halo_profile(2, 4.0, 0.5, 0.3)) for k in range(3)]
    a = analyse_study(scalewise.open_study(planted(runs)))
    assert not [f for f in a.findings if f.kind == "volume"], "one multi-rank scale is no series"


def test_tuning_bars_of_oversubscribed_groups_are_hatched():
    """Parameter sets at 2 ranks and at 4 ranks on 2 cores: the table flags the 4-rank group, B3 hatches its bars."""
    import pandas as pd

    from scalewise.analysis.study.tuning import tuning_table
    perf = pd.DataFrame([{"app": "a", "ranks": r, "params": p, "run_id": f"{r}{p}{i}", "repetition": i, "wall": v,
                          "value": v, "metric": "time", "unit": "s", "higher_is_better": False,
                          "oversubscribed": r == 4}
                         for r in (2, 4) for p, base in (("default", 10.0), ("fast", 8.0))
                         for i, v in enumerate((base, base * 1.01, base * 0.99))])
    t = tuning_table(perf, ["app", "ranks", "params"])
    assert t.set_index(["group", "params"])["oversubscribed"].to_dict() == {
        ("ranks=2", "default"): False, ("ranks=2", "fast"): False, ("ranks=4", "default"): True,
        ("ranks=4", "fast"): True}
    fig = sf.b3_tuning(t)
    hatched = [p for ax in fig.axes for p in ax.patches if p.get_hatch()]
    assert len(hatched) == 2 and all(p in fig.axes[1].patches for p in hatched), "both bars of the 4-rank panel"


def test_the_study_file_gives_the_power_and_the_command_line_wins(planted, tmp_path):
    from click.testing import CliRunner

    from scalewise.cli.main import cli
    db = planted(_fom_race(0.30, 0.15))
    study_file = tmp_path / "power.yaml"
    study_file.write_text(f"name: power\napplications:\n  app:\n    command: [app]\noutput: {db.parent}\n"
                          "report:\n  watts_per_node: 500\n  price_per_kwh: 0.3\n")

    def report(*extra):
        page = tmp_path / "p.html"
        out = CliRunner().invoke(cli, ["study", "report", str(study_file), "-o", str(page), "--include-stale",
                                       "--json", *extra])
        assert out.exit_code == 0, out.output
        import json
        return json.loads(out.stdout), page.read_text()

    data, html = report()
    energy = [f for f in data["findings"] if f["kind"] == "energy"]
    assert len(energy) == 1 and "at 500 W per node and 0.3 per kWh" in energy[0]["text"]
    assert 'id="energy-assumptions" data-given="true"' in html and 'data-missing="b9-energy"' not in html
    data, _ = report("--watts-per-node", "250")
    assert "at 250 W per node and 0.3 per kWh" in [f for f in data["findings"] if f["kind"] == "energy"][0]["text"]
    study_file.write_text(study_file.read_text().replace("watts_per_node: 500", "watts_per_node: 0"))
    bad = CliRunner().invoke(cli, ["study", "report", str(study_file)])
    assert bad.exit_code == 2 and "report.watts_per_node" in bad.output and len(bad.output.strip().splitlines()) == 1


def _launch_race(app_seconds: float, wall: float) -> list[Planted]:
    """Two MPIs, 2 ranks, three repetitions whose profiled application took ``app_seconds`` of a ``wall`` launch."""
    return [Planted(mpi=mpi, ranks=2, repetition=rep, wall=wall, profile=halo_profile(2, 0.8 * app_seconds,
                                                                                    0.1 * app_seconds,
                                                                                    0.1 * app_seconds))
            for rep in range(3) for mpi in ("openmpi", "mpich")]


def test_a_wall_that_is_mostly_launch_is_said(planted):
    """0.15 s of application in a 0.5 s launch: 70% is launch and teardown, said once; 0.45 of 0.5 s is not."""
    a = analyse_study(scalewise.open_study(planted(_launch_race(0.15, 0.5))))
    notes = [f for f in a.findings if "launch and teardown" in f.text]
    assert len(notes) == 1 and notes[0].numbers["share"] == pytest.approx(0.7) and notes[0].numbers["warn"]
    calm = analyse_study(scalewise.open_study(planted(_launch_race(0.45, 0.5), "calm")))
    assert not [f for f in calm.findings if "launch and teardown" in f.text]


def test_tune_says_when_its_walls_are_mostly_launch(tmp_path):
    from scalewise.tune.plan import TuneSource
    from scalewise.tune.rounds import launch_share

    def source(fom):
        return TuneSource("x.swlog", halo_profile(2, 0.12, 0.015, 0.015), "openmpi", {"command": ["./a"], "fom": fom},
                          tmp_path, {"ranks": [2]}, 1.0)
    o = launch_share(source({"source": "wall"}), [0.5, 0.52, 0.48])
    assert o.warn and o.share == pytest.approx(0.7) and o.runs == 3
    assert launch_share(source({"source": "result_line"}), [0.5]) is None, "the program's own time is compared"
