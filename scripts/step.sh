#!/usr/bin/env bash
# One line per set-up step: `step.sh LABEL COMMAND...` runs COMMAND with its
# output kept in build/logs/<label>.log and prints "LABEL ... ok (Ns)"; when it
# fails, the whole log follows so the error is shown in full, and the status
# is COMMAND's.
set -uo pipefail
label=$1; shift
logs="$(dirname "$0")/../build/logs"
mkdir -p "$logs"
log="$logs/${label// /-}.log"
start=$SECONDS
printf '%-28s' "$label ..."
if "$@" >"$log" 2>&1; then
    echo " ok ($((SECONDS - start)) s)"
else
    rc=$?
    echo " FAILED (exit $rc); its output, also in $log:"
    cat "$log"
    exit "$rc"
fi
