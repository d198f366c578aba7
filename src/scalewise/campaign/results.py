"""Read a study's results database (docs/store.md) into :class:`StudyResults`.

The store (``campaign.store``) writes the database; this module is its
reader.  The database is opened read-only (``mode=ro``): reading results must
never change them, and a report may be written while a campaign is still
running.  Each run's profile log is read with the log reader and summed up
by the one-run analyses (``analysis.run.rows``); a profile that cannot be
read becomes a note on the results, not an error, so one bad log does not
hide the other results.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from scalewise.analysis.run.rows import run_functions, run_metrics, run_sizes
from scalewise.campaign.expand import expand
from scalewise.campaign.placement import placement
from scalewise.campaign.schema import DB_NAME, check_version
from scalewise.campaign.store import store_path
from scalewise.campaign.study import LoadedStudy, load_study
from scalewise.errors import ScalewiseError
from scalewise.logfile.reader import read_profile
from scalewise.model.runset import FUNCTION_COLUMNS, PROFILE_METRICS, SIZE_COLUMNS, STANDARD_SETTINGS, StudyResults

_STUDY_SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True)
class ResultsSource:
    """Where a study's results are, and its study file when one was given (parsed once, here)."""

    database: Path
    study: LoadedStudy | None = None

    @property
    def declared_power(self) -> tuple[float | None, float | None]:
        """(watts per node, price per kWh) the study file gives under ``report:`` (None where it does not)."""
        if self.study is None:
            return None, None
        r = self.study.model.report
        return r.watts_per_node, r.price_per_kwh

    @property
    def declared_base(self) -> dict[str, int]:
        """The scaling base the study file declares under ``report: base:`` (empty without a study file)."""
        return dict(self.study.model.report.base) if self.study is not None else {}

    def scaling_mode(self, results: StudyResults) -> str:
        """``strong`` or ``weak``: the study file's ``scaling:``, else what the last campaign recorded."""
        if self.study is not None:
            return self.study.model.scaling
        return results.info.get("scaling") or "strong"


def locate_results(path: str | Path) -> ResultsSource:
    """The results database of a study file, a study output folder, or the database itself."""
    p = Path(path)
    if not p.exists():
        raise ScalewiseError(f"{p}: no such file or folder")
    loaded = None
    if p.is_dir():
        db = p / DB_NAME
    elif p.suffix in _STUDY_SUFFIXES:
        loaded = load_study(p)
        db = store_path(loaded)
    else:
        db = p
    if not db.is_file():
        raise ScalewiseError(f"{path}: no results yet ({db} does not exist); run 'scalewise study run' first")
    return ResultsSource(db, loaded)


def _connect(db: Path) -> sqlite3.Connection:
    try:
        con = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
        con.execute("SELECT 1 FROM sqlite_master").fetchall()
    except sqlite3.DatabaseError as exc:
        raise ScalewiseError(f"{db}: not a scalewise results database ({exc})") from None
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if not {"schema_version", "runs", "run_settings"} <= tables:
        con.close()
        raise ScalewiseError(f"{db}: not a scalewise results database (no runs table)")
    version = con.execute("SELECT version FROM schema_version").fetchone()
    try:
        check_version(db, None if version is None else int(version[0]))
    except ScalewiseError:
        con.close()
        raise
    return con


def _runs_with_settings(con: sqlite3.Connection) -> tuple[pd.DataFrame, list[str]]:
    runs = pd.read_sql("SELECT * FROM runs ORDER BY position", con)
    settings = pd.read_sql("SELECT run_id, name, value FROM run_settings", con)
    custom = [n for n in dict.fromkeys(settings["name"]) if n not in STANDARD_SETTINGS]
    if custom:
        wide = settings[settings["name"].isin(custom)].pivot(index="run_id", columns="name", values="value")
        runs = runs.merge(wide[custom].reset_index(), on="run_id", how="left")
    if runs["ranks_per_node"].isna().all():
        runs = runs.drop(columns=["ranks_per_node"])
    runs["higher_is_better"] = runs["higher_is_better"].astype("boolean")
    names = [s for s in STANDARD_SETTINGS if s in runs] + custom
    return runs, names


