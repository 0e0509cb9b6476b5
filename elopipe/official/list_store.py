"""Storing a list as read (`list_base.ListRead`) in `official_lists` and `list_import_skips`, in
one transaction: each row is linked to the store's player by FIDE ID, else by national ID (FFE
licence), and a player is created for a person the store lacks; the list's rows for its
(system, list_date) and the file's skipped rows for its list date replace those of an earlier
import. Set operations in DuckDB: no loop over rows."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

import duckdb
import polars as pl

from elopipe.identity.decisions import refresh_display_names
from elopipe.identity.facts import refresh_player_facts
from elopipe.official.list_base import ListRead, register
from elopipe.read.names import name_key_sql
from elopipe.store import write


@dataclass
class StoredList:
    """What storing one list wrote: `rows` maps system -> rows written to `official_lists`;
    `players_linked` players of the store the list's rows found, `players_created` players it added."""

    rows: dict[str, int]
    players_linked: int
    players_created: int
    # system -> (rows, source file) of the list of that date an earlier import stored, which
    # this one replaced
    replaced: dict[str, tuple[int, str]] = field(default_factory=dict)


def store_list(con: duckdb.DuckDBPyConnection, read: ListRead, source: str) -> StoredList:
    """Store `read` (the file `source`) in one transaction of the caller's connection; on any error
    it is rolled back and the error raised."""
    con.execute("BEGIN TRANSACTION")
    try:
        stored = _store(con, read.rel, read.list_date, source)
        _store_skips(con, read.skips, read.list_date, source)
        con.execute("COMMIT")
    except Exception:
        con.execute("ROLLBACK")
        raise
    return stored


