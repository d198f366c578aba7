"""Each proxy at 1, 2 and 4 ranks under both MPIs: its own verification
passes, the result line is well formed, the answer does not depend on the
rank count, and bad flags are refused with one clear line and exit 2."""
from __future__ import annotations

import math

import pytest

from proxy_harness import APPS, RESULT_KEYS, run_proxy
from support.mpijob import FLAVOURS

RANKS = (1, 2, 4)


def assert_well_formed(run, app: str, nranks: int, size: str = "tiny") -> dict[str, str]:
    assert run.returncode == 0, f"{app} at {nranks} ranks failed:\n{run.stdout}\n{run.stderr}"
    res = run.result
    assert tuple(res) == RESULT_KEYS
    assert res["app"] == app
    assert int(res["ranks"]) == nranks
    assert res["size"] == size
    assert res["status"] == "PASS"
    assert res["higher_is_better"] in ("0", "1")
    assert res["fom_unit"]
    assert float(res["fom"]) > 0 and math.isfinite(float(res["fom"]))
    assert float(res["wall"]) > 0
    return res


def run_all_ranks(flavour: str, app: str, *args: str):
    runs = {}
    for nranks in RANKS:
        run = run_proxy(flavour, app, nranks, "--size", "tiny", *args)
        assert_well_formed(run, app, nranks)
        runs[nranks] = run
    return runs


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_sem_conserves_mass_and_is_rank_count_independent(proxies_built, flavour):
    runs = run_all_ranks(flavour, "sem")
    for nranks, run in runs.items():
        assert float(run.note["mass_rel_drift"]) < 1e-12
        # Upwind advection is diffusive: the variance must actually decay.
        assert float(run.note["variance"]) < float(run.note["variance0"])
        assert int(run.note["rank0_peers"]) == {1: 0, 2: 1, 4: 2}[nranks]
    # Exact accumulation: the diagnostic is bit-for-bit the same.
    assert {run.result["check"] for run in runs.values()} == {runs[1].result["check"]}


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_ocean_converges_in_the_same_iterations_at_every_rank_count(proxies_built, flavour):
    runs = run_all_ranks(flavour, "ocean")
    grids = {1: "1x1", 2: "2x1", 4: "2x2"}
    for nranks, run in runs.items():
        assert run.note["ranks_grid"] == grids[nranks]
        assert float(run.note["max_relres"]) <= 1e-8
        assert float(run.note["true_relres"]) <= 1e-7
        assert int(run.result["check"]) == int(run.note["iterations"]) > 10
    assert {run.result["check"] for run in runs.values()} == {runs[1].result["check"]}


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_amr_conserves_mass_with_moving_patches(proxies_built, flavour):
    runs = run_all_ranks(flavour, "amr")
    for nranks, run in runs.items():
        assert float(run.note["mass_rel_drift"]) < 1e-12
        before, after = (int(x) for x in run.note["refined_tiles"].split("->"))
        assert 0 < before < int(run.note["tiles"]) and after > 0
        sends = int(run.note["rank0_sends"])
        assert (sends == 0) if nranks == 1 else (sends > 100)
    assert {run.result["check"] for run in runs.values()} == {runs[1].result["check"]}


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_dft_fft_round_trip_and_rank_count_independent_energy(proxies_built, flavour):
    runs = run_all_ranks(flavour, "dft")
    for run in runs.values():
        assert float(run.note["fft_spike_err"]) < 1e-10
        assert float(run.note["fft_roundtrip_err"]) < 1e-10
        assert float(run.note["orthonormality_err"]) < 1e-10
        assert float(run.note["energy"]) < float(run.note["energy_first"])
        assert run.result["higher_is_better"] == "0"
    ref = float(runs[1].result["check"])
    for run in runs.values():
        assert math.isclose(float(run.result["check"]), ref, rel_tol=1e-10, abs_tol=0)


def test_bitwise_answers_agree_across_mpi_libraries(proxies_built):
    for app in ("sem", "amr", "ocean"):
        checks = {f: run_proxy(f, app, 2).result["check"] for f in FLAVOURS}
        assert len(set(checks.values())) == 1, (app, checks)


@pytest.mark.parametrize("app,flag,value", [
    ("sem", "--steps", "5"), ("ocean", "--steps", "1"),
    ("amr", "--steps", "5"), ("dft", "--iters", "2"),
])
def test_explicit_sizing_is_reported_as_custom(proxies_built, app, flag, value):
    run = run_proxy("openmpi", app, 2, flag, value)
    assert_well_formed(run, app, 2, size="custom")


BAD_ARGS = {
    "sem": [(["--size", "huge"], "--size"), (["--ne", "abc"], "--ne"),
            (["--ne", "12"], "--ne"), (["--steps", "0"], "--steps"),
            (["--frobnicate", "1"], "--frobnicate"), (["--np"], "--np")],
    "ocean": [(["--size", "medium"], "--size"), (["--nx", "1.5"], "--nx"),
              (["--tol", "nan"], "--tol"), (["--wibble"], "--wibble"),
              (["--ny", "-4"], "--ny")],
    "amr": [(["--tiles", "x"], "--tiles"), (["--tile-cells", "100000"], "--tile-cells"),
            (["--regrid-every", ""], "--regrid-every"), (["stray"], "stray")],
    "dft": [(["--n", "12"], "--n"), (["--bands", "0"], "--bands"),
            (["--spacing", "-1"], "--spacing"), (["--n", "16", "--n", "32"], "--n"),
            (["--compute", "fast"], "--compute"), (["--compute", "sleep", "--compute-rate", "0"], "--compute-rate"),
            (["--compute-rate", "1x"], "--compute-rate")],
}


@pytest.mark.parametrize("app", APPS)
def test_bad_flags_give_one_clear_line_and_exit_2(proxies_built, app):
    # MPICH here: Open MPI's launcher lingers ~2 s on any failed job; it is
    # covered by the 4-rank test below.
    for args, named in BAD_ARGS[app]:
        run = run_proxy("mpich", app, 1, *args)
        assert run.returncode == 2, (args, run.returncode, run.stderr)
        lines = [l for l in run.stderr.splitlines() if l.startswith(f"{app}: error: ")]
        assert len(lines) == 1, (args, run.stderr)
        assert named in lines[0], (args, lines[0])
        assert not run.results


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_bad_flag_exit_status_survives_the_launcher_at_4_ranks(proxies_built, flavour):
    for app in APPS:
        run = run_proxy(flavour, app, 4, "--size", "enormous")
        assert run.returncode == 2, (app, run.returncode, run.stderr)
        lines = [l for l in run.stderr.splitlines() if l.startswith(f"{app}: error: ")]
        assert len(lines) == 1 and "enormous" in lines[0], run.stderr


def test_help_lists_every_flag_and_exits_0(proxies_built):
    expected = {"sem": "--diag-every", "ocean": "--maxiter", "amr": "--regrid-every",
                "dft": "--spacing"}
    for app, flag in expected.items():
        run = run_proxy("openmpi", app, 1, "--help")
        assert run.returncode == 0 and flag in run.stdout and "--size" in run.stdout


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_failed_verification_reports_fail_and_nonzero_exit(proxies_built, flavour):
    # Three CG iterations cannot reach the tolerance: ocean must say so.
    run = run_proxy(flavour, "ocean", 2, "--maxiter", "3")
    assert run.returncode != 0
    assert run.result["status"] == "FAIL"
    assert run.result["size"] == "custom"
