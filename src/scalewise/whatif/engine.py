"""The ctypes binding of the compiled replay engine (runtime/replay/, built by
``make setup`` into build/libswreplay.so).  The structures below mirror
runtime/replay/replay.h field for field.

The engine decodes the trace file's rank blocks itself (``Decoded``): one
24-byte row per event.  Each distinct collective call (a signature) gets the
point-to-point schedule the target library would run, built here in Python
once per signature (``templates.py``), and the engine walks it when a rank
reaches the call."""

from __future__ import annotations

import ctypes as C
from dataclasses import dataclass
from functools import cache

import numpy as np

from scalewise.errors import ScalewiseError
from scalewise.launch.preload import build_dir
from scalewise.logfile.tracefile import Directory
from scalewise.whatif.hostcost import HostCosts
from scalewise.whatif.network import Network

# Event kinds (enum sw_kind), as the trace's kind column.
OTHER, ISEND, IRECV, WAIT, SEND, RECV, COLLECTIVE = range(7)

_P = C.c_void_p
_I = C.c_int64


class _Network(C.Structure):
    _fields_ = [("nranges", _I), ("upto", _P), ("latency", _P), ("overhead", _P), ("gap", _P),
                ("per_byte", _P), ("eager_limit", C.c_double), ("bucket_bytes", C.c_double),
                ("bucket_rate", C.c_double), ("half_duplex", _I),
                ("exchange_extra", C.c_double), ("npeers", _I), ("peers_extra", _P)]


class _Source(C.Structure):
    _fields_ = [("image", _P), ("nranks", _I), ("nfuncs", _I), ("payload", _P), ("payload_len", _P),
                ("nevents", _P), ("nwait", _P), ("is_vector", _P), ("ncomms", _I), ("comm_id", _P),
                ("comm_start", _P), ("members", _P)]


class _Templates(C.Structure):
    _fields_ = [("nsigs", _I), ("sig_first", _P), ("sig_size", _P), ("sig_cost", _P), ("start", _P),
                ("op", _P), ("peer", _P), ("bytes", _P)]


class _Placement(C.Structure):
    _fields_ = [("node_of", _P), ("local", C.POINTER(_Network)), ("compute_scale", _P), ("host_o", _P),
                ("irecv_cost", _P), ("host_inside", _I)]


class _Result(C.Structure):
    _fields_ = [("finish", _P), ("compute", _P), ("func_time", _P), ("ops", _P)]


SIGNATURE = np.dtype([("func", np.int64), ("comm", np.int64), ("bytes", np.int64), ("root", np.int64),
                      ("flags", np.int64), ("vinst", np.int64)])
VCALL = np.dtype([("rank", np.int64), ("comm", np.int64), ("vinst", np.int64), ("func", np.int64),
                  ("bytes", np.int64)])


@dataclass
class Templates:
    """Every signature's schedule: signature s, comm rank i runs ops
    start[first[s] + i] .. start[first[s] + i + 1]; ``peer`` is a comm rank, or
    for WAIT the number of requests posted just before that it completes."""

    first: np.ndarray
    size: np.ndarray
    start: np.ndarray
    op: np.ndarray
    peer: np.ndarray
    bytes: np.ndarray


@dataclass
class EngineResult:
    finish: np.ndarray  # per rank, seconds
    compute: np.ndarray  # per rank, seconds
    func_time: np.ndarray  # ranks x functions, seconds
    ops: int  # point-to-point operations replayed, collectives expanded


@cache
def _library() -> C.CDLL:
    path = build_dir() / "libswreplay.so"
    if not path.is_file():
        raise ScalewiseError(f"replay engine not built: {path} is missing (run `make setup`)")
    lib = C.CDLL(str(path))
    lib.sw_open.argtypes = [C.POINTER(_Source), C.c_char_p, _I]
    lib.sw_open.restype = _P
    for name in ("sw_nsigs", "sw_nvcalls", "sw_bytes"):
        getattr(lib, name).argtypes = [_P]
        getattr(lib, name).restype = _I
    for name in ("sw_sigs", "sw_vcalls"):
        getattr(lib, name).argtypes = [_P]
        getattr(lib, name).restype = _P
    lib.sw_replay.argtypes = [_P, C.POINTER(_Templates), C.POINTER(_Network), C.POINTER(_Placement),
                              C.POINTER(_Result), C.c_char_p, _I]
    lib.sw_replay.restype = C.c_int
    lib.sw_close.argtypes = [_P]
    lib.sw_close.restype = None
    return lib


def _ptr(a: np.ndarray) -> int:
    return a.ctypes.data


def _network(net: Network, keep: list) -> _Network:
    """The C view of ``net``; its arrays go into ``keep``, which must outlive it."""
    params = {
        "upto": np.array([r.upto for r in net.ranges], dtype=np.float64),
        "latency": np.array([r.latency_us * 1e-6 for r in net.ranges], dtype=np.float64),
        "overhead": np.array([r.overhead_us * 1e-6 for r in net.ranges], dtype=np.float64),
        "gap": np.array([r.gap_us * 1e-6 for r in net.ranges], dtype=np.float64),
        "per_byte": np.array([r.per_byte for r in net.ranges], dtype=np.float64),
    }
    peers = np.array([b - 1.0 for b in net.both_ways_peers or []], dtype=np.float64)
    keep.extend([*params.values(), peers])
    shaped = net.shaping
    return _Network(len(net.ranges), *(_ptr(params[k]) for k in params), float(net.eager_limit),
                    shaped.payload_bucket if shaped else 0.0, shaped.payload_per_second if shaped else 0.0,
                    int(net.duplex == "half"), (net.both_ways or 1.0) - 1.0, len(peers), _ptr(peers))


