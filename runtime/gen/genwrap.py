#!/usr/bin/env python3
"""Generate the MPI wrappers and the function-name table from spec/mpi.toml.

Stdlib only.  Usage: genwrap.py SPEC OUTDIR [--mpi-version X.Y]

Writes OUTDIR/wrappers.c (one wrapper per function, defining both MPI_x and
PMPI_x) and OUTDIR/functions.h (the function ids and the name/class tables
written into every log).  Output is deterministic: the same spec gives the
same bytes.  Errors name the spec entry and the field.
"""

from __future__ import annotations

import argparse
import re
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gentrace import request_trace, trace_lines  # noqa: E402

CLASSES = {"p2p", "collective", "wait", "test", "rma", "io", "comm", "local", "init", "other"}
KEYS = {"args", "class", "bytes", "recv_status", "send_to", "request", "req_recv", "persistent",
        "persist_send", "start", "complete", "flag", "free_request", "comm_new", "comm_free",
        "type_free", "lifecycle", "since", "large_count", "fortran_entry", "returns", "hot"}
LIFECYCLES = {"init", "init_thread", "finalize", "abort", "pcontrol"}
TEMPLATES = Path(__file__).resolve().parent / "templates"


class SpecError(Exception):
    pass


@dataclass
class Param:
    decl: str
    name: str


@dataclass
class Function:
    name: str
    index: int
    params: list[Param]
    variadic: bool
    rule: dict

    @property
    def args(self) -> str:
        decls = [p.decl for p in self.params] + (["..."] if self.variadic else [])
        return ", ".join(decls) if decls else "void"

    @property
    def call(self) -> str:
        return ", ".join(p.name for p in self.params)


def parse_params(fn: str, args: str) -> tuple[list[Param], bool]:
    params, variadic = [], False
    for raw in (a.strip() for a in args.split(",")):
        if raw == "...":
            variadic = True
            continue
        if raw in ("", "void"):
            continue
        m = re.search(r"([A-Za-z_]\w*)\s*(\[\s*\w*\s*\])*\s*$", raw)
        if not m:
            raise SpecError(f"{fn}.args: cannot find the parameter name in '{raw}'")
        params.append(Param(raw, m.group(1)))
    return params, variadic


def split_names(fn: str, key: str, value: str, params: list[Param], count: int | None = None) -> list[str]:
    names = [v.strip() for v in value.split(",")]
    known = {p.name for p in params}
    for n in names:
        if n not in known:
            raise SpecError(f"{fn}.{key}: '{n}' is not a parameter of {fn}")
    if count is not None and len(names) != count:
        raise SpecError(f"{fn}.{key}: expected {count} names, got {len(names)}")
    return names


# The MPI-4 large-count form of a function (MPI_Send_c) differs from it only
# in types: element counts become MPI_Count, displacement arrays MPI_Aint.
_LARGE = [(re.compile(r"^(const\s+)?int(\s+\w*count\w*\s*(\[\s*\])?)$"), r"\1MPI_Count\2"),
          (re.compile(r"^(const\s+)?int(\s+\w*displs\s*\[\s*\])$"), r"\1MPI_Aint\2")]
LARGE_COUNT_SINCE = (4, 0)


def large_count_args(args: str) -> str:
    """The parameter list of the ``_c`` form, from the ``int`` form's."""
    out = []
    for raw in (a.strip() for a in args.split(",")):
        for pattern, repl in _LARGE:
            raw = pattern.sub(repl, raw)
        out.append(raw)
    return ", ".join(out)


def load_spec(path: Path, mpi_version: tuple[int, int]) -> list[Function]:
    with path.open("rb") as fh:
        spec = tomllib.load(fh)
    out: list[Function] = []
    for name, rule in spec.items():
        if not re.fullmatch(r"MPI_[A-Z][a-z0-9_]*", name):
            raise SpecError(f"{name}: not an MPI function name")
        unknown = set(rule) - KEYS
        if unknown:
            raise SpecError(f"{name}: unknown key(s) {', '.join(sorted(unknown))}")
        if "args" not in rule or "class" not in rule:
            raise SpecError(f"{name}: 'args' and 'class' are required")
        if rule["class"] not in CLASSES:
            raise SpecError(f"{name}.class: '{rule['class']}' is not one of {', '.join(sorted(CLASSES))}")
        if "lifecycle" in rule and rule["lifecycle"] not in LIFECYCLES:
            raise SpecError(f"{name}.lifecycle: '{rule['lifecycle']}' is not one of {', '.join(sorted(LIFECYCLES))}")
        since = tuple(int(x) for x in rule.get("since", "1.0").split("."))
        if since > mpi_version:
            continue
        params, variadic = parse_params(name, rule["args"])
        out.append(Function(name, len(out), params, variadic, rule))
        # `large_count = true`: the _c twin follows, counted under its own name.
        if rule.get("large_count") and max(since, LARGE_COUNT_SINCE) <= mpi_version:
            twin = {k: v for k, v in rule.items() if k != "large_count"} | {"args": large_count_args(rule["args"])}
            params, variadic = parse_params(name + "_c", twin["args"])
            out.append(Function(name + "_c", len(out), params, variadic, twin))
    return out


