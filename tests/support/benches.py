"""The bench scripts' own functions, for the tests of their options: bench/ is not a package, and a
script imports its neighbours (common, whatif_cluster) by name, so bench/ is on the path while it loads."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[2] / "bench"


def bench_module(name: str) -> ModuleType:
    """bench/<name>.py, imported."""
    sys.path.insert(0, str(BENCH))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(BENCH))
