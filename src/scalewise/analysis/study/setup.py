"""The set-up of a study, as the studies' "test cluster configuration" slide: what ran, where, with what.

Each entry is (label, value) in display order.  Values that differ between
sessions or runs (two MPI versions, two hosts) are listed together.
"""

from __future__ import annotations

import pandas as pd

from scalewise.model.runset import StudyResults


def _distinct(values) -> str:
    seen = [str(v) for v in dict.fromkeys(values) if v is not None and not (isinstance(v, float) and pd.isna(v))]
    return "; ".join(seen) if seen else "unknown"


def setup_rows(study: StudyResults) -> list[tuple[str, str]]:
    """Hardware, software and provenance of the study, for the set-up section."""
    s, sp, rp, runs = study.sessions, study.session_provenance, study.provenance, study.runs
    rows: list[tuple[str, str]] = [("study", study.name)]
    if study.info.get("description"):
        rows.append(("description", study.info["description"]))
    if not s.empty:
        rows += [("hosts (campaign)", _distinct(s["hostname"])),
                 ("CPU", _distinct(f"{m} ({c} CPUs)" for m, c in zip(s["cpu_model"], s["cpu_count"]))),
                 ("kernel", _distinct(s["kernel"])), ("scheduler", _distinct(s["scheduler"])),
                 ("scalewise", _distinct(s["scalewise_version"])),
                 ("campaign sessions", f"{len(s)}, from {s['started_at'].min()} to "
                                       f"{s['ended_at'].dropna().max() if s['ended_at'].notna().any() else 'unfinished'}")]
    hosts = runs["hosts"].dropna()
    if not hosts.empty:
        rows.append(("hosts (runs)", _distinct(h for v in hosts for h in str(v).split(","))))
    for key in ("os", "python"):
        if (sp["key"] == key).any():
            rows.append((key, _distinct(sp.loc[sp["key"] == key, "value"])))
    for mpi in sorted(runs["mpi"].dropna().unique()):
        ver = rp.loc[(rp["key"] == "mpi_version") & rp["run_id"].isin(runs.loc[runs["mpi"] == mpi, "run_id"]), "value"]
        if ver.empty:
            ver = sp.loc[sp["key"] == f"mpi.{mpi}.version", "value"]
        rows.append((f"MPI: {mpi}", _distinct(ver)))
        comp = rp.loc[(rp["key"] == "compiler") & rp["run_id"].isin(runs.loc[runs["mpi"] == mpi, "run_id"]), "value"]
        if not comp.empty:
            rows.append((f"compiler ({mpi})", _distinct(comp)))
    for key, label in (("flags", "build flags"), ("binary_sha256", "binaries (sha256)")):
        vals = rp.loc[rp["key"] == key, "value"]
        if not vals.empty:
            rows.append((label, _distinct(v[:16] if key == "binary_sha256" else v for v in vals)))
    if study.info.get("study_sha256"):
        rows.append(("study file", f"{study.info.get('study_path', '?')} (sha256 {study.info['study_sha256'][:16]})"))
    rows.append(("results", str(study.source)))
    return rows


def axes_rows(study: StudyResults) -> list[tuple[str, str]]:
    """Every setting with the values it took, swept ones first."""
    runs = study.runs
    order = study.swept + [s for s in study.settings if s not in study.swept and s in runs]
    out = [(s, ", ".join(str(v) for v in sorted(runs[s].dropna().unique(), key=_sort_key))) for s in order]
    out.append(("repetitions", str(int(runs["repetition"].max()) + 1 if not runs.empty else 0)))
    counts = runs["status"].value_counts()
    out.append(("runs", f"{len(runs)}: " + ", ".join(f"{n} {s}" for s, n in counts.items())))
    return out


def _sort_key(v):
    return (0, float(v), "") if isinstance(v, (int, float)) else (1, 0.0, str(v))