def body(fn: Function) -> tuple[list[str], list[str], list[str], dict[str, str]]:
    """The recording statements of one wrapper, from its spec rule (before
    the call, right after it, at the end), and the arguments the real call
    gets in place of the caller's (a status the wrapper supplies when the
    caller passed MPI_STATUS(ES)_IGNORE)."""
    r, n, fid = fn.rule, fn.name, f"SW_FN_{fn.name}"
    pre: list[str] = []
    after: list[str] = []
    post: list[str] = []
    call: dict[str, str] = {}
    ps = fn.params
    if "bytes" in r:
        if "send_to" in r:
            # A send to MPI_PROC_NULL moves nothing: a 0-byte message, not in the matrix.
            dest, comm = split_names(n, "send_to", r["send_to"], ps, 2)
            post.append(f"uint64_t sw_nb = {dest} == MPI_PROC_NULL ? 0 : (uint64_t)({r['bytes']});")
            post.append(f"sw_credit(sw_th, {fid}, sw_nb);")
            post.append(f"sw_p2p_send(sw_th, {dest}, {comm}, sw_nb);")
        else:
            nbytes = f"(uint64_t)({r['bytes']})"
            if r["class"] == "collective" and r["bytes"] != "0" and "comm" in {p.name for p in ps}:
                # A collective of one rank moves nothing (docs/runtime.md, the byte rules).
                nbytes = f"(sw_comm_alone(comm) ? 0 : {nbytes})"
            post.append(f"uint64_t sw_nb = {nbytes};")
            post.append(f"sw_credit(sw_th, {fid}, sw_nb);")
    if "recv_status" in r:
        (st,) = split_names(n, "recv_status", r["recv_status"], ps, 1)
        pre.append(f"MPI_Status sw_st, *sw_status = {st} == MPI_STATUS_IGNORE ? &sw_st : {st};")
        post.append(f"if (rc == MPI_SUCCESS) sw_credit(sw_th, {fid}, sw_status_bytes(sw_status));")
        call[st] = "sw_status"
    if "request" in r:
        (rq,) = split_names(n, "request", r["request"], ps, 1)
        flags = ["SW_REQ_RECV" if r.get("req_recv") else "0"]
        if r.get("persistent") or "persist_send" in r:
            flags.append("SW_REQ_PERSISTENT")
        nb, peer = ("sw_nb" if "bytes" in r else "0"), "-1"
        if "persist_send" in r:
            cnt, dt, dest, comm = split_names(n, "persist_send", r["persist_send"], ps, 4)
            nb = f"({dest} == MPI_PROC_NULL ? 0 : sw_bytes({cnt}, {dt}))"
            peer = f"sw_world_rank({comm}, {dest})"
            flags.append("SW_REQ_SEND")
        post.append(f"if (rc == MPI_SUCCESS) sw_req_track(*{rq}, {fid}, {nb}, {peer}, {' | '.join(flags)}, "
                    f"{request_trace(fn)});")
    if "start" in r:
        mode, _, names = r["start"].partition(":")
        if mode == "one":
            (rq,) = split_names(n, "start", names, ps, 1)
            post.append(f"if (rc == MPI_SUCCESS) sw_req_start(sw_th, {fid}, *{rq});")
        elif mode == "all":
            cnt, rqs = split_names(n, "start", names, ps, 2)
            post.append(f"if (rc == MPI_SUCCESS) for (int sw_i = 0; sw_i < {cnt}; sw_i++) sw_req_start(sw_th, {fid}, {rqs}[sw_i]);")
        else:
            raise SpecError(f"{n}.start: mode '{mode}' is not one or all")
    if "complete" in r:
        pre_c, after, post_c, call_c = complete(fn, r["complete"], r.get("flag"))
        pre += pre_c
        post += post_c
        call |= call_c
    if "free_request" in r:
        (rq,) = split_names(n, "free_request", r["free_request"], ps, 1)
        # Claimed before the call, which frees the handle for reuse by other
        # threads; put back only if the call failed.
        pre.append(f"MPI_Request sw_rq = *{rq}; sw_pending sw_pd1; sw_req_take(sw_rq, &sw_pd1);")
        post.append(f"if (rc != MPI_SUCCESS) sw_req_settle(sw_th, SW_FN_{n}, sw_rq, &sw_pd1, 0, NULL);")
    if "comm_new" in r:
        (c,) = split_names(n, "comm_new", r["comm_new"], ps, 1)
        post.append(f"if (rc == MPI_SUCCESS) sw_comm_created(*{c});")
    if "comm_free" in r:
        (c,) = split_names(n, "comm_free", r["comm_free"], ps, 1)
        pre.append(f"MPI_Comm sw_c = *{c};")
        post.append("if (rc == MPI_SUCCESS) sw_comm_freed(sw_c);")
    if "type_free" in r:
        split_names(n, "type_free", r["type_free"], ps, 1)
        post.append("sw_type_freed();")
    return pre, after, post, call


