"""Read many logs in a child process with bounded memory and time, and
count how each read ended.  Used with mutants.py by the fuzz test and by
bench/fuzz_reader.py.

Outcomes: ``error`` (one clean LogFormatError line naming the file), ``read``
(a Profile that the terminal summary, which analyses it, also handles),
``traceback`` (any other exception), ``bad message`` (a LogFormatError that
is not one line naming the file), ``memory`` (MemoryError under the child's
address-space limit, or the child killed), ``hang`` (no answer within the
time limit: the child is killed and a new one takes the next log).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import resource
import select
import subprocess
import sys
import traceback
from collections import Counter
from pathlib import Path
from typing import Iterable

_START_SECONDS = 120  # importing pandas and matplotlib on a loaded machine
_TESTS = Path(__file__).resolve().parents[1]
OUTCOMES = ("error", "read", "traceback", "bad message", "memory", "hang")


def _child(memory_bytes: int) -> None:
    """Read paths from stdin, answer one JSON line each on stdout."""
    from scalewise.errors import LogFormatError
    from scalewise.logfile.reader import read_profile
    from scalewise.report.run.terminal import print_summary

    # The limit counts from what the imports already mapped, so it bounds what one read may add.
    vm = int(next(line.split()[1] for line in open("/proc/self/status") if line.startswith("VmSize:"))) * 1024
    resource.setrlimit(resource.RLIMIT_AS, (vm + memory_bytes, resource.RLIM_INFINITY))
    print("ready", flush=True)
    for line in sys.stdin:
        path = line.rstrip("\n")
        try:
            profile = read_profile(path)
            with contextlib.redirect_stdout(io.StringIO()):  # stdout carries the answers
                print_summary(profile)
            answer = {"outcome": "read"}
        except LogFormatError as exc:
            message = str(exc)
            clean = "\n" not in message and message.startswith(path + ": ")
            answer = {"outcome": "error" if clean else "bad message", "detail": message[:300]}
        except MemoryError:
            answer = {"outcome": "memory", "detail": "MemoryError", "where": traceback.format_exc().splitlines()[-3][:300]}
        except Exception as exc:  # noqa: BLE001 - counting every other failure is the point
            answer = {"outcome": "traceback", "detail": f"{type(exc).__name__}: {exc}"[:300],
                      "where": traceback.format_exc().splitlines()[-3][:300]}
        print(json.dumps(answer), flush=True)


class BoundedReader:
    """A child process that reads logs one at a time, restarted after a hang or crash."""

    def __init__(self, time_limit: float = 10.0, memory_bytes: int = 1 << 30):
        self.time_limit, self.memory_bytes = time_limit, memory_bytes
        self.proc: subprocess.Popen | None = None

    def _answer(self, timeout: float) -> str | None:
        """The child's next line; "" if it died, None if it gave none in time."""
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        return self.proc.stdout.readline() if ready else None

    def _start(self) -> None:
        # Arrow's default allocator reserves address space far beyond what it uses: plain malloc is measured fairly.
        # The child runs this module, found where its package is: the folder above support/.
        path = os.pathsep.join([str(_TESTS), *filter(None, [os.environ.get("PYTHONPATH")])])
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MPLBACKEND="Agg",
                   ARROW_DEFAULT_MEMORY_POOL="system", PYTHONPATH=path)
        self.proc = subprocess.Popen([sys.executable, "-m", "support.fuzzing", str(self.memory_bytes)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        if self._answer(_START_SECONDS) != "ready\n":
            self.close()
            raise RuntimeError("the reading child process did not start")

    def read(self, path: Path) -> dict:
        if self.proc is None:
            self._start()
        self.proc.stdin.write(f"{path}\n")
        self.proc.stdin.flush()
        line = self._answer(self.time_limit)
        if line:
            answer = json.loads(line)
            if answer["outcome"] == "memory":
                self.close()  # a child that ran out of memory may fail the next read too
            return answer
        self.close()
        if line is None:
            return {"outcome": "hang", "detail": f"no answer in {self.time_limit} s"}
        return {"outcome": "memory", "detail": "the child died"}

    def close(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc.stdin.close()
            self.proc.stdout.close()
            self.proc = None


def read_all(mutants: Iterable[tuple[str, bytes]], workdir: Path, time_limit: float = 10.0,
             memory_bytes: int = 1 << 30) -> tuple[Counter, list[tuple[str, dict]]]:
    """Outcome counts, and (mutation, answer) of every read that was not a clean error or a read;
    every profile read is also summarised."""
    counts: Counter = Counter({k: 0 for k in OUTCOMES})
    failures = []
    reader = BoundedReader(time_limit, memory_bytes)
    try:
        for i, (what, data) in enumerate(mutants):
            path = workdir / f"mutant-{i}.swlog"
            path.write_bytes(data)
            answer = reader.read(path)
            path.unlink()
            counts[answer["outcome"]] += 1
            if answer["outcome"] not in ("error", "read"):
                failures.append((what, answer))
    finally:
        reader.close()
    return counts, failures


if __name__ == "__main__":
    _child(int(sys.argv[1]))
