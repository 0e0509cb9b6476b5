"""`v_rating_lists`: ranks, and the rank among active players FIDE's top lists use."""

import datetime as dt

import duckdb

from elopipe.store.schema import ensure_schema


def test_active_rank_skips_inactive_players() -> None:
    con = duckdb.connect()
    ensure_schema(con)
    d = dt.date(2025, 10, 1)
    rows = [
        (1, "Alpha, A", 2800, "i"),
        (2, "Beta, B", 2750, None),
        (3, "Gamma, G", 2750, "new"),
        (4, "Delta", 2700, ""),
    ]
    for pid, name, rating, flags in rows:
        con.execute("INSERT INTO players (player_id, name, name_key) VALUES (?, ?, ?)", [pid, name, name.lower()])
        con.execute(
            "INSERT INTO rating_lists (system, list_date, player_id, rating, games, k, change, flags, source)"
            " VALUES ('fide', ?, ?, ?, 0, 20, 0, ?, 'computed')",
            [d, pid, rating, flags],
        )
    got = con.execute("SELECT name, rank, active_rank, fide_flag FROM v_rating_list ORDER BY rank, name").fetchall()
    assert got == [
        ("Alpha, A", 1, None, "i"),
        ("Beta, B", 2, 1, ""),
        ("Gamma, G", 2, 1, ""),
        ("Delta", 4, 3, ""),
    ]
