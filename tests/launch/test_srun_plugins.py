"""srun's PMI plugin against what this Slurm has (`srun --mpi=list`, real srun on a real slurm.conf whose
PluginDir lacks the pmix plugin, as a site built without PMIx) and against what each release line speaks:
one line naming the cause before anything is submitted."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from scalewise.errors import ScalewiseError
from scalewise.launch.releases import LINES
from scalewise.launch.slurm import SlurmScheduler
from scalewise.launch.srun import SRUN_PMI, check_srun_line, line_plugin, srun_plugins

SW = str(Path(os.sys.executable).with_name("scalewise"))
PLUGINS = Path("/usr/lib/x86_64-linux-gnu/slurm-wlm")


@pytest.fixture
def no_pmix(tmp_path, monkeypatch):
    """SLURM_CONF of a Slurm whose plugins are Debian's, less PMIx (no daemon needed: srun lists its own)."""
    if not (PLUGINS / "mpi_pmix.so").exists():
        pytest.skip("Debian's Slurm plugins are not installed (scripts/setup-system.sh slurm)")
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    for lib in PLUGINS.glob("*.so"):
        if not lib.name.startswith("mpi_pmix"):
            (plugins / lib.name).symlink_to(lib)
    conf = tmp_path / "slurm.conf"
    conf.write_text(f"ClusterName=nopmix\nSlurmctldHost=localhost\nPluginDir={plugins}\n")
    monkeypatch.setenv("SLURM_CONF", str(conf))
    return conf


def test_every_release_line_says_which_plugins_start_it():
    assert set(SRUN_PMI) == set(LINES)


def test_the_plugins_come_from_srun(no_pmix, tmp_path):
    assert "pmix" not in srun_plugins() and "pmi2" in srun_plugins()
    full = tmp_path / "full.conf"
    full.write_text("ClusterName=full\nSlurmctldHost=localhost\n")
    assert {"pmix", "pmix_v4", "pmi2"} <= set(srun_plugins({"SLURM_CONF": str(full)}))


def test_a_missing_plugin_or_one_the_library_does_not_speak_is_one_line(no_pmix):
    with pytest.raises(ScalewiseError) as e:
        check_srun_line("openmpi-5.0.11", "pmix")
    assert str(e.value) == ("srun --mpi=pmix: this Slurm has no pmix plugin (srun --mpi=list: "
                            f"{', '.join(srun_plugins())}); start openmpi-5.0.11 with its own launcher inside an "
                            "allocation (sbatch or salloc, then mpirun/mpiexec)")
    with pytest.raises(ScalewiseError, match=r"srun --mpi=pmix: this Slurm has no pmix plugin .*; use --mpi=pmi2$"):
        check_srun_line("intelmpi-2021.19", "pmix")
    with pytest.raises(ScalewiseError, match=r"^srun --mpi=pmi2 cannot start openmpi-4.1.4 ranks as one world"):
        check_srun_line("openmpi-4.1.4", "pmi2")
    check_srun_line("mpich-5.0.2", "pmi2")
    check_srun_line("intelmpi-2021.19", "pmi2")
    check_srun_line("openmpi-5.0.11", None)  # Slurm's MpiDefault decides: not checked
    # A study's Slurm checks its plan before submitting: Open MPI's default plugin is missing here.
    with pytest.raises(ScalewiseError, match=r"^srun --mpi=pmix: this Slurm has no pmix plugin"):
        SlurmScheduler(launcher="srun").check([SimpleNamespace(mpi="mpich"), SimpleNamespace(mpi="openmpi")])
    SlurmScheduler(launcher="srun").check([SimpleNamespace(mpi="mpich")])
    SlurmScheduler(launcher="mpirun").check([SimpleNamespace(mpi="openmpi")])  # no srun between


def test_the_plugin_a_line_asks_for():
    assert line_plugin(["srun", "--mpi=pmix_v4", "-n", "2", "a"]) == "pmix_v4"
    assert line_plugin(["srun", "--mpi", "pmi2", "a"], {}) == "pmi2"
    assert line_plugin(["srun", "-n", "2", "a"], {"SLURM_MPI_TYPE": "pmix"}) == "pmix"
    assert line_plugin(["srun", "a"], {}) is None


def test_scalewise_run_refuses_before_starting_anything(no_pmix, swtest_dir, tmp_path):
    """Debian's Open MPI under srun on a Slurm without PMIx: the error, exit 2, no srun started."""
    done = subprocess.run([SW, "run", "-o", str(tmp_path / "out"), "--", "srun", "--mpi=pmix", "-n", "2",
                           str(swtest_dir / "openmpi" / "swtest")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "scalewise: error: srun --mpi=pmix: this Slurm has no pmix plugin (srun --mpi=list: "
        f"{', '.join(srun_plugins())}); start openmpi-4.1.4 with its own launcher inside an allocation "
        "(sbatch or salloc, then mpirun/mpiexec)"]
    assert not (tmp_path / "out").exists()
