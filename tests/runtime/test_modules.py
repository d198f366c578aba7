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


def test_a_cycle_through_a_header_is_named(tmp_path):
    (tmp_path / "base.h").write_text('#include "table.h"\n')
    (tmp_path / "table.h").write_text("")
    (tmp_path / "alpha.c").write_text('#include "alpha.h"\n#include "beta.h"\n')
    (tmp_path / "alpha.h").write_text('#include "base.h"\n')
    (tmp_path / "beta.h").write_text('#include "gamma.h"\n')
    (tmp_path / "gamma.c").write_text('#include "alpha.h"\n#include "functions.h"\n')
    res = run(tmp_path)
    assert res.returncode == 1
    assert "cycle alpha -> beta -> gamma -> alpha" in res.stderr


def test_a_base_that_calls_a_module_is_refused(tmp_path):
    (tmp_path / "base.c").write_text('#include "base.h"\n#include "sites.h"\n')
    (tmp_path / "base.h").write_text('#include "table.h"\n')
    (tmp_path / "table.h").write_text("")
    (tmp_path / "sites.h").write_text('#include "base.h"\n')
    res = run(tmp_path)
    assert res.returncode == 1
    assert "base depends on sites" in res.stderr
