"""The meta's plain check (logfile/meta.py) answers only for what the schema
(meta_model.py, pydantic) accepts, with the same values; everything else goes
to the schema, which names the problem."""

from __future__ import annotations

import json
import random

import pytest

from scalewise.logfile import meta as M
from scalewise.logfile.meta_model import validate_meta

GOOD = {"format": "1.4", "scalewise_version": "0.1.0", "command": ["./app", "-n", "3"], "cwd": "/tmp/x",
        "mpi_library": "Open MPI v4.1.4", "mpi_version": "3.1", "nranks": 2, "thread_level": "MPI_THREAD_SINGLE",
        "start_time": 1795438940.840531, "end_time": 1795438940.864326, "ns_per_tick": 0.40893931, "timer": "tsc",
        "histogram": "log2", "extra": {"deep": [1, 2.5, None]}}
VARIANTS = [
    ("format", "1.4\n"), ("format", "1.12345"), ("format", "١.٤"), ("format", 1.4), ("nranks", 0), ("nranks", 2**31),
    ("nranks", True), ("nranks", 2.0), ("nranks", None), ("start_time", 1), ("start_time", -1.0),
    ("start_time", 2.6e11), ("ns_per_tick", 0.0), ("ns_per_tick", 1e10), ("command", "./app"),
    ("command", ["a", 1]), ("command", ["x" * 65537]), ("mpi_version", "x" * 65), ("cwd", "é" * 16384),
    ("cwd", "é" * 16385), ("aborted_by_rank", -1), ("abort_errorcode", -(2**31)), ("abort_errorcode", 2**31),
    ("mpit_mtl_unloaded", 1), ("mpit_mtl_unloaded", True), ("slurm_job_id", "123"), ("timer", "\ud800"),
]
RAW = [b"[]", b"{", b'{"nranks": 2, "nranks": 3}', b'{"start_time": NaN}', b'{"extra": 1e400}', b'{"extra": ' +
       b"9" * 30 + b"}", b"\xef\xbb\xbf{}", b'{"cwd": "\xff"}', '{"cwd": "x"}'.encode("utf-16"), b"{} x",
       b'{"format": "1.4"}', b"{}", b'[' * 5000 + b']' * 5000]


def _outcome(parse, raw: bytes):
    try:
        return "ok", parse(raw)
    except ValueError as exc:
        return "error", str(exc)


@pytest.mark.parametrize("raw", [json.dumps({**GOOD, k: v}).encode() for k, v in VARIANTS] + RAW)
def test_plain_check_and_schema_agree(raw):
    assert _outcome(M.parse_meta, raw) == _outcome(validate_meta, raw)


def test_the_logs_the_runtime_writes_pass_the_plain_check():
    assert M._fast(json.dumps(GOOD).encode()) == validate_meta(json.dumps(GOOD).encode())
    keys = list(M._fast(json.dumps(dict(reversed(list(GOOD.items())))).encode()))
    assert keys == [k for k in M._ORDER if k in GOOD]  # the schema's order, whatever the file's


def test_drawn_metas_agree():
    rng = random.Random(5)
    pool = [*VARIANTS, *GOOD.items()]
    for _ in range(400):
        meta = dict(rng.sample(pool, rng.randint(0, 8)))
        raw = json.dumps(meta).encode()
        assert _outcome(M.parse_meta, raw) == _outcome(validate_meta, raw), meta
