"""Profiled runs: the world size comes from the profile log; a missing profiler is a recorded failure."""

from __future__ import annotations


from support.swtest import stored_runs

from scalewise.campaign.runner import run_study
from scalewise.campaign.study import load_study


def _study(write_study, swtest_dir, mpis="[openmpi, mpich]"):
    return load_study(write_study(f"""name: profiled
applications:
  swtest:
    command: ["{swtest_dir}/{{mpi}}/swtest"]
    fom: {{source: result_line}}
axes:
  ranks: [2]
  mpi: {mpis}
profile: true
timeout: 60
"""))


def test_profiled_runs_record_their_log(write_study, swtest_dir):
    loaded = _study(write_study, swtest_dir)
    summary = run_study(loaded, "local")
    runs = stored_runs(loaded)
    assert summary.counts == {"ok": 2}, [r["reason"] for r in runs]
    for run in runs:
        assert run["profile_path"] == f"runs/{run['run_id']}/profile.swlog"
        assert (loaded.output / run["profile_path"]).stat().st_size > 0
        assert run["world_size"] == 2


def test_missing_profiler_fails_the_run_with_a_reason(write_study, swtest_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("SCALEWISE_BUILD", str(tmp_path / "empty-build"))
    loaded = _study(write_study, swtest_dir, mpis="[openmpi]")
    assert run_study(loaded, "local").counts == {"failed": 1}
    reason = stored_runs(loaded)[0]["reason"]
    assert reason.startswith("profiler library for openmpi not built:") and "libscalewise.so is missing" in reason
