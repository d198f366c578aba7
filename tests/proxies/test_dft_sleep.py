"""dft --compute sleep: the computing run's MPI calls (the same functions, counts and bytes on every
rank) with the arithmetic slept, the data every transpose moves checked on arrival, and the sleep the
operations' count at the given rate."""
from __future__ import annotations

import pytest

import scalewise
from proxy_harness import BUILD, run_proxy
from support.mpijob import FLAVOURS

TINY = dict(n=16, bands=4, iters=6)  # dft's tiny preset


def moved(n: int, bands: int, iters: int) -> int:
    """Elements every run's transposes move: 3 for the FFT checks, 2 per band and iteration, n^3 each."""
    return (3 + 2 * bands * iters) * n ** 3


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_sleeping_dft_verifies_every_element_it_moves(proxies_built, flavour):
    for nranks in (1, 3, 4):  # 3: uneven slabs
        run = run_proxy(flavour, "dft", nranks, "--size", "tiny", "--compute", "sleep")
        assert run.returncode == 0, run.stdout + run.stderr
        assert run.result["status"] == "PASS" and run.result["size"] == "tiny"
        assert run.note["compute"] == "sleep" and run.note["wrong_elements"] == "0"
        assert int(run.result["check"]) == moved(**TINY)
    other = run_proxy(flavour, "dft", 2, "--n", "32", "--bands", "2", "--iters", "3", "--compute", "sleep")
    assert other.result["status"] == "PASS" and int(other.result["check"]) == moved(32, 2, 3)


def test_the_sleep_is_the_operations_at_the_rate(proxies_built):
    slept = {rate: float(run_proxy("mpich", "dft", 2, "--compute", "sleep", "--compute-rate", rate).note["slept_s"])
             for rate in ("1", "4")}
    assert slept["1"] > 0
    assert slept["4"] == pytest.approx(slept["1"] / 4, rel=1e-4)


def _profile(flavour: str, nranks: int, tmp_path, *args: str):
    log = tmp_path / f"dft-{flavour}-{len(args)}.swlog"
    run = run_proxy(flavour, "dft", nranks, "--size", "tiny", *args,
                    env={"LD_PRELOAD": str(BUILD / flavour / "libscalewise.so"), "SCALEWISE_LOGFILE": str(log),
                         "SCALEWISE_QUIET": "1"})
    assert run.returncode == 0 and run.result["status"] == "PASS", run.stdout + run.stderr
    f = scalewise.load(log).functions
    return {(r.rank, r.function): (int(r.calls), int(r.bytes)) for r in f.itertuples()}


@pytest.mark.parametrize("flavour,nranks", [("openmpi", 4), ("mpich", 3)])
def test_sleeping_dft_makes_the_computing_runs_mpi_calls(proxies_built, tmp_path, flavour, nranks):
    real = _profile(flavour, nranks, tmp_path)
    slept = _profile(flavour, nranks, tmp_path, "--compute", "sleep")
    assert any(fn == "MPI_Alltoallv" for _, fn in real)
    assert slept == real