def _attach_profiles(runs: pd.DataFrame, root: Path) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, list[str]]:
    metrics, functions, sizes, notes = [], [], [], []
    for run_id, rel in zip(runs["run_id"], runs["profile_path"]):
        row: dict[str, float] = {m: np.nan for m in PROFILE_METRICS}
        if isinstance(rel, str) and rel:
            path = root / rel
            try:
                profile = read_profile(path)
            except (ScalewiseError, OSError) as exc:
                notes.append(f"run {run_id}: profile {rel} could not be read ({exc}); its profile metrics are missing")
            else:
                row = run_metrics(profile)
                functions.append(run_functions(run_id, profile))
                sizes.append(run_sizes(run_id, profile))
        metrics.append(row)
    out = pd.concat([runs.reset_index(drop=True), pd.DataFrame(metrics, columns=PROFILE_METRICS)], axis=1)
    fn = pd.concat(functions, ignore_index=True) if functions else pd.DataFrame(columns=FUNCTION_COLUMNS)
    sz = pd.concat(sizes, ignore_index=True) if sizes else pd.DataFrame(columns=SIZE_COLUMNS)
    return out, fn, sz, notes


def _placement_and_staleness(runs: pd.DataFrame, sessions: pd.DataFrame, found: ResultsSource) -> pd.DataFrame:
    """Fill ``cores_per_node``, ``placed_per_node``, ``oversubscribed`` and ``stale`` for every run.

    Runs recorded before schema version 3 lack the placement: it is derived from
    their session's CPU count and ranks over nodes.  With a study file, a run
    is stale when the file no longer plans it (what ``study status`` counts);
    without one, as the last ``study run`` marked it.
    """
    runs = runs.copy()
    for col in ("cores_per_node", "placed_per_node", "oversubscribed"):
        if col not in runs:
            runs[col] = np.nan
    cpus = dict(zip(sessions.get("session_id", []), sessions.get("cpu_count", [])))
    fallback = next((int(c) for c in reversed(list(cpus.values())) if pd.notna(c)), None)
    rows = []
    for r in runs[["ranks", "nodes", "threads", "session_id", "cores_per_node", "placed_per_node"]].itertuples():
        known = (int(r.cores_per_node), int(r.placed_per_node)) if pd.notna(r.cores_per_node) else None
        host = cpus.get(r.session_id)
        rows.append(placement(int(r.ranks), int(r.nodes), int(r.threads), known,
                              int(host) if pd.notna(host) and host else fallback))
    placed = pd.DataFrame(rows, columns=["cores_per_node", "placed_per_node", "oversubscribed"], index=runs.index)
    runs[["cores_per_node", "placed_per_node"]] = placed[["cores_per_node", "placed_per_node"]].astype("Int64")
    recorded = runs["oversubscribed"]
    runs["oversubscribed"] = [bool(o) if pd.notna(o) else bool(p) for o, p in zip(recorded, placed["oversubscribed"])]
    if found.study is not None:
        planned = {r.run_id for r in expand(found.study)}
        runs["stale"] = ~runs["run_id"].isin(planned)
    else:
        runs["stale"] = runs["stale"].fillna(0).astype(bool) if "stale" in runs else False
    return runs


def read_results(source: str | Path | ResultsSource, profiles: bool = True, include_stale: bool = False) -> StudyResults:
    """Every run of the study with its settings, results, provenance and (optionally) profile metrics.

    Runs of points no longer in the study file are left out unless ``include_stale``
    (they stay in the database, marked ``stale``)."""
    found = source if isinstance(source, ResultsSource) else locate_results(source)
    db = found.database
    con = _connect(db)
    try:
        runs, settings = _runs_with_settings(con)
        info = dict(con.execute("SELECT key, value FROM study").fetchall())
        provenance = pd.read_sql("SELECT run_id, key, value FROM run_provenance ORDER BY run_id, key", con)
        sessions = pd.read_sql("SELECT * FROM sessions ORDER BY session_id", con)
        session_prov = pd.read_sql("SELECT session_id, key, value FROM session_provenance ORDER BY session_id, key", con)
    finally:
        con.close()
    runs = _placement_and_staleness(runs, sessions, found)
    if not include_stale:
        runs = runs[~runs["stale"]].reset_index(drop=True)
    root = db.parent
    notes: list[str] = []
    if profiles:
        runs, functions, sizes, notes = _attach_profiles(runs, root)
    else:
        runs = runs.assign(**{m: np.nan for m in PROFILE_METRICS})
        functions, sizes = pd.DataFrame(columns=FUNCTION_COLUMNS), pd.DataFrame(columns=SIZE_COLUMNS)
    # Stored paths are relative to the database's folder; absolute ones are easier to use.
    for col in ("profile_path", "stdout_path", "stderr_path"):
        runs[col] = [str(root / p) if isinstance(p, str) and p else None for p in runs[col]]
    return StudyResults(runs=runs, functions=functions, sizes=sizes, settings=tuple(settings),
                        name=info.get("name") or db.parent.name, info=info, provenance=provenance,
                        sessions=sessions, session_provenance=session_prov, source=str(db), notes=tuple(notes))
