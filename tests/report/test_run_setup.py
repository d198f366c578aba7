"""The run set-up rules (docs/report.md, "Run set-up"): oversubscribed and
contended, decided per node from the rank setup columns, and the caveat every
bound-ness, imbalance and POP reading then carries in the findings, the
terminal summary, the page and the JSON."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from rich.console import Console

import scalewise
from scalewise.analysis.run.findings import analyse
from scalewise.analysis.run.setup import CONTENDED_EXCESS_OF_JOB_CORES, run_setup
from scalewise.report.run.html import render_html
from scalewise.report.run.terminal import print_summary

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "golden-1.2-mpich-phases.swlog"  # 2 ranks, one host


def with_setup(ranks_on_node=2, cores=2, threads=0, cpu=0.98, others=0.0, steal=0.0, window=1.0):
    """The golden run as if its 2 ranks had run with this set-up: each rank used ``cpu`` seconds of
    CPU in a ``window`` of 1 s, other processes ``others`` cores, the node's steal ``steal`` s."""
    p = scalewise.load(GOLDEN)
    r = p.ranks.copy()
    n = len(r)
    total = window * cores
    values = dict(cpus_online=cores, cpus_allowed=cores, node_cpus=cores, ranks_on_node=ranks_on_node,
                  omp_threads=threads, setup_window=window, cpu_user=cpu, cpu_sys=0.0, nivcsw=10.0, nvcsw=1.0,
                  load1_start=1.0, load1_end=1.5, node_busy=min(total, n * cpu + others * window + steal),
                  node_total=total, node_steal=steal)
    for k, v in values.items():
        r[k] = float(v)
    return dataclasses.replace(p, ranks=r)


def test_a_run_alone_on_its_cores_is_neither():
    s = run_setup(with_setup(others=0.05))
    assert [(n.oversubscribed, n.contended) for n in s.nodes] == [(False, False)] and s.caveat() is None
    a = analyse(with_setup(others=0.05))
    assert not any("Caveat" in f.text for f in a.findings) and not any("busy" in n.text for n in a.notes)


def test_others_above_a_tenth_of_the_jobs_cores_make_it_contended():
    limit = CONTENDED_EXCESS_OF_JOB_CORES * 2  # 2 ranks on 2 cores leave none idle
    assert not run_setup(with_setup(cpu=0.85, others=limit - 0.02)).nodes[0].contended
    node = run_setup(with_setup(cpu=0.85, others=limit + 0.02)).nodes[0]
    assert node.contended and node.others_cores == pytest.approx(limit + 0.02)
    assert node.cpu_share == pytest.approx(0.85)


def test_idle_cores_absorb_other_processes():
    # 2 ranks on 4 cores: others may use 2 idle cores (+ a tenth of the job's 2) before the job loses any.
    assert not run_setup(with_setup(cores=4, cpu=0.8, others=2.1)).nodes[0].contended
    assert run_setup(with_setup(cores=4, cpu=0.8, others=2.3)).nodes[0].contended


def test_steal_makes_it_contended():
    assert run_setup(with_setup(steal=0.12)).nodes[0].contended  # 6% of 2 CPU-seconds
    assert not run_setup(with_setup(steal=0.08)).nodes[0].contended  # 4%


def test_more_ranks_or_threads_than_cores_is_oversubscribed_not_contended():
    node = run_setup(with_setup(ranks_on_node=4, others=1.0)).nodes[0]
    assert node.oversubscribed and not node.contended
    node = run_setup(with_setup(threads=2)).nodes[0]
    assert node.oversubscribed and node.demand == 4


@pytest.mark.parametrize("setup, words", [
    (dict(ranks_on_node=4), "the run was oversubscribed (4 ranks on 2 cores of "),
    (dict(cpu=0.5, others=1.0), "the machine was busy ("),
])
def test_the_caveat_reaches_every_reading(setup, words):
    p = with_setup(**setup)
    a = analyse(p)
    bound = next(f for f in a.findings if f.kind == "bound")
    imbalance = next(f for f in a.findings if f.kind == "imbalance")
    assert f"Caveat: {words}" in bound.text and f"Caveat: {words}" in imbalance.text
    assert words in bound.numbers["caveat"]
    assert any(words.capitalize() in n.text for n in a.notes)
    console = Console(record=True, width=200)
    print_summary(p, console=console, analysis=a)
    text = console.export_text()
    assert text.count(f"Caveat: {words}") >= 2  # the findings and the POP table
    html = render_html(p, a)
    assert 'id="pop-caveat"' in html and words in html
    out = json.loads(json.dumps(a.to_json_dict()))
    assert out["setup"]["caveat"].startswith(words) and out["setup"]["nodes"][0]["host"] == p.ranks["host"][0]


def test_older_logs_have_no_set_up_and_no_caveat():
    p = scalewise.load(GOLDEN)
    a = analyse(p)
    assert a.setup is None and a.to_json_dict()["setup"] is None
    console = Console(record=True, width=200)
    print_summary(p, console=console, analysis=a)
    assert "set-up" not in console.export_text() and "Caveat" not in console.export_text()


def test_the_pop_metrics_carry_the_caveat():
    over = analyse(with_setup(ranks_on_node=4)).pop
    assert over.caveat.startswith("the run was oversubscribed") and over.to_json_dict()["caveat"] == over.caveat
    assert analyse(with_setup(others=0.05)).pop.caveat is None
