"""Trace-mode statements of the generated wrappers (docs/trace-format.md).

Which calls a trace records, and how, follows from the function's name and
its spec rule; the statements run after the real call, only while
``sw_tracing`` is set, and call into runtime/lib/trace.c.  A request the
trace records carries the trace's id in the request table (``sw_tr``).  Kept apart from
genwrap.py: the profile's own recording does not depend on any of this.
"""

from __future__ import annotations

SENDS = ("MPI_Send", "MPI_Ssend", "MPI_Bsend", "MPI_Rsend", "MPI_Isend", "MPI_Issend", "MPI_Ibsend", "MPI_Irsend")

# Bytes a trace records for each collective the replay decomposes: the size
# the libraries' decision rules look at (docs/trace-format.md), not the
# profile's byte totals.
COLLECTIVE_BYTES = {
    "MPI_Allreduce": "sw_bytes(count, datatype)",
    "MPI_Reduce": "sw_bytes(count, datatype)",
    "MPI_Bcast": "sw_bytes(count, datatype)",
    "MPI_Barrier": "0",
    "MPI_Alltoall": "sw_inplace_bytes(sendbuf, sendcount, sendtype, recvcount, recvtype)",
    "MPI_Allgather": "sw_inplace_bytes(sendbuf, sendcount, sendtype, recvcount, recvtype)",
    "MPI_Gather": None,  # the spec's rule: the block this rank sends
    "MPI_Allgatherv": None,
    "MPI_Gatherv": None,
    "MPI_Alltoallv": None,  # everything this rank sends
    "MPI_Scatter": "(recvbuf == MPI_IN_PLACE ? sw_bytes(sendcount, sendtype) : sw_bytes(recvcount, recvtype))",
    "MPI_Scatterv": "(recvbuf == MPI_IN_PLACE ? sw_bytes(sendcounts[sw_comm_rank(comm)], sendtype)"
                    " : sw_bytes(recvcount, recvtype))",
}


def request_trace(fn) -> str:
    """What the request table keeps for the trace of ``fn``'s request:
    ``&sw_tr``, filled in by the trace call, or NULL when the trace does
    not record the operation."""
    return "&sw_tr" if fn.name in SENDS + ("MPI_Irecv",) and "request" in {p.name for p in fn.params} else "NULL"


def trace_lines(fn) -> list[str]:
    """The statements to put right after the real call of ``fn``'s wrapper
    (``rc``, ``sw_t0``, ``sw_t1`` and the profile's locals are in scope)."""
    n, r = fn.name, fn.rule
    names = {p.name for p in fn.params}
    head = f"SW_FN_{n}, sw_t0, sw_t1"
    ok = "rc == MPI_SUCCESS"
    decl = ["sw_req_trace sw_tr = SW_REQ_UNTRACED;"] if request_trace(fn) != "NULL" else []
    if n in SENDS:
        call = f"sw_trace_send({head}, dest, tag, comm, {r['bytes']}, {request_trace(fn)})"
    elif n in ("MPI_Recv", "MPI_Irecv"):
        st = "sw_status" if n == "MPI_Recv" else "NULL"
        call = f"sw_trace_recv({head}, source, tag, comm, {st}, {request_trace(fn)})"
    elif n in ("MPI_Sendrecv", "MPI_Sendrecv_replace"):
        call = f"sw_trace_sendrecv({head}, dest, sendtag, {r['bytes']}, comm, sw_status)"
    elif n in COLLECTIVE_BYTES:
        nbytes = COLLECTIVE_BYTES[n] or r["bytes"]
        root = "root" if "root" in names else "-1"
        op = "op" if "op" in names else "MPI_OP_NULL"
        call = f"sw_trace_coll({head}, comm, {nbytes}, {root}, {op})"
    elif "complete" in r:
        call, ok = completion(fn, head, ok)
    else:
        return []
    return decl + [f"if (SW_UNLIKELY(sw_tracing) && {ok}) {call};"]


def completion(fn, head: str, ok: str) -> tuple[str, str]:
    """A Wait/Test family call: which of the claimed requests completed, with which status."""
    mode, _, args = fn.rule["complete"].partition(":")
    names = [a.strip() for a in args.split(",")]
    if "flag" in fn.rule:
        ok += f" && *{fn.rule['flag']}"
    if mode == "one":
        return f"sw_trace_done({head}, &sw_pd1, 1, NULL, 1, sw_status, 0)", ok
    claimed = "sw_k.claimed ? sw_k.pending : NULL"
    if mode == "all":
        return f"sw_trace_done({head}, {claimed}, {names[0]}, NULL, {names[0]}, sw_k.statuses, 1)", ok
    if mode == "any":
        return f"sw_trace_done({head}, {claimed}, {names[0]}, {names[2]}, 1, sw_status, 0)", \
            ok + f" && *{names[2]} != MPI_UNDEFINED"
    count, _, outcount, indices, _ = names
    return f"sw_trace_done({head}, {claimed}, {count}, {indices}, *{outcount}, sw_k.statuses, 0)", \
        ok + f" && *{outcount} != MPI_UNDEFINED"
