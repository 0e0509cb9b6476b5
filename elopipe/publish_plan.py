"""Which rating lists to publish after a run, and what an output folder already holds.

The rating stage rewrites every list from the first affected rating period on; on a first run
over twenty years of events that is some two hundred monthly lists. By default all of them are
published (`DEFAULT_MAX_LISTS` None). For large archives a limit keeps runs short: `select_dates`
then writes the `max_lists` most recent changed lists, plus any older changed list the output
folder already holds (so no published file is left stale); the others stay in the store. The output folder's
ledger, `.elopipe-published.json`, records which store published which list dates per system:

    {"db": "/abs/path/elopipe.duckdb", "systems": {"fide": ["2024-01-01", ...]}}

A folder written from another store starts afresh.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path
from typing import Any

import duckdb

LEDGER = ".elopipe-published.json"
DEFAULT_MAX_LISTS: int | None = None  # every changed list


def changed_list_dates(con: duckdb.DuckDBPyConnection, system: str, first_changed: dt.date | None) -> list[dt.date]:
    """The stored list dates of `system` from `first_changed` (RateSummary.first_changed; None:
    nothing changed) on, sorted."""
    if first_changed is None:
        return []
    rows = con.execute(
        "SELECT DISTINCT list_date FROM rating_lists WHERE system = ? AND list_date >= ? ORDER BY 1",
        [system, first_changed],
    ).fetchall()
    return [r[0] for r in rows]


def select_dates(changed: list[dt.date], published: set[dt.date], max_lists: int | None) -> tuple[list[dt.date], int]:
    """The changed lists to write: the `max_lists` most recent (None: all), plus every older one
    in `published`. Returns (dates sorted, how many changed lists were left out)."""
    ordered = sorted(set(changed))
    if max_lists is None or len(ordered) <= max_lists:
        return ordered, 0
    recent = set(ordered[-max_lists:]) if max_lists > 0 else set()
    keep = sorted(d for d in ordered if d in recent or d in published)
    return keep, len(ordered) - len(keep)


def _read(out: Path) -> dict[str, Any]:
    try:
        data = json.loads((out / LEDGER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _systems(out: Path, db: str | os.PathLike[str]) -> dict[str, list[str]] | None:
    data = _read(out)
    if data.get("db") != os.path.realpath(db):
        return None
    systems = data.get("systems")
    return systems if isinstance(systems, dict) else {}


def published_dates(out: Path, db: str | os.PathLike[str], system: str) -> set[dt.date]:
    """List dates of `system` this folder holds from store `db` (empty if another store wrote it)."""
    systems = _systems(out, db) or {}
    return {dt.date.fromisoformat(d) for d in systems.get(system, [])}


def has_published(out: Path, db: str | os.PathLike[str], system: str) -> bool:
    """True once `db` has published any list of `system` into `out`."""
    return system in (_systems(out, db) or {})


def remember(out: Path, db: str | os.PathLike[str], system: str, dates: list[dt.date]) -> None:
    """Add `dates` of `system` to the folder's ledger (replacing a ledger of another store)."""
    systems = _systems(out, db)
    if systems is None:
        systems = {}
    known = set(systems.get(system, []))
    systems[system] = sorted(known | {d.isoformat() for d in dates})
    out.mkdir(parents=True, exist_ok=True)
    (out / LEDGER).write_text(json.dumps({"db": os.path.realpath(db), "systems": systems}, indent=1), encoding="utf-8")


def dates_in_paths(paths: list[Path], system: str) -> list[dt.date]:
    """List dates from list file names '<system>_<YYYY-MM-DD>.<ext>' (elopipe.publish.outputs)."""
    out = set()
    for p in paths:
        stem = p.name.split(".", 1)[0]
        if stem.startswith(system + "_"):
            try:
                out.add(dt.date.fromisoformat(stem[len(system) + 1 :]))
            except ValueError:
                pass
    return sorted(out)
