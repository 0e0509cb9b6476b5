"""Writing lists in every format, and everything at once (`publish_outputs`)."""

from __future__ import annotations

import concurrent.futures as cf
import datetime as dt
import io
import os
import re
from collections.abc import Callable
from pathlib import Path

import duckdb
import polars as pl

from elopipe.publish.atomic import write_bytes, write_text
from elopipe.publish.csvsafe import write_csv
from elopipe.publish.fidetxt import DECIMAL_RATING_WIDTH, write_fide_txt
from elopipe.publish.gone import recorded_ids, retire_gone_lists
from elopipe.publish.history import write_player_page
from elopipe.publish.index import TOP_INDEX, write_index
from elopipe.publish.inputs import list_digests, player_digests, report_digests
from elopipe.publish.list_html import list_html
from elopipe.publish.lists import LIST_COLUMNS, LIST_FORMATS, keeps_decimal, list_dates, published, rating_list
from elopipe.publish.manifest import Manifest, recording
from elopipe.publish.report_rows import ReportRows, fetch_report_rows
from elopipe.publish.reports import tournaments_by_list, write_report
from elopipe.publish.workers import Ticker, Workers, default_workers

TOP_PLAYERS = 10
# the player pages' chart: SVG from a template costs a few ms where matplotlib's PNG costs some 95
# (bench/publish_chart.py); a folder's PNGs of earlier publishes go when their pages are made again
PLAYER_CHART = "svg"


def list_stem(system: str, list_date: dt.date) -> str:
    """File-name stem of a list: '<system>_<YYYY-MM-DD>'."""
    return f"{system}_{list_date.isoformat()}"


def write_list(
    con: duckdb.DuckDBPyConnection,
    system: str,
    list_date: dt.date,
    out_dir: Path,
    formats: tuple[str, ...] | list[str] = LIST_FORMATS,
    player_links: dict[int, str] | None = None,
) -> list[Path]:
    """Write the list of `system` at `list_date` into `out_dir` in `formats`.

    csv/parquet hold `lists.LIST_COLUMNS` plus player_id (`k` the K used in the period, `k_next` the
    next period's, the TXT's K), ranked section first, then the players
    without the list's ID (flagged, no rank); txt is FIDE's fixed-width layout (`fidetxt`), which
    on a FIDE list holds the players with a FIDE ID only; html is a standalone page with filters
    (`list_html`). The generic Elo's lists give rating and change to the one decimal it keeps
    (`lists.published`); the others integers. `player_links` maps
    player_id to a relative href for the HTML. Raises ValueError for an unknown format and
    LookupError for a missing list.
    """
    bad = set(formats) - set(LIST_FORMATS)
    if bad:
        raise ValueError(f"unknown list format(s) {sorted(bad)}; choose from {LIST_FORMATS}")
    df = published(rating_list(con, system, list_date), system)
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = list_stem(system, list_date)
    table = df.select([*LIST_COLUMNS, "player_id"])
    paths: list[Path] = []
    for fmt in formats:
        path = out_dir / f"{stem}.{fmt}"
        if fmt == "csv":
            write_csv(table, path)
        elif fmt == "parquet":
            buf = io.BytesIO()
            table.write_parquet(buf)
            write_bytes(path, buf.getvalue())
        elif fmt == "txt":
            # FIDE's file is keyed by FIDE ID: the players without one are in the other formats
            width = DECIMAL_RATING_WIDTH if keeps_decimal(system) else 6
            write_fide_txt(df.filter(~pl.col.no_id) if system.startswith("fide") else df, list_date, path, width)
        else:
            write_text(path, list_html(df, system, list_date, player_links))
        paths.append(path)
    return paths


