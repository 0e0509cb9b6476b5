"""The publish jobs: a system's lists (and, as `run` publishes them, reports and player pages)
into an output folder, two lists compared, and one system's changed lists for the `publish`
flow. Each owns its store connection."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from elopipe.jobs.requests import DiffRequest, PublishRequest
from elopipe.jobs.store import wait_for_writer

if TYPE_CHECKING:
    import polars as pl

    from elopipe.publish.gone_report import GoneLists
    from elopipe.publish.plan import SystemPublish

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Published:
    """What `publish_lists` wrote: the files whose content changed, in order; how many it found
    unchanged (`kept`, not rewritten); the lists of an interrupted publish it finished; the files
    elopipe had not written that it kept under `.elopipe-kept/` before writing their names
    ((name, kept as), relative to the folder: `elopipe.publish.manifest`); the files it removed
    because the store no longer holds their event or player (`retired`); the latest list written
    and the pairs of its players suspected to be one person (`publish.list_suspects`); the lists
    the folder held that the store no longer holds (`publish.gone`; None: none)."""

    paths: list[Path]
    kept: int
    resumed: list[dt.date]
    set_aside: list[tuple[str, str]]
    retired: list[str]
    latest: dt.date
    suspects: list[tuple[str, str]]
    gone: GoneLists | None = None


def publish_lists(
    request: PublishRequest, progress: Progress | None = None, on_wait: Callable[[str], None] | None = None
) -> Published:
    """Publish `request.system`'s lists (`PublishRequest`) on a read-only connection, after
    waiting up to `request.wait` seconds for a process writing the store; a publish left pending
    by a kill or a full disk is finished first (with `full`, in the same pass as the lists asked
    for); a file whose content is unchanged is not rewritten (`elopipe.publish.manifest`).
    `progress(done, total)` hears how far a full publish is, `on_wait` of a writer. Raises
    OutFolderError (`elopipe.publish.folders`: exit 2) before anything is read or written when a
    folder it writes into inside `request.out` is a symbolic link or not a folder; LookupError
    when the system has no list (or none of a date asked for), ValueError for a bad list, OSError
    when a file cannot be written."""
    from elopipe.publish import write_list
    from elopipe.publish.folders import check_folders, publish_folders
    from elopipe.publish.gone import retire_gone_lists
    from elopipe.publish.index import write_index
    from elopipe.publish.list_suspects import list_suspects
    from elopipe.publish.lists import list_dates, no_list
    from elopipe.publish.manifest import recording
    from elopipe.publish.outputs import player_page_links
    from elopipe.publish.plan import forget_published, note_store, publish_recorded, sole_store
    from elopipe.store.connect import open_reader

    db, system, out = request.db, request.system, request.out
    check_folders(out, publish_folders(system))
    wait_for_writer(db, request.wait, on_wait or _ignore)  # an ingest or a run may be writing
    con = open_reader(db)
    try:
        known = list_dates(con, system)  # read once: the dates asked for are checked against them
        dates = list(request.dates) if request.dates is not None else None
        if request.all_lists:
            dates = known
        if dates is None:
            dates = known[-1:]
        if not dates:
            raise LookupError(f"no rating list for system {system} in {db}")
        for d in dates:  # before the folder is touched: a refused date leaves no lock or ledger there
            if d not in known:
                raise no_list(system, d, known)
        with recording(out) as manifest:  # the folder's lock held: the ledger read and written in turn
            # a plain publish may remove lists from a folder only this store published into, as
            # the ledger says before this publish records the store there (a full one: `plan`)
            sole = not request.full and sole_store(out, db)
            if not request.full:
                note_store(out, db)
            paths, resumed = publish_recorded(con, db, system, out, dates if request.full else [], progress=progress)
            if not request.full:  # the player pages a full publish wrote stay linked from the list page
                links = player_page_links(out, system)
                for d in dates:
                    paths.extend(write_list(con, system, d, out / "lists", list(request.formats), links))
                manifest.removes = sole
                gone = retire_gone_lists(con, manifest, system)
                if gone.files and (out / f"index-{system}.html").exists():
                    paths.append(write_index(con, system, out))  # it must no longer link them
                forget_published(out, db, gone)
        suspected = list_suspects(con, system, dates[-1])
    finally:
        con.close()
    paths = list(dict.fromkeys(paths))
    changed = [p for p in paths if manifest.relative(p) in manifest.changed]
    found = manifest.gone_lists.get(system)
    return Published(
        changed,
        len(paths) - len(changed),
        resumed,
        manifest.set_aside,
        manifest.retired,
        dates[-1],
        suspected,
        found if found is not None and found.dates else None,
    )


def needs_store(diff: tuple[str, str]) -> bool:
    """Whether a `--diff` names a list date of the store (else two published files)."""
    from elopipe.publish.diff import list_date_ref

    return any(list_date_ref(ref) is not None for ref in diff)


@dataclass(frozen=True)
class Diff:
    """Two lists compared (`elopipe.publish.diff.diff_lists`: one row per player, its `status`),
    the CSV it was written to, and the file elopipe had not written that was under its name,
    kept under `.elopipe-kept/` first ((name, kept as), relative to the output folder:
    `elopipe.publish.manifest`)."""

    frame: pl.DataFrame
    path: Path
    set_aside: list[tuple[str, str]]


def diff_lists(request: DiffRequest, on_wait: Callable[[str], None] | None = None) -> Diff:
    """Compare two lists (`DiffRequest`), reading the store (read-only) only when a side is one
    of its list dates, and write the differences as CSV into `request.out`, through its manifest
    (`manifest.protecting`: a user's file under that name is kept). Raises LookupError or
    ValueError for a list that is not there."""
    from elopipe.publish.csvsafe import write_csv
    from elopipe.publish.diff import diff_file_name
    from elopipe.publish.diff import diff_lists as compare_lists
    from elopipe.publish.manifest import protecting
    from elopipe.store.connect import open_reader

    con = None
    if needs_store((request.ref_a, request.ref_b)):
        wait_for_writer(request.db, request.wait, on_wait or _ignore)
        con = open_reader(request.db)
    try:
        df = compare_lists(con, request.system, request.ref_a, request.ref_b)
    finally:
        if con is not None:
            con.close()
    path = request.out / diff_file_name(request.system, request.ref_a, request.ref_b)
    with protecting(request.out) as manifest:
        write_csv(df, path)
    return Diff(df, path, manifest.set_aside)


def publish_changed(
    db: str,
    system: str,
    out: str,
    changed: list[dt.date] | None,
    max_lists: int | None,
    own_run: int | None,
    progress: Progress | None = None,
) -> SystemPublish:
    """One system's part of the `publish` flow (`elopipe.publish.plan.publish_changed`). A writer
    connection, not a reader: inside `pipeline` this process already holds the store's lock,
    and DuckDB refuses a read-only connection next to a read-write one. Raises LookupError
    when the system has no list, or none at one of `changed`; OSError when a file cannot be
    written."""
    from elopipe.publish import plan as publish_plan
    from elopipe.store.connect import open_writer

    with open_writer(db, existing=True) as con:
        return publish_plan.publish_changed(con, db, system, Path(out), changed, max_lists, own_run, progress=progress)


def suspects_on_lists(db: str, lists: dict[str, dt.date]) -> dict[str, list[tuple[str, str]]]:
    """For the `publish` flow: the pairs of players suspected to be one person on each list of
    `lists` (system -> the latest list it published; `publish.list_suspects.lists_suspects`, as
    `publish_lists` says them), a system with none absent; nothing read when `lists` is empty.
    A writer connection, as `publish_changed`: the pipeline holds the store's lock."""
    if not lists:
        return {}
    from elopipe.publish.list_suspects import lists_suspects
    from elopipe.store.connect import open_writer

    with open_writer(db, existing=True) as con:
        return lists_suspects(con, lists)


def _ignore(_message: str) -> None:
    pass
