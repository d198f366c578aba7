"""The what-if's summary table, from the comparison's plain rows (whatif/results.py): printed by
`scalewise whatif` and shown on its page, with rich and the formatters only (the page's module loads
matplotlib and jinja2; the command's table needs neither)."""

from __future__ import annotations

from rich.table import Table

from scalewise.formatting import pct, seconds


def summary_rows(summary: dict[str, dict[str, float]], changes: dict[str, dict[str, float]]) -> list[dict[str, str]]:
    """A row of text per source: ``summary`` a row per source, ``changes`` a row per network against the
    measured run (empty without one)."""
    rows = []
    for source, r in summary.items():
        e = changes.get(source)
        rows.append({"source": str(source), "wall time": seconds(r["wall_time"]),
                     "jobs/day": "∞" if r["jobs_per_day"] == float("inf") else f"{r['jobs_per_day']:,.0f}",
                     "MPI share": pct(r["mpi_share"] * 100), "compute (all ranks)": seconds(r["compute"]),
                     "MPI (all ranks)": seconds(r["mpi"]),
                     "wall change vs measured": "" if e is None else f"{e['wall_change'] * 100:+.1f}%",
                     "MPI share vs measured": "" if e is None else f"{e['mpi_share_points']:+.1f} pts"})
    return rows


def terminal_table(library: str, rows: list[dict[str, str]]) -> Table:
    t = Table(title=f"What-if, collectives as {library} runs them")
    for k in rows[0]:
        t.add_column(k, justify="left" if k == "source" else "right")
    for r in rows:
        t.add_row(*r.values())
    return t
