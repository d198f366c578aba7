"""The study's tables as files: CSV or Parquet, one per table of :meth:`StudyAnalysis.tables`."""

from __future__ import annotations

from pathlib import Path

from scalewise.analysis.study.study_analysis import StudyAnalysis
from scalewise.errors import ScalewiseError


def write_tables(a: StudyAnalysis, directory: str | Path, fmt: str) -> list[Path]:
    """Every table of :meth:`StudyAnalysis.tables` as ``<name>.csv`` or ``<name>.parquet``."""
    d = Path(directory)
    if d.exists() and not d.is_dir():
        raise ScalewiseError(f"{d}: exists and is not a folder")
    d.mkdir(parents=True, exist_ok=True)
    written = []
    for name, frame in a.tables().items():
        path = d / f"{name}.{fmt}"
        if fmt == "csv":
            frame.to_csv(path, index=False)
        else:
            # Object columns may mix ints and strings (custom axes); Parquet wants one type per column.
            mixed = [c for c in frame.columns if frame[c].dtype == object]
            frame.astype({c: "string" for c in mixed}).to_parquet(path, index=False)
        written.append(path)
    return written
