"""The ctypes binding of the compiled replay engine (runtime/replay/replay.c,
built by ``make setup`` into build/libswreplay.so).  The structures below
mirror runtime/replay/replay.h field for field."""

from __future__ import annotations

import ctypes as C
from dataclasses import dataclass, field
from functools import cache

import numpy as np

from scalewise.errors import ScalewiseError
from scalewise.launch.preload import build_dir
from scalewise.whatif.network import Network

# Engine operation codes (enum sw_op).
OP_NONE, OP_ISEND, OP_IRECV, OP_WAITALL, OP_SEND, OP_RECV = range(6)

_P = C.c_void_p


class _Network(C.Structure):
    _fields_ = [("nranges", C.c_int64), ("upto", _P), ("latency", _P), ("overhead", _P), ("gap", _P),
                ("per_byte", _P), ("eager_limit", C.c_double), ("bucket_bytes", C.c_double),
                ("bucket_rate", C.c_double), ("half_duplex", C.c_int64)]


class _Trace(C.Structure):
    _fields_ = [("nranks", C.c_int64), ("nevents", C.c_int64), ("nfuncs", C.c_int64), ("rank_start", _P),
                ("events", _P), ("reqs", _P), ("nreqs", C.c_int64)]


class _Result(C.Structure):
    _fields_ = [("finish", _P), ("compute", _P), ("func_time", _P), ("error", C.c_char_p),
                ("error_size", C.c_int64)]


# struct sw_event: one record per event, fields side by side (C alignment).
EVENT = np.dtype([("bytes", np.int64), ("compute", np.float64), ("aux", np.int64), ("peer", np.int32),
                  ("tag", np.int32), ("comm", np.int32), ("func", np.int32), ("op", np.uint8), ("cost", np.float32)],
                 align=True)
assert EVENT.itemsize == 48
CALL = np.dtype([("row", np.int64), ("func", np.int32), ("bytes", np.int64), ("ranks", np.int32)])


@dataclass
class Streams:
    """Engine input: every rank's events back to back (``events``, of dtype
    EVENT; rank_start has nranks+1 offsets), the waits' request lists, and
    the function-name table."""

    rank_start: np.ndarray
    events: np.ndarray
    reqs: np.ndarray
    functions: list[str]
    # One row per collective call: the row of its first event, its function, bytes and communicator size
    # (where a network's measured per-call cost goes, api.replay).
    collective_calls: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=CALL))

    @property
    def nranks(self) -> int:
        return len(self.rank_start) - 1

    @property
    def nevents(self) -> int:
        return int(self.rank_start[-1])


@dataclass
class EngineResult:
    finish: np.ndarray  # per rank, seconds
    compute: np.ndarray  # per rank, seconds
    func_time: np.ndarray  # ranks x functions, seconds


@cache
def _library() -> C.CDLL:
    path = build_dir() / "libswreplay.so"
    if not path.is_file():
        raise ScalewiseError(f"replay engine not built: {path} is missing (run `make setup`)")
    lib = C.CDLL(str(path))
    lib.sw_replay.argtypes = [C.POINTER(_Trace), C.POINTER(_Network), C.POINTER(_Result)]
    lib.sw_replay.restype = C.c_int
    return lib


def _ptr(a: np.ndarray) -> int:
    return a.ctypes.data


def run(streams: Streams, net: Network) -> EngineResult:
    """Replay ``streams`` on ``net``; a deadlock or bad stream raises ScalewiseError."""
    events = np.ascontiguousarray(streams.events, dtype=EVENT)
    rank_start = np.ascontiguousarray(streams.rank_start, dtype=np.int64)
    reqs = np.ascontiguousarray(streams.reqs, dtype=np.int64)
    params = {
        "upto": np.array([r.upto for r in net.ranges], dtype=np.float64),
        "latency": np.array([r.latency_us * 1e-6 for r in net.ranges], dtype=np.float64),
        "overhead": np.array([r.overhead_us * 1e-6 for r in net.ranges], dtype=np.float64),
        "gap": np.array([r.gap_us * 1e-6 for r in net.ranges], dtype=np.float64),
        "per_byte": np.array([r.per_byte for r in net.ranges], dtype=np.float64),
    }
    shaped = net.shaping
    c_net = _Network(len(net.ranges), *(_ptr(params[k]) for k in params), float(net.eager_limit),
                     shaped.payload_bucket if shaped else 0.0, shaped.payload_per_second if shaped else 0.0,
                     int(net.duplex == "half"))
    nranks, nfuncs = streams.nranks, max(1, len(streams.functions))
    c_trace = _Trace(nranks, streams.nevents, nfuncs, _ptr(rank_start), _ptr(events), _ptr(reqs), len(reqs))
    finish, compute = np.zeros(nranks), np.zeros(nranks)
    func_time = np.zeros((nranks, nfuncs))
    error = C.create_string_buffer(512)
    c_result = _Result(_ptr(finish), _ptr(compute), _ptr(func_time), C.cast(error, C.c_char_p), len(error))
    if _library().sw_replay(C.byref(c_trace), C.byref(c_net), C.byref(c_result)) != 0:
        raise ScalewiseError(f"replay: {error.value.decode()}")
    return EngineResult(finish, compute, func_time[:, :len(streams.functions)])
