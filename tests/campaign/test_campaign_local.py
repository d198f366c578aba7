"""Real local campaigns under Open MPI and MPICH, recorded in SQLite."""

from __future__ import annotations

import os

from support.swtest import stored_rows

from scalewise.campaign.runner import run_study
from scalewise.campaign.study import load_study


def _study(swtest_dir, body: str, name: str = "local") -> str:
    return f"""name: {name}
applications:
  swtest:
    command: ["{swtest_dir}/{{mpi}}/swtest", --size, "{{size}}"]
    fom: {{source: result_line}}
{body}
timeout: 60
"""


def test_sweep_over_both_mpis_and_transports(swtest_dir, write_study):
    # 3 ranks: MPICH 4.0 over UCX/TCP hung in its own MPI_Finalize in most such
    # runs before scalewise preloaded its work-around (runtime/compat/mpich_ucx.c).
    body = ("axes:\n  ranks: [1, 3]\n  mpi: [openmpi, mpich]\n  transport: [shm, tcp]\n  custom: {size: [tiny]}\n"
            "exclude:\n  - {mpi: openmpi, ranks: 3}\n")
    loaded = load_study(write_study(_study(swtest_dir, body)))
    summary = run_study(loaded, "local")
    assert summary.counts == {"ok": 6}
    runs = stored_rows(loaded, "SELECT * FROM runs ORDER BY position")
    assert len(runs) == 6
    for run in runs:
        assert run["status"] == "ok" and run["exit_code"] == 0 and run["reason"] is None
        assert run["world_size"] == run["ranks"]
        assert run["fom"] == 100.0 * run["ranks"] and run["fom_unit"] == "widgets/s" and run["higher_is_better"] == 1
        assert run["wall"] > 0 and run["started_at"] < run["ended_at"] and run["hosts"]
        assert (loaded.output / run["stdout_path"]).read_text().count("SCALEWISE_RESULT") == 1
    launcher = {r["mpi"]: r["command"] for r in runs}
    assert '"mpirun.openmpi"' in launcher["openmpi"] and '"mpiexec.mpich"' in launcher["mpich"]
    tcp_mpich = next(r["run_id"] for r in runs if r["mpi"] == "mpich" and r["transport"] == "tcp" and r["ranks"] == 3)
    env = {(e["kind"], e["name"]): e["value"] for e in stored_rows(loaded, "SELECT * FROM run_env WHERE run_id=?", tcp_mpich)}
    assert env == {("cvar", "MPIR_CVAR_NOLOCAL"): "1", ("env", "UCX_TLS"): "tcp,self"}
    settings = {s["name"]: s["value"] for s in stored_rows(loaded, "SELECT * FROM run_settings WHERE run_id=?", tcp_mpich)}
    assert settings["size"] == "tiny" and settings["mpi"] == "mpich" and settings["ranks"] == 3
    prov = {p["key"]: p["value"] for p in stored_rows(loaded, "SELECT * FROM run_provenance WHERE run_id=?", tcp_mpich)}
    assert prov["launcher.env.SCALEWISE_UCX_CLOSE_GRACE"] == "0.5"
    # 3 ranks on this machine's cores: yielding is on (and recorded) exactly when oversubscribed.
    assert ("launcher.env.SCALEWISE_YIELD_WHEN_IDLE" in prov) == (3 > os.cpu_count())
    assert len(prov["binary_sha256"]) == 64 and "4.0" in prov["mpi_version"]
    assert prov["env.MPIR_CVAR_NOLOCAL"] == "1" and prov["env.UCX_TLS"] == "tcp,self"
    session = stored_rows(loaded, "SELECT * FROM sessions")[0]
    assert session["scheduler"] == "local" and session["cpu_count"] >= 1 and len(session["study_sha256"]) == 64
    keys = {p["key"] for p in stored_rows(loaded, "SELECT * FROM session_provenance")}
    assert {"mpi.openmpi.version", "mpi.mpich.version", "mpi.openmpi.compiler"} <= keys

    again = run_study(loaded, "local")  # resume: everything is done already
    assert again.skipped == 6 and again.ran == 0
    assert {r["attempts"] for r in stored_rows(loaded, "SELECT attempts FROM runs")} == {1}


def test_failures_are_recorded_and_the_campaign_goes_on(swtest_dir, write_study):
    exe = f"{swtest_dir}/{{mpi}}/swtest"
    text = f"""name: failing
applications:
  good:
    command: ["{exe}"]
    fom: {{source: result_line}}
  exits:
    command: ["{exe}", --exit, "5"]
  reports_fail:
    command: ["{exe}", --fail]
    fom: {{source: result_line}}
  slow:
    command: ["{exe}", --sleep, "60"]
  no_fom:
    command: ["{exe}"]
    fom: {{source: regex, pattern: "gflops=([0-9.]+)"}}
  missing:
    command: ["{swtest_dir}/nowhere/app"]
axes:
  ranks: [2]
  mpi: [openmpi]
timeout: 6
"""
    loaded = load_study(write_study(text))
    summary = run_study(loaded, "local")
    assert summary.counts == {"ok": 1, "failed": 4, "timeout": 1}
    got = {r["app"]: r for r in stored_rows(loaded, "SELECT * FROM runs")}
    assert got["good"]["status"] == "ok"
    assert got["exits"]["status"] == "failed" and got["exits"]["reason"] == "exited with code 5"
    assert got["reports_fail"]["reason"] == "application reported status=FAIL (check=2, exit code 3)"
    assert got["slow"]["status"] == "timeout" and got["slow"]["reason"] == "timed out after 6 s"
    assert got["slow"]["wall"] < 15
    assert got["no_fom"]["reason"] == "figure of merit not found: no number matched /gflops=([0-9.]+)/"
    assert got["missing"]["reason"].endswith("nowhere/app does not exist or is not executable")

    retried = run_study(loaded, "local", retry_failed=True)
    assert retried.skipped == 1 and retried.ran == 5
    attempts = {r["app"]: r["attempts"] for r in stored_rows(loaded, "SELECT app, attempts FROM runs")}
    assert attempts == {"good": 1, "exits": 2, "reports_fail": 2, "slow": 2, "no_fom": 2, "missing": 2}


