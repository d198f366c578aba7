"""The results of a study analysis: one object holding every table, and the findings."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from scalewise.analysis.finding import Finding
from scalewise.analysis.study.scaling import Scale
from scalewise.model.runset import StudyResults

@dataclass(frozen=True)
class StudyAnalysis:
    """Every study-level result, computed once."""

    study: StudyResults
    metric: str
    base: dict | None
    swept: list[str]
    scale: Scale
    perf: pd.DataFrame  # one row per ok run
    summary: pd.DataFrame  # one row per configuration
    scalability: pd.DataFrame
    comparisons: pd.DataFrame
    averages: pd.DataFrame
    profile: pd.DataFrame  # profile metrics per configuration
    functions: pd.DataFrame  # per configuration x function
    comm: pd.DataFrame  # P8
    growth: pd.DataFrame  # P7
    energy: pd.DataFrame
    failed: pd.DataFrame
    watts_per_node: float
    price_per_kwh: float
    top_functions: list[str]  # the busiest MPI functions over the whole study, busiest first
    setup: list[tuple[str, str]]  # what ran, where, with what: (label, value) in display order
    axes: list[tuple[str, str]]  # every setting with the values it took
    scaling_mode: str = "strong"  # strong: the same problem on more ranks; weak: the problem grows with them
    include_oversubscribed: bool = False  # findings may come from runs that shared cores (each then says so)
    power_given: bool = False  # the user gave the node power: energy is a finding, not only an assumption
    findings: list[Finding] = field(default_factory=list)
    tuning: pd.DataFrame = field(default_factory=pd.DataFrame)  # B3: each parameter set against the default
    pop: pd.DataFrame = field(default_factory=pd.DataFrame)  # POP efficiencies per configuration (study/pop_table.py)

    def tables(self) -> dict[str, pd.DataFrame]:
        """The tables written by ``--csv`` / ``--parquet``, by file stem."""
        f = pd.DataFrame([{"kind": x.kind, "text": x.text, "runs": ",".join(x.runs)} for x in self.findings],
                         columns=["kind", "text", "runs"])
        tables = {"runs": self.study.runs, "run_functions": self.study.functions, "performance": self.summary,
                  "scalability": self.scalability, "comparisons": self.comparisons, "average_gains": self.averages,
                  "profile_scaling": self.profile, "function_scaling": self.functions, "comm_share": self.comm,
                  "function_growth": self.growth, "energy": self.energy, "tuning": self.tuning, "pop": self.pop,
                  "findings": f}
        # The repetitions' values ride along for the noise rule; the run IDs name them in a table.
        return {k: v.drop(columns=["values"], errors="ignore") for k, v in tables.items()}

    def to_json_dict(self) -> dict:
        """``scalewise study report --json``: the findings with their numbers, and the tables ``--csv`` writes,
        as records (docs/json-schema.md)."""
        return {"name": self.study.name, "metric": self.metric, "base": self.base, "swept": self.swept,
                "findings": [f.to_json() for f in self.findings],
                "tables": {stem: table.to_dict("records") for stem, table in self.tables().items()
                           if stem != "findings"}}


def trusted(a: StudyAnalysis, frame: pd.DataFrame) -> pd.DataFrame:
    """The rows findings may be drawn from: oversubscribed ones only when the user opted in."""
    if a.include_oversubscribed or "oversubscribed" not in frame:
        return frame
    return frame[~frame["oversubscribed"].astype(bool)]


def ids(*joined: str) -> tuple[str, ...]:
    """Run IDs from comma-joined lists, in order, without repeats."""
    return tuple(dict.fromkeys(i for j in joined for i in str(j).split(",") if i))


def at(scale: Scale, value) -> str:
    """``4 ranks``, ``1 node``."""
    unit = scale.axis if value != 1 else scale.axis.rstrip("s")
    return f"{value} {unit}"