def complete(fn: Function, value: str, flag: str | None) -> tuple[list[str], list[str], list[str], dict[str, str]]:
    """Statements for the Wait/Test families: keep the request handles the call
    will overwrite, claim their table entries (before the call under
    MPI_THREAD_MULTIPLE, sw_req_claim; with one thread after it, those of the
    completed requests only), make sure a status exists for each, then settle
    every claimed entry: credit what completed, put the rest back.  Returns
    the statements before the call, right after it (ahead of the trace's),
    at the end, and the arguments replaced."""
    n, fid, ps = fn.name, f"SW_FN_{fn.name}", fn.params
    mode, _, names = value.partition(":")
    cond = "rc == MPI_SUCCESS" + (f" && *{split_names(n, 'flag', flag, ps, 1)[0]}" if flag else "")
    if mode == "one":
        rq, st = split_names(n, "complete", names, ps, 2)
        pre = [f"MPI_Request sw_rq = *{rq}; sw_pending sw_pd1; sw_req_claim(sw_rq, &sw_pd1);",
               f"MPI_Status sw_st, *sw_status = {st} == MPI_STATUS_IGNORE ? &sw_st : {st};"]
        after = [f"sw_req_claim_after(sw_rq, &sw_pd1, {cond});"]
        post = [f"sw_req_settle(sw_th, {fid}, sw_rq, &sw_pd1, {cond}, sw_status);"]
        call = {st: "sw_status"}
    elif mode == "all":
        cnt, rqs, sts = split_names(n, "complete", names, ps, 3)
        pre = [f"sw_kept sw_k; sw_keep(&sw_k, {cnt}, {rqs}, {sts});"]
        after = [f"sw_kept_claim_all(&sw_k, {cnt}, {cond});"]
        post = [f"if (sw_k.claimed) for (int sw_i = 0; sw_i < {cnt}; sw_i++) "
                f"sw_req_settle(sw_th, {fid}, sw_k.reqs[sw_i], &sw_k.pending[sw_i], {cond}, &sw_k.statuses[sw_i]);",
                "sw_kept_release(&sw_k);"]
        call = {sts: "sw_k.statuses"}
    elif mode == "any":
        cnt, rqs, idx, st = split_names(n, "complete", names, ps, 4)
        pre = [f"sw_kept sw_k; sw_keep_requests(&sw_k, {cnt}, {rqs});",
               f"MPI_Status sw_st, *sw_status = {st} == MPI_STATUS_IGNORE ? &sw_st : {st};"]
        after = [f"sw_kept_claim_one(&sw_k, {cnt}, {cond}, ({cond}) ? *{idx} : MPI_UNDEFINED);"]
        post = [f"if (sw_k.claimed) for (int sw_i = 0; sw_i < {cnt}; sw_i++) "
                f"sw_req_settle(sw_th, {fid}, sw_k.reqs[sw_i], &sw_k.pending[sw_i], {cond} && *{idx} == sw_i, sw_status);",
                "sw_kept_release(&sw_k);"]
        call = {st: "sw_status"}
    elif mode == "some":
        cnt, rqs, outc, idx, sts = split_names(n, "complete", names, ps, 5)
        pre = [f"sw_kept sw_k; sw_keep(&sw_k, {cnt}, {rqs}, {sts});"]
        after = [f"sw_kept_claim_some(&sw_k, {cnt}, {cond}, {idx}, ({cond}) ? *{outc} : 0);"]
        # Completed entries first (statuses follow the order of the indices),
        # then every other claimed entry goes back.
        post = [f"if (sw_k.claimed && {cond} && *{outc} != MPI_UNDEFINED) for (int sw_i = 0; sw_i < *{outc}; sw_i++) {{ "
                f"int sw_j = {idx}[sw_i]; if (sw_j < 0 || sw_j >= {cnt}) continue; "
                f"sw_req_settle(sw_th, {fid}, sw_k.reqs[sw_j], &sw_k.pending[sw_j], 1, &sw_k.statuses[sw_i]); "
                f"sw_k.pending[sw_j].flags = 0; }}",
                f"if (sw_k.claimed) for (int sw_i = 0; sw_i < {cnt}; sw_i++) "
                f"sw_req_settle(sw_th, {fid}, sw_k.reqs[sw_i], &sw_k.pending[sw_i], 0, NULL);",
                "sw_kept_release(&sw_k);"]
        call = {sts: "sw_k.statuses"}
    else:
        raise SpecError(f"{n}.complete: mode '{mode}' is not one of one, all, any, some")
    return pre, after, post, call


