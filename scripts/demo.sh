#!/usr/bin/env bash
# `make demo`: the bundled study (examples/studies/demo.yaml: the proxy apps at
# 1, 2 and 4 ranks x Open MPI and MPICH x shared memory and TCP, profiled, 3
# repetitions), its study report, a one-run profile report of the sem app, and
# (as root) examples/studies/demo-cluster.yaml on emulated nodes (B1 / P8).
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

# B1 / P8 on emulated nodes (network namespaces joined by shaped links: root).
CLUSTER_STUDY=examples/studies/demo-cluster.yaml
cluster_why_not() {
    [ "$(id -u)" = 0 ] || { echo "emulated nodes need root"; return; }
    for tool in ip tc unshare nsenter taskset; do
        command -v "$tool" >/dev/null || { echo "emulated nodes need $tool"; return; }
    done
}
why=$(cluster_why_not)
if [ -z "$why" ]; then
    echo "== multi-node demo: dft on 1 and 2 emulated nodes x Fast Ethernet and Gigabit Ethernet"
    if ! COLUMNS=250 "$SW" study run "$CLUSTER_STUDY" 2> >(tee "$OUT/demo-cluster-runs.log" | grep -v '^ok ' >&2); then
        verdict="some runs did not succeed: see 'scalewise study status $CLUSTER_STUDY' and $OUT/demo-cluster-runs.log"
    fi
    "$SW" study report "$CLUSTER_STUDY" -o "$OUT/cluster.html"
    cluster_line="  multi-node study:   $(realpath "$OUT/cluster.html")"
    cluster_status="Multi-node study: $("$SW" study status "$CLUSTER_STUDY" | grep -o '[0-9]* planned.*' | head -n 1)"
else
    cluster_line="  multi-node study:   not run ($why)"
    cluster_status="Multi-node study: not run ($why)"
fi

echo
echo "Study: $("$SW" study status "$STUDY" | grep -o '[0-9]* planned.*' | head -n 1); $verdict"
echo "$cluster_status"
echo "Reports:"
echo "  study report:       $(realpath "$OUT/study.html")"
echo "  one-run profile:    $(realpath "$OUT/sem-profile.html")"
echo "$cluster_line"
echo "  tables (CSV):       $(realpath "$OUT/tables")"
