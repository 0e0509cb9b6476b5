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


def _section(data: dict[str, Any], key: str) -> dict[str, list[str]]:
    part = data.get(key)
    return part if isinstance(part, dict) else {}


def _ledger(out: Path, db: str | os.PathLike[str]) -> tuple[dict[str, list[str]], dict[str, list[str]]] | None:
    """(published, pending) of `db` in `out`; None when another store (or none) wrote the ledger."""
    data = _read(out)
    if data.get("db") != os.path.realpath(db):
        return None
    return _section(data, "systems"), _section(data, "pending")


def _save(out: Path, db: str | os.PathLike[str], systems: dict[str, list[str]], pending: dict[str, list[str]]) -> None:
    # Imported here: the rate flow imports this module, and needs none of the publish package.
    from elopipe.publish.atomic import write_text

    out.mkdir(parents=True, exist_ok=True)
    pending = {s: d for s, d in pending.items() if d}
    data = {"db": os.path.realpath(db), "systems": systems, "pending": pending}
    write_text(out / LEDGER, json.dumps(data, indent=1))


def _dates(values: list[str]) -> set[dt.date]:
    return {dt.date.fromisoformat(d) for d in values}


def published_dates(out: Path, db: str | os.PathLike[str], system: str) -> set[dt.date]:
    """List dates of `system` this folder holds, whole, from store `db` (empty if another store
    wrote it)."""
    systems, _ = _ledger(out, db) or ({}, {})
    return _dates(systems.get(system, []))


def pending_dates(out: Path, db: str | os.PathLike[str], system: str) -> set[dt.date]:
    """List dates of `system` whose publishing from `db` into `out` began but did not finish
    (the process was killed, the disk was full, ...): the next publish writes them again."""
    _, pending = _ledger(out, db) or ({}, {})
    return _dates(pending.get(system, []))


def has_published(out: Path, db: str | os.PathLike[str], system: str) -> bool:
    """True once `db` has begun publishing lists of `system` into `out`."""
    systems, pending = _ledger(out, db) or ({}, {})
    return system in systems or system in pending


def begin(out: Path, db: str | os.PathLike[str], system: str, dates: list[dt.date]) -> None:
    """Record `dates` of `system` as being published, before any of their files is written:
    they are pending, and no longer published, until `remember` records them written."""
    systems, pending = _ledger(out, db) or ({}, {})
    todo = {d.isoformat() for d in dates}
    systems[system] = sorted(set(systems.get(system, [])) - todo)
    pending[system] = sorted(set(pending.get(system, [])) | todo)
    _save(out, db, systems, pending)


def remember(out: Path, db: str | os.PathLike[str], system: str, dates: list[dt.date]) -> None:
    """Record `dates` of `system` as published, once all their files are written (a ledger of
    another store is replaced); they are no longer pending."""
    systems, pending = _ledger(out, db) or ({}, {})
    done = {d.isoformat() for d in dates}
    systems[system] = sorted(set(systems.get(system, [])) | done)
    pending[system] = sorted(set(pending.get(system, [])) - done)
    _save(out, db, systems, pending)


def forget_pending(out: Path, db: str | os.PathLike[str], system: str, dates: set[dt.date]) -> None:
    """Drop `dates` from the pending lists of `system` (lists the store no longer holds)."""
    systems, pending = _ledger(out, db) or ({}, {})
    pending[system] = sorted(set(pending.get(system, [])) - {d.isoformat() for d in dates})
    _save(out, db, systems, pending)


def publish_recorded(
    con: duckdb.DuckDBPyConnection,
    db: str | os.PathLike[str],
    system: str,
    out: Path,
    dates: list[dt.date] | None,
) -> tuple[list[Path], list[dt.date]]:
    """Publish `system`'s outputs (elopipe.publish.outputs.publish_outputs) for `dates` (None: the
    latest list), plus every list an interrupted publish left pending in `out`, and keep the
    ledger true: the lists are recorded pending before any file is written, and each one
    published once its files are (the last after the index). A publish stopped by a kill or an
    error is thus finished by the next one, even when no list changed.

    Returns (paths written, the pending lists it finished that were not in `dates`). Raises
    LookupError when the system has no list and nothing is pending; OSError when a file cannot
    be written (the lists not written stay pending). A pending list the store no longer holds
    is dropped.
    """
    from elopipe.publish.atomic import remove_stale
    from elopipe.publish.lists import list_dates
    from elopipe.publish.outputs import output_folders, publish_outputs

    known = set(list_dates(con, system))
    pending = pending_dates(out, db, system)
    if pending - known:
        forget_pending(out, db, system, pending - known)
        pending &= known
    if dates is None:
        if not known:
            raise LookupError(f"no rating list for system {system!r} in the store")
        dates = [max(known)]
    todo = sorted(set(dates) | pending)
    if not todo:
        return [], []
    begin(out, db, system, todo)
    remove_stale(output_folders(out, system))
    paths = publish_outputs(con, system, out, todo, on_list=lambda d: remember(out, db, system, [d]))
    return paths, sorted(pending - set(dates))


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
