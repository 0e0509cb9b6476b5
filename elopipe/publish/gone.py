"""Lists an output folder holds that the store no longer does, and their removal.

`rate` removes a stored list when no game is rated on it any more (a correction moved an event,
`--unknown-tc rapid` moved events to another system's list). The folder that published it still
holds its files, `lists/<system>_<date>.{csv,parquet,txt,html}`, and the reports and player pages
made only for it, and its index links them: an officer would see a list the rating says does not
exist. A publish therefore removes, for every list date of the system that the folder's manifest
records (`Manifest.inputs` key `list:<system>:<date>`, or a file `lists/<system>_<date>.<format>`
in `Manifest.entries`: a plain `publish --format csv` records only the latter) and that the store
no longer holds (`rating_lists`):

- the list's files in every format, as `Manifest.stale` removes files: only those elopipe wrote
  and nobody changed since (the user's own file, or elopipe's edited by hand, stays);
- the reports of the system's tournaments no list rates any more (no `tournament_ratings` row of
  the system) and the pages of its players on no list any more (no `rating_lists` row of it).

A list the store holds but this publish leaves out (`--lists N`) is not recorded gone: only dates
absent from the store are. Nothing is removed from a folder another store has published into too
(`Manifest.removes` False, `plan.sole_store`): the dates are only named (`GoneLists.line`).
"""

from __future__ import annotations

import datetime as dt

import duckdb

from elopipe.publish.gone_report import GoneLists
from elopipe.publish.lists import LIST_FORMATS
from elopipe.publish.manifest import Manifest


def recorded_lists(manifest: Manifest, system: str) -> dict[dt.date, set[str]]:
    """{list_date: the files (relative to the folder) the manifest records for it} of the lists
    of `system` the folder's manifest records (module docstring); a name edited by hand into
    something that is not a date is ignored."""
    found: dict[dt.date, set[str]] = {}
    prefix = f"list:{system}:"
    for key, (_, files) in list(manifest.inputs.items()):
        day = _date(key[len(prefix) :]) if key.startswith(prefix) else None
        if day is not None:
            found.setdefault(day, set()).update(files)
    folder = f"lists/{system}_"
    for rel in list(manifest.entries):
        if rel.startswith(folder):
            stem, dot, fmt = rel[len(folder) :].partition(".")
            day = _date(stem) if dot and fmt in LIST_FORMATS else None
            if day is not None:
                found.setdefault(day, set()).add(rel)
    return found


def retire_gone_lists(con: duckdb.DuckDBPyConnection, manifest: Manifest, system: str) -> GoneLists:
    """Find the lists of `system` the folder holds and the store does not (module docstring) and,
    when the folder is this store's alone (`manifest.removes`), remove their files and the reports
    and player pages of the system's events and players no list holds any more. The result is
    also kept in `manifest.gone_lists[system]` (merged with an earlier call of the same publish).
    One query for the store's list dates, one per kind of page, on the recorded ids only."""
    done = manifest.gone_lists.setdefault(system, GoneLists(system, removed=manifest.removes))
    recorded = recorded_lists(manifest, system)
    if not recorded:
        return done
    gone = set(recorded) - _held(con, system, sorted(recorded))
    if not gone:
        return done
    done.dates = sorted(gone | set(done.dates), reverse=True)
    if not manifest.removes:
        done.removed = False
        return done
    for day in sorted(gone):
        files = sorted(recorded[day] | set(manifest.drop(f"list:{system}:{day.isoformat()}")))
        removed = manifest.stale(files)
        done.files.extend(removed)
        done.left.extend(rel for rel in files if rel not in removed and (manifest.root / rel).exists())
    done.files.extend(_retire_unrated(con, manifest, system))
    return done


def _retire_unrated(con: duckdb.DuckDBPyConnection, manifest: Manifest, system: str) -> list[str]:
    """Remove the `system` reports the manifest records of tournaments no list of the system rates
    any more, and the player pages of players on no list of it: the pages made only for a list
    the store no longer holds. Returns the files removed."""
    removed: list[str] = []
    for kind, table, column in (
        ("report", "tournament_ratings", "tournament_id"),
        ("player", "rating_lists", "player_id"),
    ):
        ids = recorded_ids(manifest, kind, system)
        if not ids:
            continue
        held = con.execute(
            f"SELECT DISTINCT {column} FROM {table} WHERE system = ? AND {column} IN (SELECT unnest(?::BIGINT[]))",
            [system, sorted(ids)],
        ).fetchall()
        for gone in sorted(ids - {int(r[0]) for r in held}):
            removed.extend(manifest.stale(manifest.drop(f"{kind}:{system}:{gone}")))
    return removed


def _held(con: duckdb.DuckDBPyConnection, system: str, dates: list[dt.date]) -> set[dt.date]:
    """Of `dates`, the list dates of `system` the store holds (`rating_lists`): a look at those
    dates only, which the table's zone maps narrow, not at every list of the store."""
    rows = con.execute(
        "SELECT DISTINCT list_date FROM rating_lists WHERE system = ? AND list_date IN (SELECT unnest(?::DATE[]))",
        [system, dates],
    ).fetchall()
    return {r[0] for r in rows}


def recorded_ids(manifest: Manifest, kind: str, system: str) -> set[int]:
    """The ids of the `kind` ('report', 'player') pages of `system` the manifest records; a key
    edited by hand into something else (not ASCII digits, beyond a 32-bit id) is ignored."""
    prefix = f"{kind}:{system}:"
    tails = (k[len(prefix) :] for k in manifest.inputs if k.startswith(prefix))
    return {int(t) for t in tails if t.isascii() and t.isdigit() and len(t) <= 9}


def _date(text: str) -> dt.date | None:
    try:
        return dt.date.fromisoformat(text) if len(text) == 10 else None
    except ValueError:
        return None
