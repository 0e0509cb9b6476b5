"""The rating results in the store: a run's lists, changes and event rows written, its run row.

Every engine (FIDE, FFE, Elo, Glicko-2) writes its results through `write_results`, so the store
contract of `elopipe.store.schema` (``rating_lists``, ``rating_changes``, ``tournament_ratings``,
``rating_discrepancies``, ``ffe_details``, ``rating_period_digests``, ``rating_skips``,
``rate_of_play``, ``rating_runs``) is written in one place; the inputs are read through
`elopipe.rating.store_io`. All take a writer connection (`elopipe.store.connect.open_writer`),
but `load_results`, `event_rows_changed` and `changed_list_dates`, which only read.

* `write_results(con, system, from_list, frames)` — in one transaction, delete every row of
  `system` with ``list_date >= from_list`` from the result tables and insert `frames`
  (a dict table name → frame; columns missing from a frame are stored NULL; extra
  columns raise ValueError).
  With ``lists=``, only the rows of those list dates are replaced, and of the keyed tables only
  the rows that differ (`elopipe.rating.result_rows`).
* `load_results(con, system, table, columns, from_list)` — stored results, to compare.
* `start_run` / `finish_run` — one ``rating_runs`` row per run.
* `save_skips`, `save_rate_of_play`, `replace_discrepancies` — the rows kept per event.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Collection, Mapping
from typing import Any

import duckdb
import polars as pl

from elopipe.rating import result_rows
from elopipe.rating.store_io import query
from elopipe.store import write

RESULT_TABLES = (
    "rating_lists",
    "rating_changes",
    "tournament_ratings",
    "rating_discrepancies",
    "ffe_details",
)

#: The period digest of a list a preview kept although it may be stale (`write_results`): no
#: sha1 of a period's inputs is ever this text.
STALE_DIGEST = "stale: kept by a preview"


def delete_from(
    con: duckdb.DuckDBPyConnection, system: str, from_list: dt.date | None, through: dt.date | None = None
) -> None:
    """Delete every result row of `system` with list_date >= `from_list` (None = all),
    including the period digests; with `through`, only the rows dated on or before it (a
    preview keeps the later lists)."""
    lo = from_list or dt.date.min
    hi = through or dt.date.max
    for table in (*RESULT_TABLES, "rating_period_digests"):
        con.execute(f"DELETE FROM {table} WHERE system = ? AND list_date BETWEEN ? AND ?", [system, lo, hi])


def delete_lists(
    con: duckdb.DuckDBPyConnection,
    system: str,
    lists: Collection[dt.date],
    digest_lists: Collection[dt.date] = (),
    keep: Collection[str] = (),
) -> None:
    """Delete the result rows of `system` dated one of `lists` (but those of the tables in `keep`),
    and the period digests dated one of `lists` or `digest_lists`."""
    dates = sorted(set(lists))
    if dates:
        for table in (t for t in RESULT_TABLES if t not in keep):
            con.execute(
                f"DELETE FROM {table} WHERE system = ? AND list_date IN (SELECT unnest(?::DATE[]))",
                [system, dates],
            )
    dg = sorted(set(lists) | set(digest_lists))
    if dg:
        con.execute(
            "DELETE FROM rating_period_digests WHERE system = ? AND list_date IN (SELECT unnest(?::DATE[]))",
            [system, dg],
        )


def load_results(
    con: duckdb.DuckDBPyConnection, system: str, table: str, columns: Collection[str], from_list: dt.date
) -> pl.DataFrame:
    """Stored rows of result `table` for `system` with list_date >= `from_list` (the
    named `columns` only).  Raises ValueError for a table not in `RESULT_TABLES`."""
    if table not in RESULT_TABLES:
        raise ValueError(f"not a result table: {table}")
    cols = ", ".join(columns)
    return query(con, f"SELECT {cols} FROM {table} WHERE system = ? AND list_date >= ?", [system, from_list])


def write_results(
    con: duckdb.DuckDBPyConnection,
    system: str,
    from_list: dt.date | None,
    frames: Mapping[str, pl.DataFrame],
    *,
    digests: Mapping[dt.date, str] | None = None,
    run_id: int | None = None,
    replace_all: Collection[str] = (),
    lists: Collection[dt.date] | None = None,
    through: dt.date | None = None,
    stale: Collection[dt.date] = (),
    staged: Mapping[str, result_rows.Staged] | None = None,
) -> None:
    """Replace `system`'s results from `from_list` on, in one transaction.

    `frames` maps a result table (one of `RESULT_TABLES`) to the rows to insert; the
    ``system`` column is filled in when absent.  Rows already stored before `from_list`
    are kept, except in the tables named in `replace_all`, whose rows of `system` are all
    replaced (e.g. ``rating_discrepancies``, dated by the list in force at an event's start,
    which can precede the list the event is rated on).
    `lists`: when given, only the rows dated one of these lists are replaced (`from_list`
    is then ignored; in the tables of `result_rows.KEYS` only the rows that differ are written);
    the digests of `digests` replace the stored ones of their dates.
    `digests` ({list_date: digest}) are stored in ``rating_period_digests``.
    `through` (a preview, ``rate --through``): rows dated after it are kept, in every table
    (`replace_all` included). `stale`: list dates whose rows are kept but whose period digests
    become `STALE_DIGEST`, so that the next run without `through` recomputes them, and removes
    those no game is rated on any more (`elopipe.rating.fide.run`).
    `staged`: tables of `result_rows.KEYS` whose rows were already compared with the stored ones
    (`result_rows.stage`, their changed groups all dated one of `lists`): those groups are written,
    the `frames` of these tables are not compared again.
    Raises ValueError for an unknown table or column; the transaction is rolled back on
    any error.
    """
    unknown = set(frames) - set(RESULT_TABLES)
    if unknown:
        raise ValueError(f"not a result table: {sorted(unknown)}")
    with write.transaction(con):
        by_rows = set(frames) & set(result_rows.KEYS) if lists is not None else set()
        if lists is None:
            delete_from(con, system, from_list, through)
        else:
            delete_lists(con, system, lists, digest_lists=[*(digests or ()), *stale], keep=by_rows)
        for table in replace_all:
            if table not in RESULT_TABLES:
                raise ValueError(f"not a result table: {table}")
            con.execute(f"DELETE FROM {table} WHERE system = ? AND list_date <= ?", [system, through or dt.date.max])
        for table, df in frames.items():
            if table in by_rows and staged is not None and table in staged:
                staged[table].apply()
            elif table in by_rows:  # only the rows that differ: a new event rewrites its own rows, not its list
                result_rows.replace_changed(con, system, table, df, lists or ())
            else:
                write.insert(con, table, df, constants={} if "system" in df.columns else {"system": system})
        # a kept list of a preview keeps a digest no period's inputs give: the next full run
        # compares it, rewrites it, or removes it when no game is rated on it any more (without a
        # digest it was no stored list to that run, and stayed for ever)
        marked = {**{d: STALE_DIGEST for d in stale}, **(digests or {})}
        if marked:
            dg = pl.DataFrame(
                {
                    "list_date": list(marked),
                    "digest": list(marked.values()),
                },
                schema={"list_date": pl.Date, "digest": pl.Utf8},
            )
            write.insert(con, "rating_period_digests", dg, constants={"system": system, "run_id": run_id})


def start_run(
    con: duckdb.DuckDBPyConnection,
    system: str,
    *,
    rules_forced: str | None = None,
    params: Mapping[str, Any] | None = None,
) -> int:
    """Insert a ``rating_runs`` row and return its run_id."""
    run_id = con.execute("SELECT nextval('run_id_seq')").fetchall()[0][0]
    con.execute(
        "INSERT INTO rating_runs (run_id, system, started_at, rules_forced, params) VALUES (?, ?, ?, ?, ?)",
        [
            run_id,
            system,
            dt.datetime.now(dt.UTC).replace(tzinfo=None),
            rules_forced,
            json.dumps(dict(params or {}), default=str, sort_keys=True),
        ],
    )
    return int(run_id)


def finish_run(
    con: duckdb.DuckDBPyConnection,
    run_id: int,
    *,
    first_list: dt.date | None,
    last_list: dt.date | None,
    games_hash: str | None = None,
) -> None:
    """Record the lists a run (re)computed (both None when nothing changed)."""
    con.execute(
        "UPDATE rating_runs SET first_list = ?, last_list = ?, games_hash = ? WHERE run_id = ?",
        [first_list, last_list, games_hash, run_id],
    )


def save_skips(
    con: duckdb.DuckDBPyConnection,
    system: str,
    skips: pl.DataFrame,
    run_id: int | None,
    keep: Collection[int] | None = None,
) -> None:
    """Replace `system`'s ``rating_skips`` with `skips` (tournament_id, reason, n_games); `keep`:
    the events whose stored rows stay (a run resumed from a checkpoint: the events of the periods
    before it), every other row is replaced."""
    rows = skips.select("tournament_id", "reason", "n_games")
    _replace_events(con, "rating_skips", system, rows, run_id, keep)


def _replace_events(
    con: duckdb.DuckDBPyConnection,
    table: str,
    system: str,
    rows: pl.DataFrame,
    run_id: int | None,
    keep: Collection[int] | None,
) -> None:
    """`system`'s rows of `table` replaced by `rows`, but those of the events of `keep` (None: none
    kept). `run_id`: the run's (None: `table` has no run_id column)."""
    constants: dict[str, Any] = {"system": system} if run_id is None else {"system": system, "run_id": run_id}
    if keep is None:
        write.replace(con, table, rows, {"system": system}, constants=constants)
        return
    con.execute(
        f"DELETE FROM {table} WHERE system = ? AND tournament_id NOT IN (SELECT unnest(?::BIGINT[]))",
        [system, sorted(keep)],
    )
    write.insert(con, table, rows, constants=constants)


