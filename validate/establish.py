"""Establish an application's goldens once, with mpiP on the same execution as scalewise.

    python validate/establish.py APP FLAVOUR --mpip /path/to/libmpiP.so [--runs 3]

mpiP (github.com/LLNL/mpiP, built against FLAVOUR's MPI outside the
repository) is preloaded before scalewise's library by mpip_first.sh.  The
application runs ``--runs`` times; a function whose mpiP counts differ
between runs is printed as timing-dependent (the manifest must exclude it,
with the reason).  The first run's figures are written as
``golden.<flavour>.json`` and its report as ``mpip.<flavour>.txt``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from golden import HERE, ROOT, golden_functions, load_app, parse_mpip, prepare, run_scalewise, scalewise_figures

MPIP_OPTIONS = "-k 0 -e"  # one call site per function; exact (fixed-point) byte sums


def mpip_run(app, flavour: str, library: Path, work: Path) -> tuple[str, dict, dict, str]:
    prepare(app, work)
    env = {"MPIP_LIBRARY": str(library), "MPIP": f"{MPIP_OPTIONS} -f {work}"}
    forward = ["-x", "MPIP_LIBRARY", "-x", "MPIP"] if flavour == "openmpi" else []
    before = [*forward, str(HERE / "mpip_first.sh")]
    profile = run_scalewise(app, flavour, work, before_app=before, extra_env=env)
    reports = sorted(work.glob("*.mpiP"))
    if len(reports) != 1:
        raise SystemExit(f"establish: {len(reports)} mpiP reports in {work}")
    text = reports[0].read_text()
    command = (f"MPIP_LIBRARY={library} MPIP='{MPIP_OPTIONS} -f .' scalewise run --mpi {flavour} -- "
               + " ".join(["mpirun." + flavour, "-np", str(app.ranks), *forward, "validate/mpip_first.sh",
                           *app.commands[flavour]]))
    return text, parse_mpip(text, app.ranks), scalewise_figures(profile), command


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("app")
    ap.add_argument("flavour")
    ap.add_argument("--mpip", type=Path)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--mpip-revision", default="LLNL/mpiP 8ff38c3 (3.5.0)")
    ap.add_argument("--rebuild", action="store_true",
                    help="only rebuild golden.<flavour>.json's goldens from the stored mpip.<flavour>.txt")
    args = ap.parse_args()
    app = load_app(args.app)
    if args.rebuild:
        golden = json.loads(app.golden_path(args.flavour).read_text())
        golden["functions"] = golden_functions(parse_mpip(app.mpip_path(args.flavour).read_text(), app.ranks), app.ranks,
                                               app.received_bytes, app.unmoved_bytes)
        app.golden_path(args.flavour).write_text(json.dumps(golden, indent=1) + "\n")
        return 0
    if args.mpip is None:
        ap.error("--mpip is required to establish goldens")
    runs = [mpip_run(app, args.flavour, args.mpip, ROOT / "out" / "establish" / f"{app.name}-{args.flavour}-{i}")
            for i in range(args.runs)]
    text, mpip, sw, command = runs[0]
    for name in sorted(set().union(*(r[1] for r in runs))):
        seen = {json.dumps(r[1].get(name)) for r in runs}
        if len(seen) > 1:
            print(f"timing-dependent: {name}: {[r[1].get(name) for r in runs]}")
    functions = golden_functions(mpip, app.ranks, app.received_bytes, app.unmoved_bytes)
    for name in sorted(set(sw) | set(mpip)):
        a, b = sw.get(name), mpip.get(name)
        if a is None or b is None or a["calls"] != b["calls"] or (b["bytes"] is not None and a["bytes"] != b["bytes"]):
            print(f"differs: {name}: scalewise {a} mpiP {b}")
    golden = {"app": app.name, "flavour": args.flavour, "ranks": app.ranks,
              "mpip": {"revision": args.mpip_revision, "options": MPIP_OPTIONS, "command": command,
                       "report": app.mpip_path(args.flavour).name},
              "scalewise_same_execution": {n: sw[n] for n in sorted(sw)},
              "functions": functions}
    app.golden_path(args.flavour).write_text(json.dumps(golden, indent=1) + "\n")
    app.mpip_path(args.flavour).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
