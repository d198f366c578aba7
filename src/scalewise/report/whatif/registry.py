"""The figures of the what-if page (the analysis is a scalewise.whatif.compare.WhatIf)."""

from __future__ import annotations

from scalewise.report.figure import FigureSpec
from scalewise.report.whatif import figures

SECTIONS = {"whatif": "Predicted on each network"}

FIGURES = [
    FigureSpec(
        id="b1-jobs-per-day", ref="B1", section="whatif", title="Jobs per day on each network",
        function=figures.b1_jobs_per_day, arguments=lambda w: (w.summary,),
        caption="86,400 s over the wall time: measured (hatched) and replayed on each network "
                "with the target library's collective algorithms.",
        missing=lambda w: None if len(w.summary) else "nothing was replayed",
    ),
    FigureSpec(
        id="p2-time-per-function", ref="P2", section="whatif", title="Time per MPI function",
        function=figures.p2_time_per_function, arguments=lambda w: (w.functions,),
        caption="Seconds inside each MPI function summed over ranks (the 8 largest), measured and predicted.",
        missing=lambda w: None if len(w.functions) else "the trace has no MPI time on any network",
    ),
    FigureSpec(
        id="p1-time-per-rank", ref="P1", section="whatif", title="MPI and compute time per rank",
        function=figures.p1_time_per_rank, arguments=lambda w: (w.ranks,),
        caption="Load imbalance is kept by the replay: a rank waiting for a late partner waits on every network.",
        missing=lambda w: None if len(w.ranks) else "no ranks",
    ),
]
