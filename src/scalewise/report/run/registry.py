"""The figure registry: which figures a profile report shows, where and with what caption.

Adding a figure means writing its function in ``figures.py`` and one
:class:`~scalewise.report.figure.FigureSpec` here; the HTML page,
``--figures DIR`` and the tests all walk this list.
``missing`` says, in words for the reader, why a figure cannot be drawn for a
given run (no MPI calls, a single rank, ...); the page shows that sentence in
place of the figure.
"""

from __future__ import annotations

from scalewise.analysis.run.findings import RunAnalysis
from scalewise.report.figure import FigureSpec
from scalewise.report.run import figures


def _no_ranks(a: RunAnalysis) -> str | None:
    return "No rank recorded any time." if a.breakdown.nranks_present == 0 else None


def _no_bins(a: RunAnalysis) -> str | None:
    if a.timeline is None:
        return "This log has no time bins (logs of format 1.2 on have them, unless SCALEWISE_BINS=0)."
    return None


def _no_calls(a: RunAnalysis) -> str | None:
    return "No MPI calls were recorded, so there is nothing to break down." if a.functions.empty else None


def _no_sizes(a: RunAnalysis) -> str | None:
    return "No call recorded a message size." if a.sizes.empty else None


def _no_p2p(a: RunAnalysis) -> str | None:
    if a.matrix.nranks < 2:
        return "Single-rank run: there is no point-to-point traffic between ranks."
    if a.neighbourhood.empty:
        return "No point-to-point messages were recorded."
    return None


def _no_volume(a: RunAnalysis) -> str | None:
    return "No bytes were sent between ranks." if a.volume.total == 0 else None


FIGURES: list[FigureSpec] = [
    FigureSpec("p1-mpi-vs-compute", "P1", "time", "MPI vs compute time per rank",
               figures.p1_mpi_vs_compute, lambda a: (a.breakdown,),
               "Each rank's wall time split into compute (light) and MPI (red), ranks ordered by their MPI share. "
               "A rising red band means some ranks wait for others.", _no_ranks),
    *(FigureSpec(ident, "P1", "time", title, function, lambda a: (a.timeline,), caption, _no_bins)
      for ident, title, function, caption in (
          ("p1-mpi-share-heatmap", "MPI share per rank over time", figures.p1_mpi_share_heatmap,
           "Each rank's share of time inside MPI in each time bin; the ranks leave MPI_Init together, so a "
           "column is the same moment on every rank."),
          ("p1-mpi-share-over-time", "MPI share over time", figures.p1_mpi_share_over_time,
           "MPI time of all ranks over their wall time in each time bin; the band spans the lowest and highest "
           "rank."))),
    FigureSpec("p2-time-per-function", "P2", "functions", "Time per MPI function",
               figures.p2_time_per_function, lambda a: (a.functions,),
               "Time in each MPI function summed over ranks, as % of all ranks' wall time (left) and of all MPI time (right).",
               _no_calls),
    FigureSpec("p3-calls-per-function", "P3", "functions", "Calls per MPI function",
               figures.p3_calls_per_function, lambda a: (a.calls,),
               "Number of calls summed over ranks, with each function's share of all MPI calls.", _no_calls),
    FigureSpec("p4-message-sizes", "P4", "sizes", "Message sizes per MPI function",
               figures.p4_message_sizes, lambda a: (a.sizes,),
               "Messages per log2 size bin. Wait/Test rows ('completes') show the sizes of the non-blocking "
               "messages they complete.", _no_sizes),
    FigureSpec("p5-matrix", "P5", "matrix", "Point-to-point communication matrix",
               figures.p5_matrix, lambda a: (a.matrix,),
               "Bytes and messages from each sender (row) to each receiver (column); beyond a few hundred ranks "
               "each cell sums a block of consecutive ranks.", _no_p2p),
    FigureSpec("p5-locality", "P5", "matrix", "Traffic within +-k ranks",
               figures.p5_locality, lambda a: (a.neighbourhood,),
               "Share of point-to-point bytes and messages whose sender and receiver are at most k ranks apart.",
               _no_p2p),
    FigureSpec("p6-data-per-rank", "P6", "volume", "Data sent per rank",
               figures.p6_data_per_rank, lambda a: (a.volume,),
               "Bytes each rank sent: point-to-point (counted at the sender), collective and one-sided payloads.",
               _no_volume),
]

SECTIONS = {
    "time": "Where the time goes (P1)",
    "functions": "MPI functions: time and calls (P2, P3)",
    "sizes": "Message sizes (P4)",
    "matrix": "Who talks to whom (P5)",
    "volume": "Data transferred (P6)",
    "mpit": "The MPI library's own counters (MPI_T)",
}
