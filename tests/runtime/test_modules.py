"""The runtime's module check (runtime/tests/modules.py, run by `make -C runtime check`):
it passes on runtime/lib and names the cycle it finds in a folder that has one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHECK = ROOT / "runtime" / "tests" / "modules.py"


def run(lib: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(CHECK), str(lib)], capture_output=True, text=True, timeout=60)


def test_the_runtime_modules_form_no_cycle():
    res = run(ROOT / "runtime" / "lib")
    assert res.returncode == 0, res.stderr
    assert "no cycle" in res.stdout


def plant(folder: Path, files: dict[str, str]) -> subprocess.CompletedProcess:
    """The check run on a folder of the given files (name: text)."""
    for name, text in files.items():
        (folder / name).write_text(text)
    return run(folder)


def test_a_cycle_through_a_header_is_named(tmp_path):
    res = plant(tmp_path, {"base.h": '#include "table.h"\n', "table.h": "",
                           "alpha.c": '#include "alpha.h"\n#include "beta.h"\n', "alpha.h": '#include "base.h"\n',
                           "beta.h": '#include "gamma.h"\n', "gamma.c": '#include "alpha.h"\n#include "functions.h"\n'})
    assert res.returncode == 1
    assert "cycle alpha -> beta -> gamma -> alpha" in res.stderr


def test_a_base_that_calls_a_module_is_refused(tmp_path):
    res = plant(tmp_path, {"base.c": '#include "base.h"\n#include "sites.h"\n', "base.h": '#include "table.h"\n',
                           "table.h": "", "sites.h": '#include "base.h"\n'})
    assert res.returncode == 1
    assert "base depends on sites" in res.stderr