def test_regex_fom_threads_and_variants(swtest_dir, write_study):
    text = f"""name: regex
applications:
  swtest:
    command: ["{swtest_dir}/{{mpi}}/swtest", --size, "{{variant}}"]
    env: {{SWTEST_ECHO_ENV: "OMP_NUM_THREADS,FLAVOUR"}}
    variants:
      plain: {{flags: "-O0", env: {{FLAVOUR: plain}}}}
      fast: {{flags: "-O3", env: {{FLAVOUR: fast}}}}
    fom: {{source: regex, pattern: 'elapsed: ([0-9.]+) seconds', unit: s}}
axes:
  ranks: [1]
  threads: [2]
  mpi: [mpich]
"""
    loaded = load_study(write_study(text))
    assert run_study(loaded, "local").counts == {"ok": 2}
    for run in stored_rows(loaded, "SELECT * FROM runs"):
        out = (loaded.output / run["stdout_path"]).read_text()
        assert "ENV[OMP_NUM_THREADS]=2" in out and f"ENV[FLAVOUR]={run['variant']}" in out
        assert run["fom"] is not None and run["fom"] >= 0 and run["fom_unit"] == "s"
        prov = {p["key"]: p["value"] for p in stored_rows(loaded, "SELECT * FROM run_provenance WHERE run_id=?", run["run_id"])}
        assert prov["flags"] == {"plain": "-O0", "fast": "-O3"}[run["variant"]]


def test_values_reach_the_program_literally(swtest_dir, write_study, tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("still here")
    nasty = f"x; rm -rf {victim} $(touch {tmp_path}/pwned) `id`"
    text = f"""name: literal
applications:
  swtest:
    command: ["{swtest_dir}/{{mpi}}/swtest", "{{label}}"]
    env: {{SWTEST_ECHO_ENV: "NASTY"}}
    fom: {{source: result_line}}
axes:
  ranks: [2]
  mpi: [openmpi, mpich]
  custom: {{label: ["{nasty}"]}}
  params: [evil]
parameter_sets:
  evil:
    env: {{NASTY: "{nasty}"}}
"""
    loaded = load_study(write_study(text))
    assert run_study(loaded, "local").counts == {"ok": 2}
    for run in stored_rows(loaded, "SELECT * FROM runs"):
        out = (loaded.output / run["stdout_path"]).read_text()
        assert f"ARGV[1]={nasty}\n" in out
        assert f"ENV[NASTY]={nasty}\n" in out
    assert victim.read_text() == "still here" and not (tmp_path / "pwned").exists()


def test_missing_probe_fails_the_run_with_a_reason(swtest_dir, write_study, tmp_path, monkeypatch):
    empty = tmp_path / "empty-build"
    monkeypatch.setenv("SCALEWISE_BUILD", str(empty))
    loaded = load_study(write_study(_study(swtest_dir, "axes:\n  ranks: [1]\n  mpi: [openmpi]\n  custom: {size: [tiny]}\n")))
    assert run_study(loaded, "local").counts == {"failed": 1}
    (run,) = stored_rows(loaded, "SELECT reason FROM runs")
    assert run["reason"] == (f"world-size probe for openmpi not built: {empty}/openmpi/libscalewise-probe.so "
                             "is missing (run `make runtime`)")


def test_failure_reasons_say_why(swtest_dir, write_study):
    """The reason names the cause: the aborting rank and code, the signal, the MPI's own error line."""
    exe = f"{swtest_dir}/{{mpi}}/swtest"
    text = f"""name: reasons
applications:
  aborts:
    command: ["{exe}", --abort, "7"]
  crashes:
    command: ["{exe}", --segv]
  plain:
    command: ["{exe}"]
parameter_sets:
  ring:
    cvars: {{ALLREDUCE_INTRA_ALGORITHM: ring}}
axes:
  ranks: [2]
  mpi: [mpich]
  params: [default, ring]
exclude:
  - {{app: [aborts, crashes], params: ring}}
  - {{app: plain, params: default}}
profile: true
timeout: 20
"""
    loaded = load_study(write_study(text))
    run_study(loaded, "local")
    got = {r["app"]: r for r in stored_rows(loaded, "SELECT * FROM runs")}
    assert got["aborts"]["reason"] == "rank 1 called MPI_Abort with error code 7 (exited with code 7)", got["aborts"]["reason"]
    assert "SIGSEGV" in got["crashes"]["reason"], got["crashes"]["reason"]
    bad = got["plain"]["reason"]
    assert bad.startswith("exited with code") and "Invalid MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM value (ring)" in bad
    assert {r["oversubscribed"] for r in got.values()} == {0 if os.cpu_count() >= 2 else 1}
    assert {r["placed_per_node"] for r in got.values()} == {2}
    assert {r["cores_per_node"] for r in got.values()} == {os.cpu_count()}