def save_rate_of_play(
    con: duckdb.DuckDBPyConnection,
    system: str,
    rows: pl.DataFrame | None,
    run_id: int | None,
    keep: Collection[int] | None = None,
) -> None:
    """Replace `system`'s ``rate_of_play`` with `rows` (tournament_id, rate_class, source,
    evidence, n_games: `fide.prepare._rate_of_play`); None leaves the table as it is; `keep`: as
    for `save_skips`."""
    if rows is None:
        return
    rows = rows.select("tournament_id", "rate_class", "source", "evidence", "n_games")
    _replace_events(con, "rate_of_play", system, rows, run_id, keep)


def replace_discrepancies(
    con: duckdb.DuckDBPyConnection, system: str, rows: pl.DataFrame, keep: Collection[int]
) -> None:
    """`system`'s ``rating_discrepancies`` replaced by `rows` but those of the events of `keep`
    (dated by the list in force at an event's start, they are kept by event, not by date)."""
    _replace_events(con, "rating_discrepancies", system, rows, None, keep)


def event_rows_changed(
    con: duckdb.DuckDBPyConnection,
    system: str,
    skips: pl.DataFrame,
    rate_of_play: pl.DataFrame | None,
    keep: Collection[int] | None = None,
) -> bool:
    """True when `system`'s stored ``rating_skips`` or ``rate_of_play`` rows differ from these
    (a run that changed no list may still have changed why an event is left out, or what its
    rate of play is: e.g. an event all of whose games left the list); `keep`: events whose stored
    rows are not compared (`save_skips`)."""
    pairs = [("rating_skips", skips, ["tournament_id", "reason", "n_games"])]
    if rate_of_play is not None:
        pairs.append(("rate_of_play", rate_of_play, ["tournament_id", "rate_class", "source", "evidence", "n_games"]))
    for table, new, cols in pairs:
        where = "system = ?"
        params: list[Any] = [system]
        if keep is not None:
            where += " AND tournament_id NOT IN (SELECT unnest(?::BIGINT[]))"
            params.append(sorted(keep))
        old = query(con, f"SELECT {', '.join(cols)} FROM {table} WHERE {where}", params)
        new = new.select(cols)
        if old.height != new.height:
            return True
        old = old.cast(new.schema).sort(cols, nulls_last=True)
        if old.height and not old.equals(new.sort(cols, nulls_last=True)):
            return True
    return False


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
