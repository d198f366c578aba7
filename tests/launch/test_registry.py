"""The built-in launchers and schedulers are found by name without the
package importing them all: each name's module registers that name, and an
unknown name still lists every built-in one."""

from __future__ import annotations

import subprocess
import sys

import pytest

from scalewise.errors import ScalewiseError
from scalewise.launch import get_launcher, get_scheduler
from scalewise.launch.base import BUILTIN_LAUNCHERS, BUILTIN_SCHEDULERS


def test_the_package_imports_no_launcher_or_scheduler_module():
    modules = sorted(set(BUILTIN_LAUNCHERS.values()) | set(BUILTIN_SCHEDULERS.values()))
    code = (f"import sys, scalewise.launch; print([m for m in {modules!r} if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("name", sorted(BUILTIN_LAUNCHERS))
def test_each_builtin_launcher_comes_from_its_module(name):
    launcher = get_launcher(name)
    assert launcher.name == name
    assert type(launcher).__module__ == BUILTIN_LAUNCHERS[name]


@pytest.mark.parametrize("name", sorted(BUILTIN_SCHEDULERS))
def test_each_builtin_scheduler_comes_from_its_module(name):
    options = {"launcher": "mpirun"} if name == "slurm" else {}
    scheduler = get_scheduler(name, **options)
    assert scheduler.name == name
    assert type(scheduler).__module__ == BUILTIN_SCHEDULERS[name]


def test_a_fresh_interpreter_finds_each_name_by_the_table_alone():
    # In this process other tests may have imported the modules already.
    code = ("from scalewise.launch import get_launcher, get_scheduler\n"
            "print(get_launcher('srun').name, get_launcher('mpiexec').name, get_scheduler('local').name,"
            " get_scheduler('slurm', launcher='mpirun').launcher_for('mpich').name)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["srun", "mpiexec", "local", "mpiexec"]


def test_an_unknown_name_lists_every_builtin_one():
    with pytest.raises(ScalewiseError, match=r"unknown launcher 'mpiexecc' \(known: mpiexec, mpirun, srun\)"):
        get_launcher("mpiexecc")
    with pytest.raises(ScalewiseError, match=r"unknown scheduler 'pbs' \(known: .*local.*slurm"):
        get_scheduler("pbs")