def _i64(a) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.int64)


class Decoded:
    """A trace decoded by the engine, ready to replay on any number of networks.

    ``where`` prefixes its errors (the file's path, or ``trace``)."""

    def __init__(self, image: bytes, directory: Directory, nfuncs: int, is_vector: np.ndarray,
                 comms: dict[int, np.ndarray], where: str):
        self.nranks, self.nfuncs = len(directory.nevents), nfuncs
        self.nevents = int(np.sum(directory.nevents))
        ids = sorted(comms)
        sizes = [len(comms[c]) for c in ids]
        keep = [np.frombuffer(image, dtype=np.uint8) if len(image) else np.zeros(1, dtype=np.uint8),
                _i64(directory.payload), _i64(directory.payload_len), _i64(directory.nevents),
                _i64(directory.nwait), np.ascontiguousarray(is_vector, dtype=np.uint8), _i64(ids),
                _i64(np.concatenate(([0], np.cumsum(sizes)))),
                _i64(np.concatenate([comms[c] for c in ids]) if ids else np.zeros(1))]
        src = _Source(keep[0].ctypes.data, self.nranks, nfuncs, *(_ptr(a) for a in keep[1:6]), len(ids),
                      *(_ptr(a) for a in keep[6:]))
        err = C.create_string_buffer(512)
        self._lib = _library()
        self._handle = self._lib.sw_open(C.byref(src), err, len(err))
        if not self._handle:
            raise ScalewiseError(f"{where}: {err.value.decode()}")
        self.where = where
        n = self._lib.sw_nsigs(self._handle)
        self.signatures = np.ctypeslib.as_array((C.c_int64 * (6 * n)).from_address(self._lib.sw_sigs(self._handle)))\
            .view(SIGNATURE).copy() if n else np.zeros(0, dtype=SIGNATURE)
        m = self._lib.sw_nvcalls(self._handle)
        self.vcalls = np.ctypeslib.as_array((C.c_int64 * (5 * m)).from_address(self._lib.sw_vcalls(self._handle)))\
            .view(VCALL).copy() if m else np.zeros(0, dtype=VCALL)

    @property
    def resident_bytes(self) -> int:
        """Bytes the decoded trace keeps (rows, wait lists, tables)."""
        return int(self._lib.sw_bytes(self._handle))

    def run(self, tpl: Templates, cost: np.ndarray, net: Network, node_of: np.ndarray | None = None,
            local: Network | None = None, compute_scale: np.ndarray | None = None,
            host: HostCosts | None = None) -> EngineResult:
        """Replay on ``net``; ``cost`` is each signature's measured per-call seconds.  With ``node_of`` (a node
        per rank), messages between ranks of one node are costed with ``local`` (shared memory).  With
        ``compute_scale`` (a factor per rank), each rank's recorded compute is multiplied by its factor.
        With ``host`` (the traced run's host costs, hostcost.py), each rank's own messages cost at least its
        host cost per message where it was measured: inside a node (``host.inside``) or between nodes.  A deadlock raises."""
        keep = []
        c_net = _network(net, keep)
        place = None
        if node_of is not None and local is not None:
            nodes = np.ascontiguousarray(node_of, dtype=np.int32)
            keep.append(nodes)
            place = _Placement(_ptr(nodes), C.pointer(_network(local, keep)))
        if compute_scale is not None:
            scale = np.ascontiguousarray(compute_scale, dtype=np.float64)
            if scale.shape != (self.nranks,):
                raise ScalewiseError(f"compute scale: {scale.size} factors for {self.nranks} ranks")
            keep.append(scale)
            place = place or _Placement()
            place.compute_scale = _ptr(scale)
        if host is not None:
            if len(host.per_message) != self.nranks:
                raise ScalewiseError(f"host costs: {len(host.per_message)} ranks for a trace of {self.nranks}")
            per_message = np.ascontiguousarray(host.per_message, dtype=np.float64)
            irecv = np.ascontiguousarray(host.irecv, dtype=np.float64)
            keep.extend((per_message, irecv))
            place = place or _Placement()
            place.host_o, place.irecv_cost = _ptr(per_message), _ptr(irecv)
            place.host_inside = int(host.inside)
        cost = np.ascontiguousarray(cost, dtype=np.float64)
        arrays = [_i64(tpl.first), _i64(tpl.size), cost, _i64(tpl.start),
                  np.ascontiguousarray(tpl.op, dtype=np.uint8), np.ascontiguousarray(tpl.peer, dtype=np.int32),
                  _i64(tpl.bytes)]
        c_tpl = _Templates(len(tpl.first), *(_ptr(a) for a in arrays))
        nranks, nfuncs = self.nranks, max(1, self.nfuncs)
        finish, compute = np.zeros(nranks), np.zeros(nranks)
        func_time = np.zeros((nranks, nfuncs))
        ops = np.zeros(1, dtype=np.int64)
        err = C.create_string_buffer(512)
        c_result = _Result(_ptr(finish), _ptr(compute), _ptr(func_time), _ptr(ops))
        if self._lib.sw_replay(self._handle, C.byref(c_tpl), C.byref(c_net), C.byref(place) if place else None,
                               C.byref(c_result), err, len(err)):
            raise ScalewiseError(f"replay: {err.value.decode()}")
        return EngineResult(finish, compute, func_time[:, :self.nfuncs], int(ops[0]))

    def close(self) -> None:
        if self._handle:
            self._lib.sw_close(self._handle)
            self._handle = None

    def __enter__(self) -> Decoded:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        self.close()