def publish_outputs(
    con: duckdb.DuckDBPyConnection,
    system: str,
    out_dir: str | os.PathLike[str],
    list_dates: list[dt.date] | None = None,
    on_list: Callable[[dt.date], None] | None = None,
    progress: Callable[[int, int], None] | None = None,
    workers: int | None = None,
    sole_store: bool = True,
) -> list[Path]:
    """Write the lists of `system` for `list_dates` (None = the latest list) in every format,
    a report for every tournament rated on those lists, and history pages with charts for
    the top players (the `TOP_PLAYERS` highest rated of each list), plus the indexes.

    Layout under `out_dir`: `lists/<system>_<date>.{csv,parquet,txt,html}`,
    `reports/<system>/<id>_<name>.{players.csv,games.csv,crosstable.csv,html}`,
    `players/<system>/<id>_<name>.{svg,html}`, `index-<system>.html` (see `write_index`: it
    links every page of the folder, also those of earlier runs) and `index.html`, the top page
    linking every system's index.
    Order: the player pages, then list by list its files and its tournaments' reports, then the
    index. `on_list(date)` is called once a list's files and reports are written (the last list
    only after the index), so a caller can record how far an interrupted publish got.
    Every file is written atomically (`elopipe.publish.atomic`), and only when its content
    changed (`elopipe.publish.manifest`): an unchanged file keeps its inode and time. A page
    (a report, a player page, a list's files) whose stored inputs have the digest the folder's
    manifest recorded for it (`elopipe.publish.inputs`), its files untouched, is not made again.
    `workers`: threads (`elopipe.publish.workers`; None: one per core, 1: serial); the files are
    the same whatever their number. `progress(done, total)` is called now and then with the
    pages, lists and reports done and to do (`workers.Ticker`). `sole_store` (True: no other
    store has published into the folder, `plan.sole_store`): the reports and player pages the manifest
    records whose event or player the store no longer holds are removed first (`Manifest.retire`),
    so that the index stops counting them, and a page made under a new name loses its old files;
    otherwise no file is removed (another store's pages share these ids). So are the files of the
    lists the folder holds and the store no longer does (`elopipe.publish.gone`), which are
    only named when the folder is shared.
    Returns every path written or found unchanged. Raises LookupError when the system has no
    list; OSError when a file cannot be written (the files written so far stay).
    """
    out = Path(out_dir)
    dates = sorted(set(list_dates)) if list_dates is not None else _latest(con, system)
    if not dates:
        raise LookupError(f"no rating list for system {system!r} in the store")
    top = top_players(con, system, dates)
    by_list = tournaments_by_list(con, system, dates)
    reports: dict[dt.date, list[int]] = {d: [] for d in dates}
    seen: set[int] = set()
    for d in dates:  # a tournament rated on two of the lists is reported once, with the first
        for tid in by_list.get(d, []):
            if tid not in seen:
                reports[d].append(tid)
                seen.add(tid)

    paths: list[Path] = []
    links: dict[int, str] = {}
    n = default_workers() if workers is None else workers
    # progress from the first query on: the digests and the manifest of a federation's folder take
    # seconds, and a log must not go quiet (the reports of earlier publishes are counted once known)
    with Ticker(len(top) + len(dates) + len(seen), progress) as ticker, recording(out) as manifest:
        manifest.removes = sole_store
        if sole_store:
            retire_gone_pages(con, manifest, system)
        # lists the rating removed (`elopipe.publish.gone`): named even in a shared folder
        retire_gone_lists(con, manifest, system)
        # player pages an earlier publish made here, of players not at the top of these lists: a
        # full publish of the folder's lists links them (they were at the top of another), so
        # these lists link them too, and they are made again when what they show changed
        others = earlier_players(manifest, system, set(top))
        player_keys = player_digests(con, system, top + others, PLAYER_CHART)
        others = [pid for pid in others if pid in player_keys]  # still in the store
        linked = {  # unchanged: linked, not made
            pid for pid in others if manifest.fresh(f"player:{system}:{pid}", player_keys[pid], count=False)
        }
        others = [pid for pid in others if pid not in linked]
        ticker.total += len(others)
        with Workers(con, n) as pool:
            # reports an earlier publish left in this folder, of tournaments no list here rates: a
            # new file can change what they show (a player's title, federation or name)
            earlier = earlier_reports(con, manifest, system, seen)
            report_keys = report_digests(con, system, sorted(seen | set(earlier)))
            # only those whose inputs changed are made and named among the paths: the others are
            # no part of this publish
            earlier = [
                t for t in earlier if t in report_keys and not manifest.is_fresh(f"report:{system}:{t}", report_keys[t])
            ]

            ticker.total += len(earlier)

            def page(kind: str, key: object, digest: str | None, fn: Callable[..., list[Path]], *args: object) -> Job:
                return _page(pool, manifest, f"{kind}:{system}:{key}", digest, fn, *args)

            hrefs_before = _recorded_hrefs(manifest, system, [*top, *others, *linked])
            pages = [
                page("player", pid, player_keys.get(pid), _player_page, pid, system, out / "players" / system)
                for pid in top + others
            ]
            # the reports to make, their stored rows read set-wise while the player pages are drawn
            kept = {t: manifest.fresh(f"report:{system}:{t}", report_keys[t]) for t in seen if t in report_keys}
            rows = _report_rows(con, system, [t for t in sorted(seen) if kept.get(t) is None] + earlier)

            def report(tid: int) -> Job:
                key, folder = f"report:{system}:{tid}", out / "reports" / system
                paths = kept.get(tid)
                if paths is not None:
                    return _done(paths)
                digest = report_keys.get(tid)
                return _made(pool, manifest, key, digest, write_report, tid, system, folder, rows.get(tid))

            for pid, job in zip(top + others, pages, strict=True):
                written = job.result()
                ticker.advance()
                paths.extend(written)
                html = next(p for p in written if p.suffix == ".html")
                links[pid] = f"../players/{system}/{html.name}"
            links.update((pid, hrefs_before[pid]) for pid in linked if pid in hrefs_before)
            links = dict(sorted(links.items()))
            # lists published here before that show a player whose page is new or renamed: a
            # publish of all the folder's lists links it, whatever order they came in
            moved = sorted(pid for pid, href in links.items() if hrefs_before.get(pid) != href)
            relink = _lists_showing(con, manifest, system, set(dates), moved)
            ticker.total += len(relink)
            list_keys = list_digests(con, system, dates + relink, links)

            def list_page(d: dt.date) -> Job:
                return page("list", d, list_keys.get(d), write_list, system, d, out / "lists", LIST_FORMATS, links)

            relinked = [list_page(d) for d in relink]
            jobs = [(d, list_page(d), [report(tid) for tid in reports[d]]) for d in dates]
            for d, files, reported in jobs:
                for job in (files, *reported):
                    paths.extend(job.result())
                    ticker.advance()
                if d == dates[-1]:
                    for job in relinked:
                        paths.extend(job.result())
                        ticker.advance()
                    for job in [report(tid) for tid in earlier]:
                        paths.extend(job.result())
                        ticker.advance()
                    index = write_index(con, system, out)
                    paths.extend([index, out / TOP_INDEX])  # write_index rewrites the top page too
                if on_list is not None:
                    on_list(d)
    return paths


