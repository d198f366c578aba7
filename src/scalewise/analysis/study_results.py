"""The results of a study analysis: one object holding every table, and the findings."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from scalewise.analysis.scaling import Scale
from scalewise.model.runset import Study


@dataclass(frozen=True)
class StudyFinding:
    kind: str  # failed | faster | noise | average | scaling | mpi-share | bound | dominant | growth | volume | energy
    text: str
    numbers: dict[str, Any]
    runs: tuple[str, ...]


@dataclass(frozen=True)
class StudyAnalysis:
    """Every study-level result, computed once."""

    study: Study
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
    findings: list[StudyFinding] = field(default_factory=list)

    def tables(self) -> dict[str, pd.DataFrame]:
        """The tables written by ``--csv`` / ``--parquet``, by file stem."""
        f = pd.DataFrame([{"kind": x.kind, "text": x.text, "runs": ",".join(x.runs)} for x in self.findings],
                         columns=["kind", "text", "runs"])
        return {"runs": self.study.runs, "run_functions": self.study.functions, "performance": self.summary,
                "scalability": self.scalability, "comparisons": self.comparisons, "average_gains": self.averages,
                "profile_scaling": self.profile, "function_scaling": self.functions, "comm_share": self.comm,
                "function_growth": self.growth, "energy": self.energy, "findings": f}


def ids(*joined: str) -> tuple[str, ...]:
    """Run IDs from comma-joined lists, in order, without repeats."""
    return tuple(dict.fromkeys(i for j in joined for i in str(j).split(",") if i))


def num(v: float) -> str:
    return f"{v:,.4g}" if abs(v) < 1e4 else f"{v:,.0f}"


def at(scale: Scale, value) -> str:
    """``4 ranks``, ``1 node``."""
    unit = scale.axis if value != 1 else scale.axis.rstrip("s")
    return f"{value} {unit}"


def series_label(row, keys: list[str]) -> str:
    """``app=sem mpi=openmpi``: the settings that tell a series apart."""
    return " ".join(f"{k}={row[k]}" for k in keys)
