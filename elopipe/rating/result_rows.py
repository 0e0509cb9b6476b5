"""Replace a rating list's stored rows by writing only those that differ (issue 27).

A new event on a list changes the rows of its players and of their games only: rewriting the
list's tens of thousands of rows (and DuckDB's checkpoint of them when the store closes) cost an
incremental rate more than computing it. `replace_changed` writes the new rows into a temporary
table of the same columns (so each value has the type the store gives it), compares them group by
group with the stored rows of the same lists (`KEYS`: a player on a list, a player in an event)
and, in the groups that differ, deletes the stored rows and inserts the new ones. The table then
holds exactly the rows a delete of those lists and an insert of `frame` would leave.

A group is compared by its row count and the sum and XOR of its rows' hashes (DuckDB's `hash`),
as the period digests are (`elopipe.rating.fide.checkpoint`).
"""

from __future__ import annotations

import datetime as dt
import itertools
from collections.abc import Collection
from dataclasses import dataclass

import duckdb
import polars as pl

from elopipe.store import write

KEYS: dict[str, tuple[str, ...]] = {
    "rating_lists": ("list_date", "player_id"),
    "rating_changes": ("list_date", "tournament_id", "player_id"),
    "tournament_ratings": ("list_date", "tournament_id", "player_id"),
}
"""The result tables written row group by row group, and the columns of a group (with ``system``)."""

_names = itertools.count()


def _groups(source: str, key: str, where: str) -> str:
    return (
        f"SELECT {key}, count(*) AS n, sum(hash(x)::HUGEINT) AS s, bit_xor(hash(x)) AS b "
        f"FROM {source} x {where} GROUP BY ALL"
    )


def replace_changed(
    con: duckdb.DuckDBPyConnection,
    system: str,
    table: str,
    frame: pl.DataFrame,
    lists: Collection[dt.date],
    *,
    key: tuple[str, ...] | None = None,
    events: Collection[int] | None = None,
) -> int:
    """Make `system`'s rows of `table` (one of `KEYS`) dated one of `lists` those of `frame`
    (rows dated one of `lists`; its columns, any subset of the table's, by name; ``system`` is
    filled in when absent), writing only the groups that differ. Runs in the caller's
    transaction (its temporary tables go with a rollback). Returns the number of groups rewritten.
    `key`: the columns of a group, for another table (`KEYS`' by default); `events`: only the
    stored rows of these tournaments are compared and replaced (None: every one of `lists`).
    Raises KeyError for a table not in `KEYS` without a `key`; `write.StoreWriteError` for a
    column the table does not have."""
    return stage(con, system, table, frame, lists, key=key, events=events).apply()


@dataclass
class Staged:
    """The groups of `table` that differ between a frame and the stored rows (`stage`), not yet
    written: `dates`, the list dates of those groups; `groups`, how many. `apply` writes them."""

    con: duckdb.DuckDBPyConnection
    system: str
    table: str
    cols: tuple[str, ...]
    dates: set[dt.date]
    groups: int
    frame: pl.DataFrame | None = None  # nothing stored: the rows go in as they are
    new: str = ""  # else the temporary tables of the new rows and of the changed groups
    changed: str = ""

    def apply(self) -> int:
        """Delete the stored rows of the changed groups and insert the new ones; returns `groups`."""
        con, table = self.con, self.table
        if self.frame is not None:
            constants = {} if "system" in self.frame.columns else {"system": self.system}
            lacking = [c for c in write.table_columns(con, table) if c not in self.frame.columns and c not in constants]
            write.insert(con, table, self.frame, exprs=dict.fromkeys(lacking, "NULL"), constants=constants)
            return self.groups
        on = " AND ".join(f"t.{c} = c.{c}" for c in self.cols)
        con.execute(
            f"DELETE FROM {table} t USING {self.changed} c WHERE t.system = $system AND {on}", {"system": self.system}
        )
        con.execute(
            f"INSERT INTO {table} BY NAME SELECT n.* FROM {self.new} n SEMI JOIN {self.changed} c "
            f"USING ({', '.join(self.cols)})"
        )
        # on an error the caller's rollback drops them with the rest
        con.execute(f"DROP TABLE {self.changed}")
        con.execute(f"DROP TABLE {self.new}")
        return self.groups


def stage(
    con: duckdb.DuckDBPyConnection,
    system: str,
    table: str,
    frame: pl.DataFrame,
    lists: Collection[dt.date],
    *,
    key: tuple[str, ...] | None = None,
    events: Collection[int] | None = None,
) -> Staged:
    """Compare `frame` with `system`'s stored rows of `table` as `replace_changed` does (same
    arguments), writing nothing but its temporary tables: the caller learns which lists differ
    (`Staged.dates`) before `Staged.apply` writes them, so a list is compared once (issue 27).
    Runs in the caller's transaction; every `Staged` must be applied before it commits."""
    cols = KEYS[table] if key is None else key
    key_sql = ", ".join(cols)
    dates = sorted(set(lists))
    constants = {} if "system" in frame.columns else {"system": system}
    if not _stored_any(con, system, table, dates):
        # nothing stored on these lists (a run from scratch): every group differs, and the rows go
        # in as the comparison below would insert them (a column the frame lacks is NULL, not its
        # default) without a temporary copy of the frame
        groups = frame.select(cols).n_unique() if frame.height else 0
        found = set(frame.get_column("list_date").unique().to_list()) if frame.height else set()
        return Staged(con, system, table, cols, found, groups, frame=frame)
    new = f"__elopipe_new_{table}_{next(_names)}"
    # same columns and types as the table, so that a new row and its stored twin hash alike
    con.execute(f"CREATE TEMP TABLE {new} AS FROM {table} LIMIT 0")
    write.insert(con, new, frame, constants=constants)
    stored = "WHERE system = $system AND list_date IN (SELECT unnest($dates::DATE[]))"
    params: dict[str, object] = {"system": system, "dates": dates}
    if events is not None:
        stored += " AND tournament_id IN (SELECT unnest($events::INTEGER[]))"
        params["events"] = sorted(set(events))
    diff = (
        f"SELECT {key_sql} FROM ({_groups(new, key_sql, '')}) a FULL JOIN ({_groups(table, key_sql, stored)}) b "
        f"USING ({key_sql}) WHERE a.n IS DISTINCT FROM b.n OR a.s IS DISTINCT FROM b.s OR a.b IS DISTINCT FROM b.b"
    )
    changed = f"__elopipe_changed_{table}_{next(_names)}"
    con.execute(f"CREATE TEMP TABLE {changed} AS {diff}", params)
    rows = con.execute(f"SELECT list_date, count(*) FROM {changed} GROUP BY 1").fetchall()
    groups = sum(int(n) for _, n in rows)
    return Staged(con, system, table, cols, {d for d, _ in rows}, groups, new=new, changed=changed)


def _stored_any(con: duckdb.DuckDBPyConnection, system: str, table: str, dates: list[dt.date]) -> bool:
    """Whether `table` holds a row of `system` dated one of `dates`."""
    sql = f"SELECT 1 FROM {table} WHERE system = ? AND list_date IN (SELECT unnest(?::DATE[])) LIMIT 1"
    return bool(con.execute(sql, [system, dates]).fetchall())
