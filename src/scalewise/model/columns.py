"""The columns of a Profile's frames (model/profile.py describes them), without pandas:
the log's plain reader (logfile/plain.py) names its rows with them too."""

from __future__ import annotations

RANK_COLUMNS = ["rank", "host", "pid", "wall", "mpi_time", "compute_time", "maxrss", "nthreads", "partial"]
LIFECYCLE_COLUMNS = ["rss_init_start", "rss_init_end", "rss_finalize", "finalize_time"]
PROFILER_COLUMNS = ["profiler_time", "profiler_init", "profiler_finalize"]
SETUP_COLUMNS = ["cpus_online", "cpus_allowed", "node_cpus", "ranks_on_node", "omp_threads", "setup_window",
                 "cpu_user", "cpu_sys", "nivcsw", "nvcsw", "load1_start", "load1_end", "node_busy", "node_total",
                 "node_steal"]
FUNCTION_COLUMNS = ["rank", "function", "fclass", "calls", "time", "tmin", "tmax", "bytes"]
HIST_COLUMNS = ["rank", "function", "bin", "lo", "hi", "count"]
P2P_COLUMNS = ["src", "dst", "messages", "bytes"]
SITE_COLUMNS = ["rank", "function", "object", "offset", "calls", "time", "bytes", "func", "location"]
BIN_COLUMNS = ["rank", "bin", "start", "width", "mpi_time", "compute_time"]
PHASE_COLUMNS = ["rank", "phase", "order", "wall", "mpi_time", "compute_time"]
PHASE_FUNCTION_COLUMNS = ["rank", "phase", "function", "calls", "time", "bytes"]
