"""The idle-sleep shim (runtime/compat/idle_sleep.c) with a real MPI: a rank that waits sleeps.

imbalance.c: rank 0 sleeps 2 x 250 ms and rank 1 2 x 500 ms before each of 2 barriers, so rank 0
waits about 500 ms in MPI_Barrier.  Both runs ask the MPI to yield when idle (Open MPI's
mpi_yield_when_idle, MPICH's SCALEWISE_YIELD_WHEN_IDLE through compat/mpich_ucx.c); the second also
sets SCALEWISE_IDLE_SLEEP_US, as a launch does with preload.with_idle_sleep.  A yield that finds no
other task returns at once and a yield to another task is an involuntary switch, so a polling rank
makes almost no voluntary context switches; a sleeping one makes one per sleep.
"""

from __future__ import annotations

import pytest

import scalewise
from scalewise.errors import ScalewiseError
from scalewise.launch.preload import IDLE_SLEEP, OPENMPI_YIELD, with_idle_sleep, with_mpich_ucx
from support import mpijob

SLEEP_US = "200"
WAITED = 0.5  # seconds rank 0 spends in the barriers (2 x (500 - 250) ms)
# A sleeping waiter costs a wake-up and a syscall every 200 us (2,500 in 0.5 s, a few us each); a
# poller on a free core spends the whole 0.5 s.  A fifth leaves room for a loaded machine's wake-ups.
CPU_WHILE_SLEEPING = 0.2 * WAITED
# At least one voluntary switch per 10 ms of waiting, where each sleep is 0.2 ms: a loaded machine
# wakes a sleeper late (a niced test's rank: about 2 ms a sleep under a load of 7 on 2 cores, 244
# and 663 switches; a polling rank made 2), it never skips its sleeps.
SLEEPS_AT_LEAST = WAITED / 0.010


def _env(flavour: str, sleep: bool) -> dict[str, str]:
    env = {"LD_PRELOAD": str(mpijob.library(flavour))}
    if flavour == "mpich":
        env, _ = with_mpich_ucx(env, oversubscribed=True)  # yields after idle polls
    else:
        env[OPENMPI_YIELD] = "1"
    if sleep:
        env = with_idle_sleep({**env, IDLE_SLEEP: SLEEP_US}, flavour)
    return env


def _rank0(mpi_job, program, flavour: str, sleep: bool):
    exe = program("imbalance.c", flavour)
    job = mpi_job(f"idle-sleep-{flavour}-{int(sleep)}", flavour, 2, [str(exe)], extra_env=_env(flavour, sleep))
    assert job.returncode == 0, job.stderr
    r = scalewise.load(job.logfile).ranks.set_index("rank").loc[0]
    return float(r["cpu_user"]) + float(r["cpu_sys"]), int(r["nvcsw"])


@pytest.mark.parametrize("flavour", ["openmpi", "mpich"])
def test_a_waiting_rank_sleeps_instead_of_polling(mpi_job, program, flavour):
    cpu, switches = _rank0(mpi_job, program, flavour, sleep=True)
    polled_cpu, polled_switches = _rank0(mpi_job, program, flavour, sleep=False)
    assert switches >= SLEEPS_AT_LEAST, (switches, polled_switches)
    assert polled_switches < switches / 10, (switches, polled_switches)
    assert cpu < CPU_WHILE_SLEEPING, (cpu, polled_cpu)


def test_the_shim_is_off_unless_asked_and_a_bad_sleep_is_an_error():
    env = {"LD_PRELOAD": "/x.so"}
    assert with_idle_sleep(env, "openmpi") is env
    on = with_idle_sleep({**env, IDLE_SLEEP: "20"}, "mpich")
    assert on["LD_PRELOAD"].endswith("/compat/libscalewise-idle-sleep.so:/x.so")
    assert on["SCALEWISE_YIELD_WHEN_IDLE"] == "64"
    assert with_idle_sleep({IDLE_SLEEP: "20"}, "openmpi")[OPENMPI_YIELD] == "1"
    with pytest.raises(ScalewiseError, match="not a sleep in microseconds"):
        with_idle_sleep({IDLE_SLEEP: "20us"}, "openmpi")
