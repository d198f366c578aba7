#!/usr/bin/env bash
# Every benchmark, side by side in one session: profiler cost, then report speed.
set -euo pipefail
cd "$(dirname "$0")/.."
# The synthetic builders some benchmarks share with the tests (tests/support).
export PYTHONPATH=tests${PYTHONPATH:+:$PYTHONPATH}
.venv/bin/python bench/overhead.py "$@"
.venv/bin/python bench/mpit_cost.py
.venv/bin/python bench/run_cost.py
.venv/bin/python bench/bench_report.py
.venv/bin/python bench/oversubscribed.py
.venv/bin/python bench/bench_whatif.py
.venv/bin/python bench/bench_trace.py
.venv/bin/python bench/whatif_accuracy.py
.venv/bin/python bench/calibrate_collectives.py
.venv/bin/python bench/gather_cost.py --ranks 4,8,16 --rounds 3
