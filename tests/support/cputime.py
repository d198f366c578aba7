"""Per test, its wall time and its CPU time, written one line each to $CPUTIME_OUT (tab-separated: test,
wall s, CPU s of the test process, CPU s of the children it waited for, xdist worker). Not loaded unless
asked: ``pytest -p support.cputime``. On a loaded machine the wall says how long a test was kept off the
cores; the CPU says what it costs, and a test whose wall far exceeds its CPU on a quiet one is waiting."""

from __future__ import annotations

import os
import resource
import time

import pytest


def _cpu() -> tuple[float, float]:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    wall, (own, children) = time.monotonic(), _cpu()
    yield
    wall, (own2, children2) = time.monotonic() - wall, _cpu()
    with open(os.environ.get("CPUTIME_OUT", "cputime.tsv"), "a") as out:
        out.write(f"{item.nodeid}\t{wall:.2f}\t{own2 - own:.2f}\t{children2 - children:.2f}\t"
                  f"{os.environ.get('PYTEST_XDIST_WORKER', 'main')}\n")
