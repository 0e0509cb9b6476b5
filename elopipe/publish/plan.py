"""Which rating lists to publish after a run, and what an output folder already holds.

The rating stage rewrites every list from the first affected rating period on; on a first run
over twenty years of events that is some two hundred monthly lists. By default all of them are
published (`DEFAULT_MAX_LISTS` None). For large archives a limit keeps runs short: `select_dates`
then writes the `max_lists` most recent changed lists, plus any older changed list the output
folder already holds (so no published file is left stale); the others stay in the store. The output folder's
ledger, `.elopipe-published.json`, records which store published which list dates per system:

    {"db": "/abs/path/elopipe.duckdb",
     "systems": {"fide": ["2024-01-01", ...]},   # lists whose files are all written
     "pending": {"fide": ["2024-02-01", ...]},   # lists being written, or left by a failed publish
     "runs": {"fide": 12}}                        # last rating_runs.run_id whose lists were taken

A folder written from another store starts afresh. The ledger is written atomically, a list is
pending before its first file is written and published only after its last (`publish_recorded`),
so a publish stopped by a kill or a full disk is finished by the next one. A rating run the
folder has not seen (a `rate` on its own, or a `run` killed between rating and publishing) has
its lists published by the next `run` too (`missed_lists`).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

if TYPE_CHECKING:
    from elopipe.publish.gone_report import GoneLists

LEDGER = ".elopipe-published.json"
DEFAULT_MAX_LISTS: int | None = None  # every changed list


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
    """The ledger of `out`; empty when there is none, or when the file under its name is not one
    (`_foreign`: the user's, kept before a ledger is written there)."""
    ledger = out / LEDGER
    if ledger.exists() and not ledger.is_file():  # a FIFO would hang the read
        raise OSError(f"{ledger} is not a regular file; remove it")
    try:
        data = json.loads(ledger.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if _is_ledger(data) else {}


def _is_ledger(data: object) -> bool:
    """Whether `data` (a file's JSON) is a ledger of any elopipe version: it names a store."""
    return isinstance(data, dict) and isinstance(data.get("db") or data.get("stores"), (str, list))


def _write(out: Path, text: str, durable: bool = True) -> None:
    """Write the ledger; a file of the user's under its name (a link, text that is no ledger) is
    first kept under `.elopipe-kept/`, as any file of the user's under a name elopipe writes (it
    was written over in silence)."""
    # imported here: the rate flow imports this module, and needs none of the publish package
    from elopipe.publish.atomic import write_text
    from elopipe.publish.manifest import keep_users_file

    ledger = out / LEDGER
    if os.path.lexists(ledger) and not os.path.isdir(ledger) and not _is_ledger(_json_of(ledger)):
        keep_users_file(out, LEDGER)
    write_text(ledger, text, durable)


def _json_of(path: Path) -> object:
    if os.path.islink(path) or not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


_SECTIONS = ("systems", "pending", "runs")


def _ledger(out: Path, db: str | os.PathLike[str]) -> dict[str, dict[str, Any]]:
    """The ledger's sections of store `db` in `out` (empty when another store, or none, wrote it)."""
    data = _read(out)
    mine = data.get("db") == os.path.realpath(db)
    return {k: dict(data[k]) if mine and isinstance(data.get(k), dict) else {} for k in _SECTIONS}


def _stores(data: dict[str, Any]) -> list[str]:
    """Every store that has published into the folder, as the ledger `data` records them (a ledger
    written before they were recorded names the last one only)."""
    stores = data.get("stores")
    if isinstance(stores, list) and all(isinstance(s, str) for s in stores):
        return sorted(set(stores))
    return [data["db"]] if isinstance(data.get("db"), str) else []


def sole_store(out: Path, db: str | os.PathLike[str]) -> bool:
    """Whether store `db` is the only one that has ever published into `out` (its ledger says so).
    Only then may a publish remove files elopipe wrote there: another store's pages share its ids."""
    return _stores(_read(out)) == [os.path.realpath(db)]


def note_store(out: Path, db: str | os.PathLike[str]) -> None:
    """Record store `db` among those that have published into `out` (`sole_store`), the rest of
    the ledger as it is: a plain `publish`, which records no list there, still makes the folder
    this store's, so that a later publish may remove the files of lists the store no longer
    holds (`elopipe.publish.gone`). Writes nothing when the ledger already names it."""
    data = _read(out)
    me = os.path.realpath(db)
    stores = _stores(data)
    if me in stores:
        return
    out.mkdir(parents=True, exist_ok=True)
    _write(out, json.dumps({**data, "db": data.get("db", me), "stores": sorted({*stores, me})}, indent=1))


def _save(out: Path, db: str | os.PathLike[str], ledger: dict[str, dict[str, Any]], durable: bool = True) -> None:
    out.mkdir(parents=True, exist_ok=True)
    ledger["pending"] = {s: d for s, d in ledger["pending"].items() if d}
    me = os.path.realpath(db)
    before = _read(out)
    data = {"db": me, "stores": sorted({*_stores(before), me}), **ledger}
    if data == before:  # nothing new: the folder is left as it was
        return
    _write(out, json.dumps(data, indent=1), durable)


def _dates(values: list[str]) -> set[dt.date]:
    return {dt.date.fromisoformat(d) for d in values}


def published_dates(out: Path, db: str | os.PathLike[str], system: str) -> set[dt.date]:
    """List dates of `system` this folder holds, whole, from store `db` (empty if another store
    wrote it)."""
    return _dates(_ledger(out, db)["systems"].get(system, []))


def pending_dates(out: Path, db: str | os.PathLike[str], system: str) -> set[dt.date]:
    """List dates of `system` whose publishing from `db` into `out` began but did not finish
    (the process was killed, the disk was full, ...): the next publish writes them again."""
    return _dates(_ledger(out, db)["pending"].get(system, []))


def has_published(out: Path, db: str | os.PathLike[str], system: str) -> bool:
    """True once `db` has begun publishing lists of `system` into `out`."""
    ledger = _ledger(out, db)
    return system in ledger["systems"] or system in ledger["pending"]


def begin(out: Path, db: str | os.PathLike[str], system: str, dates: list[dt.date], run_id: int | None = None) -> None:
    """Record `dates` of `system` as being published, before any of their files is written:
    they are pending, and no longer published, until `remember` records them written. With
    `run_id`, the rating runs up to it are recorded as taken (their lists are in `dates`, or
    were held back on purpose)."""
    ledger = _ledger(out, db)
    todo = {d.isoformat() for d in dates}
    ledger["systems"][system] = sorted(set(ledger["systems"].get(system, [])) - todo)
    ledger["pending"][system] = sorted(set(ledger["pending"].get(system, [])) | todo)
    if run_id is not None:
        ledger["runs"][system] = run_id
    _save(out, db, ledger)


def remember(out: Path, db: str | os.PathLike[str], system: str, dates: list[dt.date], durable: bool = True) -> None:
    """Record `dates` of `system` as published, once all their files are written (a ledger of
    another store is replaced); they are no longer pending. Not `durable`: the ledger is not
    flushed to disk (a power cut may lose the record, and the lists are then written again)."""
    ledger = _ledger(out, db)
    done = {d.isoformat() for d in dates}
    ledger["systems"][system] = sorted(set(ledger["systems"].get(system, [])) | done)
    ledger["pending"][system] = sorted(set(ledger["pending"].get(system, [])) - done)
    _save(out, db, ledger, durable)


def defer(out: Path, db: str | os.PathLike[str], system: str, changed: list[dt.date], max_lists: int | None) -> int:
    """Record as pending in `out` the lists a publish of `changed` would write (`select_dates`),
    without writing a file: a run stopped after its rating leaves them to the next publish, which
    writes pending lists even when nothing changed (a new folder has no other record of them).
    Returns how many were recorded; a folder of another store's ledger, or none, gets one."""
    if not changed:
        return 0
    dates, _ = select_dates(changed, published_dates(out, db, system), max_lists)
    if dates:
        begin(out, db, system, dates)
    return len(dates)


def forget_pending(out: Path, db: str | os.PathLike[str], system: str, dates: set[dt.date]) -> None:
    """Drop `dates` from the pending lists of `system` (lists the store no longer holds)."""
    ledger = _ledger(out, db)
    ledger["pending"][system] = sorted(set(ledger["pending"].get(system, [])) - {d.isoformat() for d in dates})
    _save(out, db, ledger)


def forget_published(out: Path, db: str | os.PathLike[str], gone: GoneLists | None) -> None:
    """Drop from the published lists of `out` those `gone` says were removed from it (the store
    no longer holds them: `elopipe.publish.gone`); nothing when none was, or the folder is shared."""
    if gone is None or not gone.dates or not gone.removed:
        return
    ledger = _ledger(out, db)
    had = ledger["systems"].get(gone.system)
    if had is None:
        return
    left = sorted(set(had) - {d.isoformat() for d in gone.dates})
    if left != sorted(had):
        ledger["systems"][gone.system] = left
        _save(out, db, ledger)


def last_run(con: duckdb.DuckDBPyConnection, system: str) -> int | None:
    """The newest `rating_runs.run_id` of `system` (None: never rated)."""
    run_id: int | None = con.execute("SELECT max(run_id) FROM rating_runs WHERE system = ?", [system]).fetchall()[0][0]
    return run_id


def missed_lists(
    con: duckdb.DuckDBPyConnection, out: Path, db: str | os.PathLike[str], system: str, own_run: int | None
) -> list[dt.date]:
    """Stored lists of `system` rewritten by rating runs that `out` has not taken: runs after the
    ledger's `runs` mark other than `own_run` (the run whose changed lists the caller publishes
    anyway), within each run's first_list .. last_list. Empty when the ledger has no mark (a
    new folder, or one written before marks were kept)."""
    mark = _ledger(out, db)["runs"].get(system)
    if not isinstance(mark, int):
        return []
    rows = con.execute(
        """
        WITH l AS (SELECT DISTINCT list_date FROM rating_lists WHERE system = ?)
        SELECT DISTINCT l.list_date FROM l JOIN rating_runs r
          ON l.list_date BETWEEN r.first_list AND coalesce(r.last_list, r.first_list)
        WHERE r.system = ? AND r.run_id > ? AND r.run_id IS DISTINCT FROM ? ORDER BY 1
        """,
        [system, system, mark, own_run],
    ).fetchall()
    return [r[0] for r in rows]


def publish_recorded(
    con: duckdb.DuckDBPyConnection,
    db: str | os.PathLike[str],
    system: str,
    out: Path,
    dates: list[dt.date] | None,
    run_id: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[list[Path], list[dt.date]]:
    """Publish `system`'s outputs (elopipe.publish.outputs.publish_outputs) for `dates` (None: the
    latest list), plus every list an interrupted publish left pending in `out`, and keep the
    ledger true: the lists are recorded pending before any file is written, and each one
    published once its files are (the last after the index). A publish stopped by a kill or an
    error is thus finished by the next one, even when no list changed.

    `run_id`: the newest rating run whose lists `dates` cover (see `begin`); `progress` as in
    `publish_outputs`.
    Returns (paths written, the pending lists it finished that were not in `dates`). Raises
    LookupError when the system has no list, or none at one of `dates`; OSError when a file
    cannot be written (the lists not written stay pending). A pending list the store no longer
    holds is dropped.
    """
    from elopipe.publish.atomic import remove_stale
    from elopipe.publish.lists import list_dates, no_list
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
    unknown = sorted(set(dates) - known)
    if unknown:  # before anything is recorded: a list that does not exist is never pending
        raise no_list(system, unknown[0], known)
    todo = sorted(set(dates) | pending)
    if not todo:
        return [], []
    from elopipe.publish.manifest import recording

    sole = sole_store(out, db)  # before `begin` records this store
    ledger = _Ledger(out, db, system, todo, run_id)
    with recording(out) as manifest:
        # the lists are recorded pending only before the folder's first change (or as the publish
        # fails): one with nothing new writes no file, and leaves the ledger as it was too
        manifest.before_change = ledger.begin
        try:
            remove_stale(output_folders(out, system))
            paths = publish_outputs(con, system, out, todo, on_list=ledger.remember, progress=progress, sole_store=sole)
        except BaseException:
            ledger.stopped()
            raise
        finally:
            manifest.before_change = None
        ledger.end()
        forget_published(out, db, manifest.gone_lists.get(system))
    return paths, sorted(pending - set(dates))


class _Ledger:
    """The ledger's records of one `publish_recorded`: `begin` (the lists not yet whole are
    pending, the rating run `run_id` taken), called before the folder's first change, if any;
    `remember` as each list is whole; `stopped`, for a publish that fails or is stopped before its
    first change, records its unfinished lists pending all the same, for the next publish to finish;
    `end` records `run_id` when nothing changed. A lock keeps the worker that calls `begin` and the
    caller's `remember` from writing the ledger at once."""

    def __init__(self, out: Path, db: str | os.PathLike[str], system: str, todo: list[dt.date], run_id: int | None):
        self.out, self.db, self.system, self.todo, self.run_id = out, db, system, todo, run_id
        self.done: set[dt.date] = set()
        self.begun = False
        self._lock = threading.Lock()

    def begin(self) -> None:
        with self._lock:
            begin(self.out, self.db, self.system, [d for d in self.todo if d not in self.done], self.run_id)
            self.begun = True

    def remember(self, day: dt.date) -> None:
        # Only the last record is flushed to disk: each flush costs milliseconds, and a lost record
        # only makes a list pending again (kill -9 loses none: the page cache outlives the process).
        with self._lock:
            self.done.add(day)
            remember(self.out, self.db, self.system, [day], day == self.todo[-1])

    def stopped(self) -> None:
        if not self.begun:
            with contextlib.suppress(OSError):  # the error that stopped the publish is the one said
                self.begin()

    def end(self) -> None:
        with self._lock:
            if not self.begun and self.run_id is not None:
                begin(self.out, self.db, self.system, [], self.run_id)  # written only when it is news


@dataclass
class SystemPublish:
    """What `publish_changed` did for one system."""

    paths: list[Path] = field(default_factory=list)  # every file published (written, or found unchanged)
    resumed: list[dt.date] = field(default_factory=list)  # pending lists finished, not changed now
    missed: list[dt.date] = field(default_factory=list)  # lists of rating runs the folder had not taken
    held_back: int = 0  # changed lists left in the store only (max_lists)
    unchanged: bool = False  # nothing to write
    kept: int = 0  # files published again with the same content, left untouched (elopipe.publish.manifest)
    set_aside: list[tuple[str, str]] = field(default_factory=list)  # not elopipe's, kept first (manifest.KEPT)
    retired: list[str] = field(default_factory=list)  # removed: their event or player is gone (Manifest.retire)
    gone: GoneLists | None = None  # lists the folder held that the store no longer holds (elopipe.publish.gone)
    latest: dt.date | None = None  # the latest list published (None: nothing to write, `unchanged`)


def _listless(con: duckdb.DuckDBPyConnection, system: str, dates: set[dt.date]) -> set[dt.date]:
    """Of `dates` (none of them a list of `system`), those the rating computed with no list row:
    every player of the period still unrated, its rows all in rating_changes. There is nothing to
    publish for them, and they must not hold back the system's other lists; a date absent from
    both tables is left to `publish_recorded` to refuse."""
    if not dates:
        return set()
    rows = con.execute(
        "SELECT DISTINCT list_date FROM rating_changes WHERE system = ? AND list_date IN (SELECT unnest(?))",
        [system, sorted(dates)],
    ).fetchall()
    return {r[0] for r in rows}


def publish_changed(
    con: duckdb.DuckDBPyConnection,
    db: str | os.PathLike[str],
    system: str,
    out: Path,
    changed: list[dt.date] | None,
    max_lists: int | None = DEFAULT_MAX_LISTS,
    own_run: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> SystemPublish:
    """Publish `system`'s `changed` lists (None: the latest list) into `out`, with the lists of
    rating runs the folder has not taken (`missed_lists`; `own_run` is the run that produced
    `changed`) and those an interrupted publish left pending; `max_lists` as in `select_dates`;
    `progress` as in `publish_outputs`.
    A folder that has never received `system` gets its latest list even when nothing changed.
    Only the files whose content changed are written (elopipe.publish.manifest).
    Raises LookupError when the system has no list; OSError when a file cannot be written (the
    lists not written stay pending, and the next call writes them), or, before anything is
    written, when a folder it writes into is a symbolic link or not a folder (OutFolderError:
    `elopipe.publish.folders`)."""
    from elopipe.publish.folders import check_folders, publish_folders
    from elopipe.publish.lists import list_dates

    check_folders(out, publish_folders(system))
    newest = last_run(con, system)
    dates = None if changed is None else sorted(set(changed) | set(missed_lists(con, out, db, system, own_run)))
    if dates is not None:
        stored = list_dates(con, system)
        dates = sorted(set(dates) - _listless(con, system, set(dates) - set(stored)))
        if dates and stored and not has_published(out, db, system):
            # a folder that never received the system gets its latest list beside the changed
            # ones (an old list alone, or an empty one, left a new folder without the list in force)
            dates = sorted(set(dates) | {stored[-1]})
    missed = [] if dates is None or changed is None else sorted(set(dates) - set(changed))
    if dates is not None and not dates and not pending_dates(out, db, system):
        if has_published(out, db, system):
            if newest is not None and _ledger(out, db)["runs"].get(system) != newest:
                begin(out, db, system, [], newest)  # this run's own rating run is taken too
            return SystemPublish(unchanged=True, gone=_retire_gone(con, db, system, out, stored))
        dates = None  # a fresh output folder gets the latest list
    held_back = 0
    if dates is not None:
        # a pending list is being written again (`defer` recorded it): kept as a published one is
        held = published_dates(out, db, system) | pending_dates(out, db, system)
        dates, held_back = select_dates(dates, held, max_lists)
    from elopipe.publish.manifest import recording

    with recording(out) as manifest:
        run_id = newest if changed is not None else None
        paths, resumed = publish_recorded(con, db, system, out, dates, run_id, progress)
        paths = list(dict.fromkeys(paths))
        kept = sum(manifest.relative(p) not in manifest.changed for p in paths)
    gone = manifest.gone_lists.get(system)
    written = [*(list_dates(con, system)[-1:] if dates is None else dates), *resumed]
    return SystemPublish(
        paths,
        resumed,
        missed,
        held_back,
        kept=kept,
        set_aside=manifest.set_aside,
        retired=manifest.retired,
        gone=gone if gone is not None and gone.dates else None,
        latest=max(written) if written else None,
    )


def _retire_gone(
    con: duckdb.DuckDBPyConnection, db: str | os.PathLike[str], system: str, out: Path, stored: list[dt.date]
) -> GoneLists | None:
    """For a publish with no list to write: when the ledger records published lists of `system`
    that the store (`stored`) no longer holds, remove them from `out` (`elopipe.publish.gone`) and
    write the index again without them. The ledger is read first, so that a folder with nothing
    gone (every run with nothing new) costs no look at its manifest."""
    if not published_dates(out, db, system) - set(stored):
        return None
    from elopipe.publish.gone import retire_gone_lists
    from elopipe.publish.index import write_index
    from elopipe.publish.manifest import recording

    sole = sole_store(out, db)
    with recording(out) as manifest:
        manifest.removes = sole
        gone = retire_gone_lists(con, manifest, system)
        if gone.files and (out / f"index-{system}.html").exists():
            write_index(con, system, out)
    forget_published(out, db, gone)
    return gone if gone.dates else None
