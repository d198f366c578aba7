#!/usr/bin/env bash
# One line per set-up step: `step.sh LABEL COMMAND...` runs COMMAND with its
# output kept in build/logs/<label>.log and prints "LABEL ... ok (Ns)"; when it
# fails, the whole log follows so the error is shown in full, and the status
# is COMMAND's. The line is printed whole once COMMAND ends, so that steps make
# runs side by side do not cut into each other's lines.
set -uo pipefail
label=$1; shift
logs="$(dirname "$0")/../build/logs"
mkdir -p "$logs"
log="$logs/${label// /-}.log"
start=$SECONDS
if "$@" >"$log" 2>&1; then
    printf '%-28s ok (%s s)\n' "$label ..." "$((SECONDS - start))"
else
    rc=$?
    printf '%-28s FAILED (exit %s); its output, also in %s:\n' "$label ..." "$rc" "$log"
    cat "$log"
    exit "$rc"
fi
