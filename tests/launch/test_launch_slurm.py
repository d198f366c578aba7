"""Real Slurm on localhost (emulated nodes): sweeps go through sbatch and land in the database."""

from __future__ import annotations

from support.swtest import stored_runs

from scalewise.campaign.runner import run_study
from scalewise.campaign.study import load_study

# Emulated nodes share one host: Open MPI must use TCP over loopback between "nodes".
TRANSPORT = """transports:
  tcp_lo:
    mca: {pml: ob1, btl: "self,tcp", btl_tcp_if_include: lo}
"""


def _study(tmp_path, swtest_dir, axes: str, extra: str = "", command_extra: str = "") -> object:
    path = tmp_path / "slurm.yaml"
    path.write_text(f"""name: slurm
applications:
  swtest:
    command: ["{swtest_dir}/{{mpi}}/swtest"{command_extra}]
    fom: {{source: result_line}}
axes:
{axes}
timeout: 60
{TRANSPORT}{extra}""")
    return load_study(path)


def test_node_sweep_through_sbatch_and_srun(slurm_env, swtest_dir, tmp_path):
    axes = "  nodes: [1, 2, 4]\n  ranks_per_node: [1]\n  mpi: [openmpi, mpich]\n  transport: [tcp_lo]"
    loaded = _study(tmp_path, swtest_dir, axes)
    summary = run_study(loaded, "slurm")
    assert summary.counts == {"ok": 6}
    runs = stored_runs(loaded)
    assert sorted((r["nodes"], r["mpi"]) for r in runs) == sorted(
        (n, m) for n in (1, 2, 4) for m in ("openmpi", "mpich"))
    for run in runs:
        assert run["status"] == "ok" and run["world_size"] == run["ranks"] == run["nodes"]
        assert run["scheduler"] == "slurm" and run["job_id"].isdigit()
        assert len(run["hosts"].split(",")) == run["nodes"] and run["hosts"].startswith("n")
        assert run["command"].startswith('["srun", "--mpi=' + ("pmix" if run["mpi"] == "openmpi" else "pmi2"))
        assert run["fom"] == 100.0 * run["ranks"]


def test_wrong_pmi_plugin_is_caught_by_the_world_size_check(slurm_env, swtest_dir, tmp_path):
    # MPICH under srun --mpi=pmix starts N single-rank worlds and exits 0.
    loaded = _study(tmp_path, swtest_dir, "  ranks: [2]\n  mpi: [mpich]", extra="slurm:\n  pmi: {mpich: pmix}\n")
    summary = run_study(loaded, "slurm")
    assert summary.counts == {"failed": 1}
    run = stored_runs(loaded)[0]
    assert run["exit_code"] == 0
    assert run["reason"] == ("world size mismatch: asked for 2 ranks, the launch started 2 separate 1-rank worlds "
                             "(wrong PMI plugin?)")


def test_mpirun_inside_the_allocation_and_timeout(slurm_env, swtest_dir, tmp_path):
    axes = "  nodes: [2]\n  ranks_per_node: [1]\n  mpi: [openmpi, mpich]\n  transport: [tcp_lo]\n  custom: {sleep: [0, 30]}"
    loaded = _study(tmp_path, swtest_dir, axes, extra="slurm:\n  launcher: mpirun\n",
                    command_extra=', --sleep, "{sleep}"')
    loaded.model.timeout = 3
    summary = run_study(loaded, "slurm")
    assert summary.counts == {"ok": 2, "timeout": 2}
    for run in stored_runs(loaded):
        sleeping = run["run_id"] and '"30"' in run["command"]
        assert run["status"] == ("timeout" if sleeping else "ok"), run
        if not sleeping:
            assert run["command"].startswith('["mpirun.openmpi"' if run["mpi"] == "openmpi" else '["mpiexec.mpich"')
            assert run["world_size"] == 2
