#!/usr/bin/env bash
# `make demo`: profile the bundled proxy applications and write their reports.
# Everything it produces goes under out/demo/.
set -euo pipefail
cd "$(dirname "$0")/.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
SW=.venv/bin/scalewise
OUT=out/demo
mkdir -p "$OUT"

# Open MPI starts more ranks than this machine has cores only when told to.
launch=(mpirun.openmpi --oversubscribe --bind-to none -np 4)

reports=()
for app in sem ocean amr dft; do
    echo "== $app: 4 ranks, Open MPI"
    "$SW" run --quiet -o "$OUT/logs" -- "${launch[@]}" "build/openmpi/proxies/$app" --size tiny | tee "$OUT/$app.run"
    log=$(sed -n 's/^profile: //p' "$OUT/$app.run" | tail -n 1)
    "$SW" report "$log" -o "$OUT/$app.html"
    reports+=("$OUT/$app.html")
done

echo "== summary of the sem run"
"$SW" summary "$(sed -n 's/^profile: //p' "$OUT/sem.run" | tail -n 1)"

echo
echo "Reports:"
for r in "${reports[@]}"; do echo "  $(realpath "$r")"; done
