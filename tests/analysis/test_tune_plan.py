"""What `scalewise tune` targets in a profile, and the study it writes: hand-built profiles, exact answers."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from scalewise.campaign.expand import expand
from scalewise.campaign.study import load_study
from scalewise.cli.main import cli
from scalewise.errors import ScalewiseError
from scalewise.tune.choices import OPENMPI_ALGORITHMS
from scalewise.tune.plan import TuneSource, confirmation_study, held_out_study, plan_study, settings_file, write_study
from scalewise.tune.targets import P2P, dominant_targets


def _profile(build_profile, nranks=4):
    # Per rank: Allreduce 6 s over 100 calls of 8 KiB; Iallreduce 1 s (counts as Allreduce);
    # Isend 0.5 s + Waitall 1.5 s over 50 messages of 1 KiB; Bcast 0.3 s; Barrier 0.2 s.
    rows, hist = [], []
    for r in range(nranks):
        rows += [(r, "MPI_Allreduce", "collective", 100, 6.0, 100 * 8192),
                 (r, "MPI_Iallreduce", "collective", 10, 1.0, 10 * 8192),
                 (r, "MPI_Isend", "p2p", 50, 0.5, 50 * 1024), (r, "MPI_Waitall", "wait", 25, 1.5, 50 * 1024),
                 (r, "MPI_Bcast", "collective", 5, 0.3, 5 * 64), (r, "MPI_Barrier", "collective", 2, 0.2, 0)]
        hist += [(r, "MPI_Allreduce", 14, 100), (r, "MPI_Iallreduce", 14, 10), (r, "MPI_Isend", 11, 50),
                 (r, "MPI_Waitall", 11, 50), (r, "MPI_Bcast", 7, 5)]
    return build_profile([(r, 20.0, 9.5) for r in range(nranks)], rows, hist)


def test_targets_merge_nonblocking_forms_and_group_point_to_point(make_profile):
    targets = dominant_targets(_profile(make_profile))
    assert [t.name for t in targets] == ["MPI_Allreduce", P2P]  # Bcast 3.2% and Barrier 2.1% are below 5%
    allreduce, p2p = targets
    assert allreduce.pct_mpi == pytest.approx(100 * 7.0 / 9.5)
    assert allreduce.calls == 4 * 110 and allreduce.mean_bytes == 8192 and allreduce.mode_bin == 14
    assert allreduce.size_label == "8 KiB-16 KiB" and allreduce.comm_size == 4 and allreduce.collective == "allreduce"
    assert p2p.pct_mpi == pytest.approx(100 * 2.0 / 9.5) and p2p.calls == 4 * 50 and p2p.mean_bytes == 1024
    assert p2p.mode_bin == 11 and p2p.collective is None


def _source(build_profile, mpi="openmpi", seconds=2.0, nranks=4):
    return TuneSource(origin="planted.swlog", profile=_profile(build_profile, nranks), mpi=mpi,
                      application={"command": ["./app", "{{literal}}"], "fom": {"source": "wall"}},
                      workdir=Path("/tmp"), axes={"ranks": [nranks]}, run_seconds=seconds)


def test_open_mpi_plan_sweeps_every_allreduce_algorithm_and_the_vader_eager_limit(make_profile, tmp_path):
    plan = plan_study(_source(make_profile), "tune-app", budget_minutes=10)
    sets = plan.study["parameter_sets"]
    assert plan.study["axes"]["params"][0] == "default" and plan.dropped == []
    for number in OPENMPI_ALGORITHMS["allreduce"]:
        name = f"allreduce-{number}-{OPENMPI_ALGORITHMS['allreduce'][number]}"
        assert sets[name] == {"mca": {"coll_tuned_use_dynamic_rules": "1", "coll_tuned_allreduce_algorithm": str(number)}}
    # point-to-point: 1 KiB messages; just above (2048) and below (512 -> the 1024 floor); 4096 is the default
    assert {n: s for n, s in sets.items() if n.startswith("eager")} == {
        "eager-1024": {"mca": {"btl_vader_eager_limit": "1024"}}, "eager-2048": {"mca": {"btl_vader_eager_limit": "2048"}}}
    assert plan.runs == (1 + 6 + 2) * 3
    # an ordinary study file: it loads, and expands to every run
    write_study(plan.study, tmp_path / "tune.yaml", "header line")
    loaded = load_study(tmp_path / "tune.yaml")
    assert len(expand(loaded)) == plan.runs
    assert loaded.model.applications["app"].command == ["./app", "{{literal}}"]


def test_mpich_plan_names_the_algorithm_cvars(make_profile):
    sets = plan_study(_source(make_profile, "mpich"), "t", 10).study["parameter_sets"]
    assert sets["allreduce-recursive_doubling"] == {"cvars": {"MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM": "recursive_doubling"}}
    # Debian's MPICH 4.0 (ch4:ucx) carries messages on one node through UCX too: its threshold moves
    assert sets["eager-2048"] == {"mpich_env": {"UCX_RNDV_THRESH": "2048"}}


def test_the_budget_cuts_the_least_busy_targets_first_and_refuses_what_cannot_fit(make_profile):
    # 84 s at 2 s a run: confirmation reserves (2 + 2) x 5 runs and the held-out round 2 x 5 = 60 s;
    # 24 s / 6 s per set = 4 sets, one the default
    plan = plan_study(_source(make_profile, seconds=2.0), "t", budget_minutes=1.4)
    assert plan.study["axes"]["params"] == ["default", "allreduce-1-basic_linear", "allreduce-2-nonoverlapping",
                                            "allreduce-3-recursive_doubling"]
    assert plan.dropped == ["allreduce-4-ring", "allreduce-5-segmented_ring", "allreduce-6-rabenseifner",
                            "eager-1024", "eager-2048"]
    with pytest.raises(ScalewiseError, match="--budget 0.5: one run takes about 2.0 s"):
        plan_study(_source(make_profile, seconds=2.0), "t", budget_minutes=0.5)


def test_confirmation_runs_the_winners_and_their_combination(make_profile):
    plan = plan_study(_source(make_profile), "t", 10)
    c = confirmation_study(plan.study, ["allreduce-3-recursive_doubling", "eager-2048"], 4)
    assert c["axes"]["params"] == ["default", "allreduce-3-recursive_doubling", "eager-2048", "combined"]
    assert c["parameter_sets"]["combined"] == {"mca": {"coll_tuned_use_dynamic_rules": "1",
                                                       "coll_tuned_allreduce_algorithm": "3",
                                                       "btl_vader_eager_limit": "2048"}}
    assert c["repetitions"] == 4 and c["output"] == "t-confirm.study"
    assert c["order"] == "shuffled", "fresh runs in a shuffled order within each round"
    h = held_out_study(plan.study, c, "combined", 5)
    assert h["axes"]["params"] == ["default", "combined"] and h["parameter_sets"] == {
        "combined": c["parameter_sets"]["combined"]}
    assert h["output"] == "t-held-out.study" and h["order"] == "shuffled" and h["seed"] != c["seed"]


def test_settings_files_for_each_library():
    from scalewise.campaign.mpi_settings import MpiSettings
    ompi = settings_file("openmpi", MpiSettings(mca={"coll_tuned_allreduce_algorithm": 3,
                                                     "coll_tuned_use_dynamic_rules": 1}), "note")
    assert ompi.splitlines()[-2:] == ["coll_tuned_allreduce_algorithm = 3", "coll_tuned_use_dynamic_rules = 1"]
    mpich = settings_file("mpich", MpiSettings(cvars={"ALLREDUCE_INTRA_ALGORITHM": "ring"},
                                               mpich_env={"UCX_RNDV_THRESH": "8192"}), "note")
    assert mpich.splitlines()[-2:] == ["MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=ring", "UCX_RNDV_THRESH=8192"]
    assert "nothing to set" in settings_file("mpich", None, "note")


def test_tune_refuses_a_file_that_is_not_a_log_in_one_line(tmp_path):
    bad = tmp_path / "x.swlog"
    bad.write_bytes(b"not a log")
    res = CliRunner().invoke(cli, ["tune", str(bad)])
    assert res.exit_code != 0 and res.output.startswith("scalewise: error: ") and res.output.count("\n") == 1


def test_open_mpi_5_sets_add_sparbit_and_the_sm_eager_limit_and_outrank_han_across_nodes(make_profile):
    from scalewise.tune.choices import OPENMPI5_ALGORITHMS, algorithm_sets
    src = _source(make_profile, "openmpi-5.0.11")
    sets = plan_study(src, "t", 10).study["parameter_sets"]
    assert sets["allreduce-6-rabenseifner"] == {"mca": {"coll_tuned_use_dynamic_rules": "1",
                                                        "coll_tuned_allreduce_algorithm": "6"}}
    assert sets["eager-2048"] == {"mca": {"btl_sm_eager_limit": "2048"}}  # vader is "sm" in Open MPI 5
    allgather = dominant_targets(_profile(make_profile))[0].__class__(
        name="MPI_Allgather", pct_mpi=50, time=1, calls=1, mean_bytes=64, mode_bin=7, comm_size=4)
    assert "allgather-7-sparbit" in algorithm_sets("openmpi-5.0", allgather)
    assert "allgather-7-sparbit" not in algorithm_sets("openmpi-4.1", allgather)
    assert OPENMPI5_ALGORITHMS["allgatherv"][6] == "sparbit"
    src.axes = {"nodes": [2], "ranks": [4]}
    across = plan_study(src, "t", 10).study["parameter_sets"]["allreduce-4-ring"]["mca"]
    assert across["coll_tuned_priority"] == "40"  # above coll/han's 35: the forced algorithm is the one that runs


def test_mpich_5_sets_use_its_own_names_and_cell_size(make_profile):
    sets = plan_study(_source(make_profile, "mpich-5.0.2"), "t", 10).study["parameter_sets"]
    assert sets["allreduce-reduce_scatter_allgather"] == {
        "cvars": {"MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM": "reduce_scatter_allgather"}}
    assert "eager-8192" not in sets and sets["eager-2048"] == {
        "cvars": {"MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE": "2048", "MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD": "2048",
                  "MPIR_CVAR_CH4_PACK_BUFFER_SIZE": "16384"}}
    from scalewise.tune.choices import MPICH5_ALGORITHMS
    assert MPICH5_ALGORITHMS["barrier"] == ("nb", "smp", "k_dissemination")  # 5.0 has no "dissemination"


@pytest.mark.parametrize("mpi, cvars", [("mpich-5.0.2", {"MPIR_CVAR_CH4_OFI_EAGER_THRESHOLD": "2048"}),
                                        ("mpich", {})])
def test_mpich_across_nodes_moves_the_threshold_of_its_netmod(make_profile, mpi, cvars):
    """UCX's for both lines; MPICH 5.0's OFI netmod, when it is the one built, reads its own CVAR."""
    src = _source(make_profile, mpi)
    src.axes = {"nodes": [2], "ranks": [4]}
    sets = plan_study(src, "t", 10).study["parameter_sets"]
    assert sets["eager-2048"] == {"mpich_env": {"UCX_RNDV_THRESH": "2048"}, **({"cvars": cvars} if cvars else {})}


def test_intel_mpi_sets_are_i_mpi_adjust_presets_and_its_settings_file_an_environment(make_profile):
    from scalewise.campaign.mpi_settings import MpiSettings
    plan = plan_study(_source(make_profile, "intelmpi-2021.19"), "t", 10)
    sets = plan.study["parameter_sets"]
    assert sets == {"allreduce-1-recursive_doubling": {"env": {"I_MPI_ADJUST_ALLREDUCE": "1"}},
                    "allreduce-2-rabenseifner": {"env": {"I_MPI_ADJUST_ALLREDUCE": "2"}},
                    "allreduce-3-reduce_bcast": {"env": {"I_MPI_ADJUST_ALLREDUCE": "3"}},
                    "allreduce-7-shumilin_ring": {"env": {"I_MPI_ADJUST_ALLREDUCE": "7"}},
                    "allreduce-8-ring": {"env": {"I_MPI_ADJUST_ALLREDUCE": "8"}},
                    # 1 KiB messages: the shared-memory eager threshold just above and just below (1 KiB floor)
                    "eager-1024": {"env": {"I_MPI_SHM_EAGER_THRESHOLD": "1024"}},
                    "eager-2048": {"env": {"I_MPI_SHM_EAGER_THRESHOLD": "2048"}}}
    assert plan.study["axes"]["mpi"] == ["intelmpi-2021.19"]
    src = _source(make_profile, "intelmpi-2021.19")
    src.axes = {"nodes": [2], "ranks": [4]}  # between nodes Intel MPI's library names no threshold
    assert not [n for n in plan_study(src, "t", 10).study["parameter_sets"] if n.startswith("eager")]
    text = settings_file("intelmpi-2021", MpiSettings(env={"I_MPI_ADJUST_ALLREDUCE": "8"}), "note")
    assert text.splitlines()[-2:] == ["# use: set -a; . THIS_FILE; set +a; mpiexec.hydra ...",
                                      "I_MPI_ADJUST_ALLREDUCE=8"]


@pytest.mark.parametrize("mpi, shown", [("openmpi-3.1.6", "openmpi-3.1.6"), ("mpi-abi-1", "mpi-abi-1"),
                                        ("mvapich-2.3", "mvapich-2.3")])
def test_an_mpi_without_known_settings_is_one_line_naming_the_known(make_profile, mpi, shown):
    with pytest.raises(ScalewiseError) as err:
        plan_study(_source(make_profile, mpi), "t", 10)
    assert str(err.value) == (f"tune: MPI {shown} is not supported (known: openmpi-4.1, openmpi-5.0, mpich-4.0, "
                              "mpich-5.0, intelmpi-2021; e.g. openmpi-5.0.11, mpich-5.0.2, intelmpi-2021.19)")