def _store(con: duckdb.DuckDBPyConnection, rel: duckdb.DuckDBPyRelation, when: dt.date, source: str) -> StoredList:
    """The list's rows (`official_lists` columns less list_date, player_id, source_file) linked to
    the store's players, new players added, and the rows stored for (system, `when`)."""
    con.execute("DROP TABLE IF EXISTS _ol_new")
    register(con, "_ol_rel", rel)
    # link by FIDE ID, else by national ID (merged players resolve to the player kept)
    con.execute(
        """
        CREATE TEMP TABLE _ol_new AS
        SELECT r.*, CAST(COALESCE(pf.pid, pn.pid) AS INTEGER) AS player_id,
               COALESCE(CAST(r.fide_id AS VARCHAR), 'L' || r.national_id) AS person
        FROM _ol_rel r
        LEFT JOIN (SELECT fide_id, min(COALESCE(merged_into, player_id)) AS pid FROM players
                   WHERE fide_id IS NOT NULL GROUP BY fide_id) pf ON pf.fide_id = r.fide_id
        LEFT JOIN (SELECT national_id, min(COALESCE(merged_into, player_id)) AS pid FROM players
                   WHERE national_id IS NOT NULL GROUP BY national_id) pn
               ON pf.pid IS NULL AND pn.national_id = r.national_id
        WHERE r.fide_id IS NOT NULL OR r.national_id IS NOT NULL
        """
    )
    con.unregister("_ol_rel")
    count_linked = "SELECT count(DISTINCT player_id) FROM _ol_new WHERE player_id IS NOT NULL"
    linked_count = con.execute(count_linked).fetchall()[0][0]
    # one new player per person absent from the store (the person key: FIDE ID, else licence)
    con.execute("DROP TABLE IF EXISTS _ol_people")
    con.execute(
        """
        CREATE TEMP TABLE _ol_people AS
        SELECT CAST(nextval('player_id_seq') AS INTEGER) AS player_id, * FROM (
            SELECT person, any_value(fide_id) AS fide_id, any_value(national_id) AS national_id,
                   any_value(name) AS name, any_value(federation) AS federation, any_value(sex) AS sex,
                   any_value(birth_year) AS birth_year, any_value(title) AS title
            FROM _ol_new WHERE player_id IS NULL GROUP BY 1 ORDER BY 1)
        """
    )
    created = con.execute("SELECT count(*) FROM _ol_people").fetchall()[0][0]
    key = name_key_sql("COALESCE(name, '?')")
    people = con.sql(
        f"SELECT player_id, fide_id, national_id, COALESCE(name, '?') AS name, {key} AS name_key, federation, sex,"
        f" birth_year, title FROM _ol_people"
    )
    write.insert(con, "players", people)
    # the list is the official record of birth year, federation, sex and identifiers where a
    # linked player had none (only the few players that lack something are touched)
    con.execute(
        """
        UPDATE players SET birth_year = COALESCE(players.birth_year, s.birth_year),
                           federation = COALESCE(players.federation, s.federation),
                           sex = COALESCE(players.sex, s.sex),
                           fide_id = COALESCE(players.fide_id, s.fide_id),
                           national_id = COALESCE(players.national_id, s.national_id)
        FROM (SELECT o.player_id, any_value(o.birth_year) AS birth_year, any_value(o.federation) AS federation,
                     any_value(o.sex) AS sex, any_value(o.fide_id) AS fide_id, any_value(o.national_id) AS national_id
              FROM _ol_new o JOIN players p ON p.player_id = o.player_id
              WHERE (p.birth_year IS NULL AND o.birth_year IS NOT NULL)
                 OR (p.federation IS NULL AND o.federation IS NOT NULL)
                 OR (p.sex IS NULL AND o.sex IS NOT NULL)
                 OR (p.fide_id IS NULL AND o.fide_id IS NOT NULL)
                 OR (p.national_id IS NULL AND o.national_id IS NOT NULL)
              GROUP BY o.player_id) s
        WHERE s.player_id = players.player_id
        """
    )
    systems = [r[0] for r in con.execute("SELECT DISTINCT system FROM _ol_new ORDER BY 1").fetchall()]
    replaced_names = [
        r[0]
        for r in con.execute(
            "SELECT DISTINCT o.player_id FROM official_lists o JOIN players p ON p.player_id = o.player_id"
            " WHERE o.list_date = ? AND o.system IN (SELECT UNNEST(?)) AND o.name = p.name",
            [when, systems],
        ).fetchall()
    ]
    new_rows = con.sql(
        "SELECT o.system, o.fide_id, o.national_id, o.name, o.federation, o.sex, o.title, o.w_title, o.o_title,"
        " o.foa_title, o.rating, o.rating_flag, o.games, o.k, o.birth_year, o.flag,"
        " COALESCE(o.player_id, n.player_id) AS player_id, o.ever_2400, o.category"
        " FROM _ol_new o LEFT JOIN _ol_people n ON o.player_id IS NULL AND n.person = o.person"
    )
    before = con.execute(
        "SELECT system, count(*), min(source_file) FROM official_lists"
        " WHERE list_date = ? AND system IN (SELECT UNNEST(?)) GROUP BY system",
        [when, systems],
    ).fetchall()
    write.replace(
        con,
        "official_lists",
        new_rows,
        {"list_date": when, "system": systems},
        constants={"list_date": when, "source_file": source},
    )
    # the official spelling becomes the name shown for the store's players on this list (only
    # a spelling other than the name shown can change it: a monthly list touches few players),
    # and a name only the replaced list gave is no longer shown
    linked = con.execute(
        "SELECT DISTINCT o.player_id FROM _ol_new o JOIN players p ON p.player_id = o.player_id"
        " WHERE o.name IS DISTINCT FROM p.name"
    ).fetchall()
    refresh_display_names(con, [r[0] for r in linked] + replaced_names)
    # a fact the player's entries do not give (a title won since) comes from the latest list; only
    # players with entries can differ from the row this import wrote (identity.facts)
    with_entries = con.execute(
        "SELECT DISTINCT o.player_id FROM _ol_new o JOIN tournament_players tp ON tp.player_id = o.player_id"
    ).fetchall()
    refresh_player_facts(con, [r[0] for r in with_entries] + replaced_names)
    rows = dict(con.execute("SELECT system, count(*) FROM _ol_new GROUP BY 1 ORDER BY 1").fetchall())
    con.execute("DROP TABLE _ol_new")
    con.execute("DROP TABLE _ol_people")
    return StoredList(rows, linked_count, created, {sys_: (int(n), str(src)) for sys_, n, src in before})


def _store_skips(con: duckdb.DuckDBPyConnection, skips: pl.DataFrame, when: dt.date, source: str) -> None:
    """The file's skipped rows replace those of its previous import for the same list date."""
    key = {"source_file": source, "list_date": when}
    write.replace(con, "list_import_skips", skips.select("line", "reason", "detail", "raw"), key, constants=key)
