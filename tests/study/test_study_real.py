"""A real small study: a ring exchange compiled here, run by the real campaign runner under both MPIs,
profiled, then read, analysed and rendered in headless Chromium."""

from __future__ import annotations

import json
import subprocess

from support.chromium import Chromium
from click.testing import CliRunner

import scalewise
from scalewise.analysis.study.findings import analyse_study
from scalewise.campaign.runner import run_study
from scalewise.campaign.study import load_study
from scalewise.cli.main import cli
from scalewise.report.study.registry import figures_for

STEPS, DOUBLES = 200, 8192
RING_C = r"""
#include <mpi.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double *out = calloc(%(n)d, sizeof *out), *in = calloc(%(n)d, sizeof *in), sum = 0, total = 0;
    MPI_Status st[2];
    int right = (rank + 1) %% size, left = (rank + size - 1) %% size;
    for (int s = 0; s < %(steps)d; s++) {
        for (int i = 0; i < %(n)d; i++) out[i] = out[i] * 0.5 + rank + s;
        MPI_Request req[2];
        MPI_Irecv(in, %(n)d, MPI_DOUBLE, left, 0, MPI_COMM_WORLD, &req[0]);
        MPI_Isend(out, %(n)d, MPI_DOUBLE, right, 0, MPI_COMM_WORLD, &req[1]);
        MPI_Waitall(2, req, st);
        sum += in[0];
        MPI_Allreduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    free(out); free(in);
    MPI_Finalize();
    return total < 0;
}
""" % {"n": DOUBLES, "steps": STEPS}

FIGURES = """JSON.stringify(Array.from(document.querySelectorAll('figure[data-figure]')).map(f => {
  const img = f.querySelector('img');
  return {id: f.dataset.figure, complete: img ? img.complete : false, natural: img ? img.naturalWidth : 0};
}))"""


def test_real_study_runs_reads_and_renders(tmp_path, chromium, artifacts):
    src = tmp_path / "ring.c"
    src.write_text(RING_C)
    for mpi in ("openmpi", "mpich"):
        (tmp_path / mpi).mkdir()
        subprocess.run([f"mpicc.{mpi}", "-O2", "-o", str(tmp_path / mpi / "ring"), str(src)], check=True)
    study_file = tmp_path / "ring.yaml"
    study_file.write_text(f"""name: ring
description: A ring exchange at 1 and 2 ranks under both MPIs
applications:
  ring:
    command: ["{tmp_path}/{{mpi}}/ring"]
axes:
  ranks: [1, 2]
  mpi: [openmpi, mpich]
repetitions: 2
timeout: 60
profile: true
""")
    summary = run_study(load_study(study_file), "local")
    assert summary.counts == {"ok": 8}

    study = scalewise.open_study(study_file)
    assert len(study.runs) == 8 and study.swept == ["mpi", "ranks"]
    assert study.runs["mpi_share"].between(0, 1).all() and study.runs["prof_ranks"].tolist() == study.runs["ranks"].tolist()
    allreduce = study.functions[study.functions["function"] == "MPI_Allreduce"].merge(study.runs, on="run_id")
    assert (allreduce["calls_x"] == STEPS * allreduce["ranks"]).all() and len(allreduce) == 8
    two = study.runs[study.runs["ranks"] == 2]
    assert (two["p2p_bytes"] == 2 * STEPS * DOUBLES * 8).all(), "each rank sends one message per step"

    page = artifacts / "real-ring.html"
    result = CliRunner().invoke(cli, ["study", "report", str(study_file), "-o", str(page), "--watts-per-node", "300"])
    assert result.exit_code == 0, result.output
    a = analyse_study(study, watts_per_node=300.0)
    with Chromium(chromium) as b:
        b.open(page)
        b.screenshot(artifacts / "real-ring.png")
        assert b.errors() == []
        figs = json.loads(b.evaluate(FIGURES))
        findings = json.loads(b.evaluate("JSON.stringify(Array.from(document.querySelectorAll('#findings li'))"
                                         ".map(li => li.dataset.runs))"))
    assert [f["id"] for f in figs] == [s.id for s in figures_for(a)]
    assert all(f["complete"] and f["natural"] > 300 for f in figs), figs
    assert findings and all(set(r.split(",")) <= set(study.runs["run_id"]) for r in findings)
