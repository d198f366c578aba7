#!/usr/bin/env bash
# `make demo`: the bundled study (examples/studies/demo.yaml: the proxy apps at
# 1 and 2 ranks, sem also at 4, x Open MPI and MPICH x shared memory and TCP,
# profiled, 4 repetitions), its study report, and a one-run profile report of
# the sem app.
# Everything it writes goes under out/.  Re-running resumes the study.
set -euo pipefail
cd "$(dirname "$0")/.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
SW=.venv/bin/scalewise
STUDY=examples/studies/demo.yaml
OUT=out/demo
mkdir -p "$OUT"

echo "== profile one run: sem, 4 ranks, Open MPI"
"$SW" run -o "$OUT/logs" -- mpirun.openmpi --oversubscribe --bind-to none -np 4 \
    build/openmpi/proxies/sem --size tiny | tee "$OUT/sem.run"
log=$(sed -n 's/^profile: //p' "$OUT/sem.run" | tail -n 1)
"$SW" report "$log" -o "$OUT/sem-profile.html" --figures "$OUT/sem-figures"

echo "== the demo study: $("$SW" study plan "$STUDY" | grep -c '^ *[0-9a-f]\{12\}' || true) runs"
# A run that fails or times out is recorded with its reason; the study goes on.
# The one line per finished run goes to demo-runs.log; the bar stays on the terminal.
if COLUMNS=250 "$SW" study run "$STUDY" 2> >(tee "$OUT/demo-runs.log" | grep -v '^ok ' >&2); then
    verdict="every run ok"
else
    verdict="some runs did not succeed: see 'scalewise study status $STUDY' and $OUT/demo-runs.log"
fi
"$SW" study status "$STUDY" | tail -n 5
"$SW" study report "$STUDY" -o "$OUT/study.html" --csv "$OUT/tables"

echo
echo "Study: $("$SW" study status "$STUDY" | grep -o '[0-9]* planned.*' | head -n 1); $verdict"
echo "Reports:"
echo "  study report:       $(realpath "$OUT/study.html")"
echo "  one-run profile:    $(realpath "$OUT/sem-profile.html")"
echo "  tables (CSV):       $(realpath "$OUT/tables")"
