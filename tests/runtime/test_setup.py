"""Each rank's set-up in the log (format 1.3), from real Open MPI and MPICH
runs on this machine: cores, ranks per node, oversubscription, CPU time
against wall and the node's CPU counters; and what the summary and the report
say of it.  busy.c burns a known CPU time per rank (its ground truth)."""

from __future__ import annotations

import os

import pytest
from rich.console import Console

import scalewise
from scalewise.analysis.run.findings import analyse
from scalewise.analysis.run.setup import run_setup
from scalewise.report.run.html import render_html
from scalewise.report.run.terminal import print_summary

BUSY_CPU = 3 * 0.100  # busy.c: STEPS x BUSY_MS of CPU time per rank
JIFFY = 0.01  # /proc/stat counts in 1/100 s
CORES = len(os.sched_getaffinity(0))


def _run(mpi_job, program, flavour, nranks, threads=0):
    exe = program("busy.c", flavour)
    env = {"OMP_NUM_THREADS": str(threads)} if threads else {}
    job = mpi_job(f"setup-{flavour}-{nranks}-{threads}", flavour, nranks, [str(exe)], extra_env=env)
    assert job.returncode == 0, job.stderr
    return scalewise.load(job.logfile)


def _texts(profile):
    a = analyse(profile)
    console = Console(record=True, width=200)
    print_summary(profile, console=console, analysis=a)
    return a, console.export_text(), render_html(profile, a)


@pytest.mark.parametrize("flavour", ["openmpi", "mpich"])
@pytest.mark.parametrize("nranks", [2, 4])
def test_log_records_the_set_up_of_each_rank(mpi_job, program, flavour, nranks):
    p = _run(mpi_job, program, flavour, nranks)
    assert p.meta["format"] == "1.4"
    r = p.ranks
    assert list(r["cpus_online"]) == [os.cpu_count()] * nranks
    assert list(r["ranks_on_node"]) == [nranks] * nranks
    # The union of the ranks' affinity masks: every core the launch gave the job on this node.
    assert list(r["node_cpus"]) == [CORES] * nranks
    assert (r["cpus_allowed"] >= 1).all() and (r["cpus_allowed"] <= r["node_cpus"]).all()
    assert (r["omp_threads"] == 0).all()
    cpu = r["cpu_user"] + r["cpu_sys"]
    # Ground truth: each rank burnt BUSY_CPU in the window, and no more CPU than wall (one thread computes;
    # the libraries' own threads sleep) -- a little slack for the barrier's polling.
    assert (cpu >= BUSY_CPU).all(), cpu.tolist()
    assert (cpu <= r["setup_window"] * 1.02 + JIFFY).all(), (cpu.tolist(), r["setup_window"].tolist())
    assert (r["setup_window"] >= r["wall"]).all()  # the window runs on to the log's writing
    # The node's counters: all its CPUs for the window, busy at least with this job's ranks.
    window = float(r["setup_window"].mean())
    assert (abs(r["node_total"] - r["setup_window"] * r["cpus_online"]) <= 2 * JIFFY * r["cpus_online"]).all()
    assert float(r["node_busy"].max()) >= float(cpu.sum()) - 2 * JIFFY * os.cpu_count()
    assert (r["node_steal"] <= r["node_total"]).all()
    assert (r["load1_start"] >= 0).all() and (r["load1_end"] >= 0).all()
    assert (r["nivcsw"] >= 0).all() and window > 0


@pytest.mark.parametrize("flavour", ["openmpi", "mpich"])
def test_four_ranks_on_two_cores_say_oversubscribed_and_two_do_not(mpi_job, program, flavour):
    assert CORES == 2, "the test is about this 2-core machine"
    over = _run(mpi_job, program, flavour, 4)
    s = run_setup(over)
    assert [n.oversubscribed for n in s.nodes] == [True] and s.nodes[0].ranks == 4 and s.nodes[0].cores == 2
    a, text, html = _texts(over)
    assert "4 ranks on 2 cores (2 online): oversubscribed" in text
    assert "The run was oversubscribed (4 ranks on 2 cores of " in text
    assert "oversubscribed (4 ranks on 2 cores" in html and 'id="pop-caveat"' in html
    bound = next(f for f in a.findings if f.kind == "bound")
    assert "Caveat: the run was oversubscribed" in bound.text and bound.numbers["caveat"]
    assert "Caveat: the run was oversubscribed" in text  # under the POP table too

    fits = _run(mpi_job, program, flavour, 2)
    assert [n.oversubscribed for n in run_setup(fits).nodes] == [False]
    a, text, html = _texts(fits)
    assert "2 ranks on 2 cores (2 online): " in text and "oversubscribed" not in text.replace("not oversubscribed", "")
    assert "was oversubscribed" not in html


def test_threads_count_towards_oversubscription(mpi_job, program):
    p = _run(mpi_job, program, "mpich", 2, threads=2)
    assert list(p.ranks["omp_threads"]) == [2, 2]
    node = run_setup(p).nodes[0]
    assert node.threads == 2 and node.oversubscribed == (4 > CORES)
    _, text, _ = _texts(p)
    assert "2 ranks x 2 threads on 2 cores (2 online): oversubscribed" in text


@pytest.mark.parametrize("flavour", ["openmpi", "mpich"])
def test_an_aborted_rank_records_what_it_can_alone(mpi_job, program, flavour):
    """MPI_Abort cannot communicate: the aborting rank's own values are there, the node's share is unknown.
    The job is test_abnormal_end's (same key and arguments, run once)."""
    exe = program("abnormal_end.c", flavour)
    job = mpi_job(f"abort-{flavour}", flavour, 3, [exe, "abort", 2, 7, 4], timeout=60)
    assert job.returncode == 7
    r = scalewise.load(job.logfile).ranks.iloc[0]
    assert r["cpus_online"] == os.cpu_count() and r["cpus_allowed"] >= 1
    assert r["node_cpus"] != r["node_cpus"] and r["ranks_on_node"] != r["ranks_on_node"]  # NaN: not measured
    assert r["setup_window"] > 0 and r["cpu_user"] + r["cpu_sys"] <= r["setup_window"] * 1.02 + JIFFY
    assert r["node_total"] > 0