Job = cf.Future[list[Path]]


def _player_page(con: duckdb.DuckDBPyConnection, player_id: int, system: str, folder: Path) -> list[Path]:
    return write_player_page(con, player_id, system, folder, chart_format=PLAYER_CHART)


def _recorded_hrefs(manifest: Manifest, system: str, pids: list[int]) -> dict[int, str]:
    """{player_id: href from `lists/`} of the pages of `pids` as the manifest records them now."""
    hrefs = {}
    for pid in pids:
        entry = manifest.inputs.get(f"player:{system}:{pid}")
        for rel in entry[1] if entry else []:
            if rel.endswith(".html"):
                hrefs[pid] = f"../players/{system}/{Path(rel).name}"
    return hrefs


def _lists_showing(
    con: duckdb.DuckDBPyConnection, manifest: Manifest, system: str, skip: set[dt.date], pids: list[int]
) -> list[dt.date]:
    """The dates, outside `skip`, of the `system` lists the manifest records whose rows hold one
    of `pids`, ascending: one query on those players' rows only."""
    prefix = f"list:{system}:"
    recorded = set()
    for key in manifest.inputs:
        if key.startswith(prefix):
            try:
                recorded.add(dt.date.fromisoformat(key[len(prefix) :]))
            except ValueError:
                continue  # a key edited by hand
    recorded -= skip
    if not pids or not recorded:
        return []
    rows = con.execute(
        "SELECT DISTINCT list_date FROM rating_lists WHERE system = ? AND player_id IN (SELECT unnest(?::INTEGER[]))"
        " AND list_date IN (SELECT unnest(?::DATE[])) ORDER BY list_date",
        [system, pids, sorted(recorded)],
    ).fetchall()
    return [r[0] for r in rows]


# what keeps a page: a report, its tournament rated under the system (a tournament the store
# still holds may be rated no more: its games now count under the same event from another
# source); a player page, the player
_HELD = {
    "report": "SELECT DISTINCT tournament_id FROM tournament_ratings WHERE system = $system"
    " AND tournament_id IN (SELECT unnest($ids::BIGINT[]))",
    "player": "SELECT player_id FROM players WHERE player_id IN (SELECT unnest($ids::BIGINT[]))",
}


def retire_gone_pages(con: duckdb.DuckDBPyConnection, manifest: Manifest, system: str) -> None:
    """Retire (`Manifest.retire`) the `system` reports and player pages the manifest records
    whose tournament is rated no more under `system` (a correction replaced the event, or its
    games count under the same event read from another file) or whose player the store no
    longer holds (merged into another): one query per kind, on the recorded ids only."""
    for kind, sql in _HELD.items():
        ids = recorded_ids(manifest, kind, system)
        if not ids:
            continue
        params = {"ids": sorted(ids), **({"system": system} if "$system" in sql else {})}
        held = con.execute(sql, params).fetchall()
        for gone in sorted(ids - {int(r[0]) for r in held}):
            manifest.retire(f"{kind}:{system}:{gone}")


def earlier_players(manifest: Manifest, system: str, top: set[int]) -> list[int]:
    """The players, outside `top`, whose `system` page the folder's manifest records, ascending."""
    return sorted(recorded_ids(manifest, "player", system) - top)