def wrapper(fn: Function) -> str:
    r, n = fn.rule, fn.name
    life = r.get("lifecycle")
    ret = r.get("returns", "int")
    lines = [f"/* {n}: class {r['class']} */",
             f"typedef {ret} (*sw_t_{n})({fn.args});",
             f"static sw_t_{n} sw_r_{n};",
             f"static {ret} sw_w_{n}({fn.args})", "{",
             f"    if (SW_UNLIKELY(!sw_r_{n})) sw_r_{n} = (sw_t_{n})sw_resolve(\"P{n}\");"]
    if r.get("hot"):
        # Called millions of times: recorded only when asked (docs/runtime.md).
        lines.append(f"    if (SW_LIKELY(!sw_hot_local)) return sw_r_{n}({fn.call});")
    if life:
        lines += [f"    {stmt}" for stmt in lifecycle(fn, life)]
    else:
        pre, after, post, call = body(fn)
        recording_call = ", ".join(call.get(p.name, p.name) for p in fn.params)
        lines += ["    sw_thread *sw_th = sw_enter();",
                  f"    if (!sw_th) return sw_r_{n}({fn.call});"]
        lines += [f"    {s}" for s in pre]
        lines += ["    uint64_t sw_t0 = sw_ticks();",
                  f"    {ret} rc = sw_r_{n}({recording_call});",
                  "    uint64_t sw_t1 = sw_ticks();"]
        lines += [f"    {s}" for s in after]
        lines += [f"    {s}" for s in trace_lines(fn)]
        lines += [f"    {s}" for s in post]
        lines += [f"    sw_leave(sw_th, SW_FN_{n}, sw_t0, sw_t1);", "    return rc;"]
    lines.append("}")
    for sym in (n, "P" + n):
        lines.append(f"{ret} {sym}({fn.args}) __attribute__((alias(\"sw_w_{n}\"), visibility(\"default\")));")
    if r.get("fortran_entry"):
        lines += fortran_entries(fn)
    return "\n".join(lines) + "\n"


