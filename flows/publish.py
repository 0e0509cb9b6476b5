"""`publish` flow: write lists and reports (elopipe.publish.publish_outputs) for changed lists.

Which lists: those the rating stage reports as changed, limited to the `max_lists` most recent
ones, plus any older changed list that this output folder already holds (so no published file is
left stale). A first run over twenty years of events thus writes the last year of monthly lists,
not two hundred; the older ones stay in the store (`--lists all`, or `elopipe publish`). An output
folder that has never received this store's lists for a system gets its latest list even when
nothing changed, so a new `--out` is never left empty. `.elopipe-published.json` in the output
folder records what was published from which store.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from elopipe.store import DEFAULT_DB, open_writer
from flows._stages import stage_line, stage_warning

MARKER = ".elopipe-published.json"
DEFAULT_MAX_LISTS = 12


def select_dates(changed: list[dt.date], published: set[dt.date], max_lists: int | None) -> tuple[list[dt.date], int]:
    """The changed lists to write: the `max_lists` most recent, plus every older one already
    published here. Returns (dates sorted, how many changed lists were left out)."""
    ordered = sorted(set(changed))
    if max_lists is None or len(ordered) <= max_lists:
        return ordered, 0
    recent = set(ordered[-max_lists:]) if max_lists > 0 else set()
    keep = sorted(d for d in ordered if d in recent or d in published)
    return keep, len(ordered) - len(keep)


def _marker(out: Path) -> dict[str, object]:
    try:
        return json.loads((out / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _published_dates(out: Path, db: str, system: str) -> set[dt.date]:
    data = _marker(out)
    if data.get("db") != os.path.realpath(db):
        return set()
    return {dt.date.fromisoformat(d) for d in data.get("systems", {}).get(system, [])}  # type: ignore[union-attr]


def _already_published(out: Path, db: str, system: str) -> bool:
    data = _marker(out)
    return data.get("db") == os.path.realpath(db) and system in data.get("systems", {})


def _remember(out: Path, db: str, system: str, dates: list[dt.date]) -> None:
    data = _marker(out)
    if data.get("db") != os.path.realpath(db):
        data = {"db": os.path.realpath(db), "systems": {}}
    systems = data.setdefault("systems", {})
    known = set(systems.get(system, []))  # type: ignore[union-attr]
    systems[system] = sorted(known | {d.isoformat() for d in dates})  # type: ignore[index]
    out.mkdir(parents=True, exist_ok=True)
    (out / MARKER).write_text(json.dumps(data, indent=1), encoding="utf-8")


@task(name="publish_system", task_run_name="publish {system}", cache_policy=NO_CACHE, persist_result=False)
def publish_system(db: str, system: str, out: str, list_dates: list[dt.date] | None) -> list[Path]:
    """Write `system`'s outputs for `list_dates` (None: the latest list) into `out`."""
    from elopipe.publish.outputs import publish_outputs

    # A writer connection, not a reader: inside `pipeline` this process already holds the
    # store's lock, and DuckDB refuses a read-only connection next to a read-write one.
    with open_writer(db) as con:
        return publish_outputs(con, system, out, list_dates=list_dates)


@flow(name="publish", validate_parameters=False)
def publish(
    db: str | os.PathLike[str] = DEFAULT_DB,
    systems: list[str] | tuple[str, ...] = ("fide",),
    out: str | os.PathLike[str] = "out",
    changed: dict[str, list[dt.date]] | None = None,
    max_lists: int | None = DEFAULT_MAX_LISTS,
) -> list[Path]:
    """Publish each system's changed lists (`changed`, from rate_lists; None: the latest list of
    each system) to `out`; see the module docstring for `max_lists` (None: no limit). A system
    with no list at all is reported and skipped, not an error."""
    db_s, out_p = os.fspath(db), Path(out)
    written: list[Path] = []
    notes = []
    for system in systems:
        dates = None if changed is None else list(changed.get(system, []))
        if dates is not None and not dates:
            if _already_published(out_p, db_s, system):
                notes.append(f"{system}: unchanged")
                continue
            dates = None  # a fresh output folder gets the latest list
        held_back = 0
        if dates is not None:
            dates, held_back = select_dates(dates, _published_dates(out_p, db_s, system), max_lists)
        if held_back:
            notes.append(f"{system}: {held_back} older changed lists kept in the store only")
        try:
            paths = publish_system(db_s, system, os.fspath(out_p), dates)
        except LookupError as exc:
            stage_warning("publish", f"{system}: {exc}")
            notes.append(f"{system}: no list")
            continue
        _remember(out_p, db_s, system, dates or _dates_in(paths, system))
        written.extend(paths)
        notes.append(f"{system}: {len(paths)} files")
    stage_line("publish", f"{'; '.join(notes)} -> {out_p}")
    return written


def _dates_in(paths: list[Path], system: str) -> list[dt.date]:
    """List dates from the written list files' names ('<system>_<YYYY-MM-DD>.<ext>')."""
    out = set()
    for p in paths:
        stem = p.name.split(".", 1)[0]
        if stem.startswith(system + "_"):
            try:
                out.add(dt.date.fromisoformat(stem[len(system) + 1 :]))
            except ValueError:
                pass
    return sorted(out)