def earlier_reports(con: duckdb.DuckDBPyConnection, manifest: Manifest, system: str, seen: set[int]) -> list[int]:
    """The tournaments, outside `seen`, whose `system` report the folder's manifest records and
    which are still rated under `system` (`tournament_ratings`), ascending: the caller makes
    again those whose stored inputs changed."""
    ids = recorded_ids(manifest, "report", system) - seen
    if not ids:
        return []
    rows = con.execute(
        "SELECT DISTINCT tournament_id FROM tournament_ratings WHERE system = ? AND tournament_id IN"
        " (SELECT unnest(?::INTEGER[])) ORDER BY tournament_id",
        [system, sorted(ids)],
    ).fetchall()
    return [int(r[0]) for r in rows]


def _page(
    pool: Workers, manifest: Manifest, key: str, digest: str | None, fn: Callable[..., list[Path]], *args: object
) -> Job:
    """The files of page `key`: those the manifest holds when they were made from inputs of
    `digest` (`Manifest.fresh`: nothing is made), else `fn(cursor, *args)` on a worker, recorded
    with `digest` once made."""
    if digest is not None:
        paths = manifest.fresh(key, digest)
        if paths is not None:
            return _done(paths)
    return _made(pool, manifest, key, digest, fn, *args)


def _done(paths: list[Path]) -> Job:
    done: Job = cf.Future()
    done.set_result(paths)
    return done


def _made(
    pool: Workers, manifest: Manifest, key: str, digest: str | None, fn: Callable[..., list[Path]], *args: object
) -> Job:
    """`fn(cursor, *args)` on a worker, its files recorded as page `key`'s with `digest` once made."""
    job = pool.submit(fn, *args)
    if digest is not None:

        def record(j: Job) -> None:
            # a job cancelled by Ctrl-C made nothing (and `exception()` would raise)
            if not j.cancelled() and j.exception() is None:
                manifest.made(key, digest, j.result())

        job.add_done_callback(record)
    return job


# reports whose stored rows are read in one go: a federation's month (some 750 events) in two
REPORT_ROWS_CHUNK = 500


def _report_rows(con: duckdb.DuckDBPyConnection, system: str, tids: list[int]) -> dict[int, ReportRows]:
    """{tournament_id: the `ReportRows` holding its report's rows} for `tids`, read set-wise
    (`report_rows`) in chunks of `REPORT_ROWS_CHUNK`."""
    out: dict[int, ReportRows] = {}
    for i in range(0, len(tids), REPORT_ROWS_CHUNK):
        chunk = tids[i : i + REPORT_ROWS_CHUNK]
        rows = fetch_report_rows(con, system, chunk)
        out.update(dict.fromkeys(chunk, rows))
    return out


_PLAYER_PAGE = re.compile(r"^(\d+)_.+\.html$")


def player_page_links(out_dir: Path, system: str) -> dict[int, str]:
    """{player_id: href from `out_dir/lists`} of the player pages (`<id>_<name>.html`, not the
    `-vs-` comparisons) that a publish wrote in `out_dir/players/<system>/`: a list page written
    without `publish_outputs` (a plain `publish`) links them as the full publish did."""
    folder = out_dir / "players" / system
    if not folder.is_dir():
        return {}
    return {
        int(m.group(1)): f"../players/{system}/{f.name}"
        for f in sorted(folder.glob("*.html"))
        if (m := _PLAYER_PAGE.match(f.name)) and "-vs-" not in f.name
    }


def top_players(con: duckdb.DuckDBPyConnection, system: str, dates: list[dt.date]) -> list[int]:
    """The player_ids of the `TOP_PLAYERS` best ranked of each list of `system` at `dates`, in
    one query: list by list, by rank, equal ranks by name and player_id (a list's own order,
    `lists.rating_list`); each player once, where first met."""
    rows = con.execute(
        """
        SELECT list_date, player_id FROM v_rating_lists
        WHERE system = ? AND list_date IN (SELECT UNNEST(?::DATE[])) AND rank IS NOT NULL
        QUALIFY row_number() OVER (PARTITION BY list_date ORDER BY rank, rating DESC, name, player_id) <= ?
        ORDER BY list_date, rank, rating DESC, name, player_id
        """,
        [system, dates, TOP_PLAYERS],
    ).fetchall()
    return list(dict.fromkeys(int(r[1]) for r in rows))


def output_folders(out_dir: Path, system: str) -> list[Path]:
    """The folders `publish_outputs` writes `system`'s files into."""
    return [out_dir, out_dir / "lists", out_dir / "reports" / system, out_dir / "players" / system]


def _latest(con: duckdb.DuckDBPyConnection, system: str) -> list[dt.date]:
    dates = list_dates(con, system)
    return dates[-1:]


__all__ = [
    "LIST_FORMATS",
    "list_stem",
    "player_page_links",
    "publish_outputs",
    "top_players",
    "write_index",
    "write_list",
]