def fortran_entries(fn: Function) -> list[str]:
    """`fortran_entry = true`: also intercept the Fortran bindings' own entry
    points, for calls they answer without entering the C function (Open MPI
    4.1's Wait/Test forms return at once when given zero requests).  The call
    is recorded here only when the C wrapper did not record it, so it counts
    once either way.  Every Fortran argument is a pointer, plus ierror."""
    n, fid = fn.name, f"SW_FN_{fn.name}"
    low = n.lower()
    params = ", ".join(f"void *a{i}" for i in range(len(fn.params) + 1))
    args = ", ".join(f"a{i}" for i in range(len(fn.params) + 1))
    out = [f"typedef void (*sw_ft_{n})({params});"]
    # mpif.h and `use mpi` (every name mangling), then `use mpi_f08`.
    entries = [("f", f"{low}_", [low, f"{low}_", f"{low}__", n.upper()]), ("f08", f"{low}_f08_", [f"{low}_f08_"])]
    for tag, real, syms in entries:
        out += [f"static sw_ft_{n} sw_r{tag}_{n};",
                f"static void sw_{tag}_{n}({params})", "{",
                f"    if (SW_UNLIKELY(!sw_r{tag}_{n})) sw_r{tag}_{n} = (sw_ft_{n})sw_resolve(\"{real}\");",
                "    sw_thread *sw_th = sw_fortran_enter();",
                f"    if (!sw_th) {{ sw_r{tag}_{n}({args}); return; }}",
                f"    uint64_t sw_calls = sw_th->stats[{fid}].calls;",
                "    uint64_t sw_t0 = sw_ticks();",
                f"    sw_r{tag}_{n}({args});",
                "    uint64_t sw_t1 = sw_ticks();",
                f"    if (sw_th->stats[{fid}].calls == sw_calls && sw_fortran_record(sw_th))",
                f"        sw_leave(sw_th, {fid}, sw_t0, sw_t1);",
                "}"]
        out += [f"void {s}({params}) __attribute__((alias(\"sw_{tag}_{n}\"), visibility(\"default\")));"
                for s in syms]
    return out


def lifecycle(fn: Function, life: str) -> list[str]:
    n, call, fid = fn.name, fn.call, f"SW_FN_{fn.name}"
    if life in ("init", "init_thread"):
        provided = "*provided" if life == "init_thread" else "MPI_THREAD_SINGLE"
        if life == "init_thread":
            split_names(n, "args", "provided", fn.params, 1)
        return ["sw_init_begin();",
                "uint64_t sw_t0 = sw_ticks();",
                f"int rc = sw_r_{n}({call});",
                f"if (rc == MPI_SUCCESS) sw_started({fid}, sw_t0, sw_ticks(), {provided});",
                "return rc;"]
    if life == "finalize":
        return [f"sw_finishing({fid});", f"return sw_r_{n}();"]
    if life == "abort":
        return [f"sw_aborting({fid}, errorcode);", f"return sw_r_{n}({call});"]
    # Only the named-phase level carries a name (docs/runtime.md, "Phases"):
    # no other call is asked for an argument it may not have passed.
    return ["const char *sw_name = NULL;",
            "if (level == SW_PCONTROL_NAMED_PHASE) {",
            "    va_list ap;", "    va_start(ap, level);",
            "    sw_name = va_arg(ap, const char *);", "    va_end(ap);", "}",
            f"if (sw_pcontrol({fid}, level)) sw_phases_pcontrol(level, sw_name, sw_ticks());",
            f"return sw_r_{n}(level);"]


def header(fns: list[Function]) -> str:
    enum = "\n".join(f"    SW_FN_{f.name} = {f.index}," for f in fns)
    names = "\n".join(f'    "{f.name}",' for f in fns)
    classes = "\n".join(f'    "{f.rule["class"]}",' for f in fns)
    return (f"/* Generated from spec/mpi.toml by gen/genwrap.py: do not edit. */\n"
            f"#ifndef SW_FUNCTIONS_H\n#define SW_FUNCTIONS_H\n\n"
            f"enum sw_fn {{\n{enum}\n    SW_NFN = {len(fns)}\n}};\n\n"
            f"static const char *const sw_fn_names[SW_NFN] = {{\n{names}\n}};\n\n"
            f"static const char *const sw_fn_classes[SW_NFN] = {{\n{classes}\n}};\n\n#endif\n")


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("spec", type=Path)
    ap.add_argument("outdir", type=Path)
    ap.add_argument("--mpi-version", default="3.1", help="MPI standard version of the target mpi.h")
    a = ap.parse_args(argv)
    try:
        major, minor = (int(x) for x in a.mpi_version.split("."))
        fns = load_spec(a.spec, (major, minor))
        wrappers = "\n".join(wrapper(f) for f in fns)
    except (SpecError, tomllib.TOMLDecodeError) as exc:
        print(f"genwrap: {a.spec}: {exc}", file=sys.stderr)
        return 1
    a.outdir.mkdir(parents=True, exist_ok=True)
    prologue = (TEMPLATES / "wrappers.c.in").read_text()
    (a.outdir / "functions.h").write_text(header(fns))
    (a.outdir / "wrappers.c").write_text(prologue + "\n" + wrappers)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
