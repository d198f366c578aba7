"""`scalewise tune` on the planted program (proxies/collplant): one MPI_Allreduce loop and nothing else.

At 32 KiB on two ranks Open MPI 4.1's fixed rules pick the ring (algorithm 4,
coll_tuned_decision_fixed.c: commutative, fewer than 4 ranks, 16 KiB <= size
< 64 KiB), which takes about twice as long per call here as basic_linear,
nonoverlapping or recursive doubling (1, 2, 3): tune must find one of those
and confirm it.  MPICH 4.0 at 1 MiB: its default (auto) is the good one and
the smp algorithm takes several times as long: tune must see smp lose and
must not claim a gain.  On one rank every algorithm is a copy, all choices
are equal: tune must not claim a gain under either library.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from proxy_harness import binary
from scalewise.campaign.study import load_study
from scalewise.cli.main import cli

LAUNCHERS = {"openmpi": ["mpirun.openmpi", "--oversubscribe"], "mpich": ["mpiexec.mpich"]}


def _profile(tmp: Path, mpi: str, ranks: int, count: int, iters: int) -> Path:
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    argv = [*LAUNCHERS[mpi], "-n", str(ranks), str(binary(mpi, "collplant")), "--count", str(count),
            "--iters", str(iters)]
    proc = subprocess.run([sys.executable, "-m", "scalewise.cli.main", "run", "--quiet", "-o", str(tmp), "--", *argv],
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    (log,) = tmp.glob("*.swlog")
    return log


def _tune(log: Path, out: Path, *extra: str) -> dict:
    res = CliRunner().invoke(cli, ["tune", str(log), "--fom", "result_line", "--budget", "5", "-o", str(out),
                                   "--json", *extra])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)  # the progress lines go to stderr


def _sets(report: dict, key: str = "sets") -> dict[str, dict]:
    return {row["params"]: row for row in report[key]}


def test_open_mpi_tune_finds_a_faster_allreduce_than_the_ring_it_picks(proxies_built, tmp_path):
    report = _tune(_profile(tmp_path, "openmpi", 2, 4096, 2000), tmp_path / "t", "--repetitions", "5")
    (target,) = report["targets"]
    assert target["name"] == "MPI_Allreduce" and target["comm_size"] == 2 and target["size"] == "32 KiB-64 KiB"
    screening = _sets(report)
    assert set(screening) == {"default"} | {f"allreduce-{n}-{a}" for n, a in [
        (1, "basic_linear"), (2, "nonoverlapping"), (3, "recursive_doubling"), (4, "ring"), (5, "segmented_ring"),
        (6, "rabenseifner")]}
    assert all(row["n"] == 5 for row in screening.values())
    assert screening["allreduce-4-ring"]["verdict"] != "better"  # the default's own choice cannot beat it
    good = {"allreduce-1-basic_linear", "allreduce-2-nonoverlapping", "allreduce-3-recursive_doubling"}
    best = report["best"]
    assert best is not None and best["params"] in good, report["confirmed"]
    assert best["verdict"] == "better" and best["gain_low_pct"] > 0
    number = best["params"].split("-")[1]
    text = Path(report["settings_file"]).read_text()
    assert f"coll_tuned_allreduce_algorithm = {number}\n" in text and "coll_tuned_use_dynamic_rules = 1\n" in text
    # the generated studies are ordinary study files: the report draws B3 from them
    res = CliRunner().invoke(cli, ["study", "report", report["confirm_study"], "-o", str(tmp_path / "r.html")])
    assert res.exit_code == 0, res.output
    html = (tmp_path / "r.html").read_text()
    figure = html[html.index('data-figure="b3-tuning"'):]
    assert figure[:figure.index("</figure>")].count("data:image/svg") == 1
    assert f'data-params="{best["params"]}" data-verdict="better"' in html


def test_mpich_tune_sees_smp_lose_and_keeps_the_default(proxies_built, tmp_path):
    report = _tune(_profile(tmp_path, "mpich", 2, 131072, 60), tmp_path / "t")
    screening = _sets(report)
    assert set(screening) == {"default", "allreduce-nb", "allreduce-smp", "allreduce-recursive_doubling",
                              "allreduce-reduce_scatter_allgather"}
    # smp is several times slower here, but MPICH polls without yielding, so on a loaded machine a default
    # run can lose a whole time slice now and then: its median must be slower, its verdict never "better"
    assert screening["allreduce-smp"]["gain_pct"] < 0 and screening["allreduce-smp"]["verdict"] != "better"
    assert report["best"] is None
    assert "nothing to set" in Path(report["settings_file"]).read_text()


@pytest.mark.parametrize("mpi", ["openmpi", "mpich"])
def test_no_gain_is_claimed_when_every_choice_is_equal(proxies_built, tmp_path, mpi):
    report = _tune(_profile(tmp_path, mpi, 1, 4096, 200), tmp_path / "t")
    assert report["targets"][0]["comm_size"] == 1
    assert report["best"] is None, report["confirmed"]
    assert "nothing to set" in Path(report["settings_file"]).read_text()


def test_tune_from_a_study_takes_its_largest_profiled_run(proxies_built, tmp_path):
    study = tmp_path / "s.yaml"
    study.write_text(f"""
name: s
workdir: {binary("openmpi", "collplant").parent}
applications:
  plant:
    command: ["./collplant", --count, "{{count}}", --iters, "50"]
    fom: {{source: result_line}}
axes: {{ranks: [1, 2], custom: {{count: [4096]}}}}
profile: true
""")
    assert CliRunner().invoke(cli, ["study", "run", "--quiet", str(study)]).exit_code == 0
    res = CliRunner().invoke(cli, ["tune", str(study), "--plan-only", "-o", str(tmp_path / "t")])
    assert res.exit_code == 0, res.output
    assert "target MPI_Allreduce: " in res.output and "2 ranks" in res.output
    generated = load_study(tmp_path / "t" / "tune.yaml").model
    assert generated.axes.ranks == [2] and generated.axes.custom == {"count": [4096]}
    assert generated.applications["app"].command == ["./collplant", "--count", "{count}", "--iters", "50"]
    assert generated.applications["app"].fom.source == "result_line"
    assert generated.workdir == str(binary("openmpi", "collplant").parent)
