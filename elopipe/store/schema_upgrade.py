"""Upgrading a store made by an older version of elopipe to the schema of `elopipe.store.schema`.

Only ever widening or adding: a DECIMAL column widened, a column added (NULL in the old rows, or
filled once from the rows already stored). Called by `schema.ensure_schema`, which passes its
`TABLES`; never drops a table, a column or a row.
"""

from __future__ import annotations

import duckdb

from elopipe.read.names import event_key
from elopipe.store.frames import registered


def _columns(cols: str) -> list[tuple[str, str]]:
    """(column, type) of a table's column text in `schema.TABLES`, constraints and comments left out."""
    out = []
    for line in cols.strip().splitlines():
        body = line.partition("--")[0].strip().rstrip(",").split()
        if len(body) >= 2 and body[0].upper() != "PRIMARY":
            out.append((body[0], body[1]))
    return out


def _decimal_columns(cols: str) -> dict[str, str]:
    """{column: 'DECIMAL(p,s)'} of a table's column text in `schema.TABLES`."""
    return {col: typ.upper() for col, typ in _columns(cols) if typ.upper().startswith("DECIMAL")}


def widen_decimals(con: duckdb.DuckDBPyConnection, tables: dict[str, str]) -> None:
    """Give the DECIMAL columns of a store made by an older version their current type.

    Widening only (e.g. tournament_ratings.score DECIMAL(5,1) -> DECIMAL(18,1)): every value
    stored fits, and a narrow column would make a rating run fail on a long event.
    """
    rows = con.execute(
        "SELECT table_name, column_name, data_type FROM information_schema.columns "
        "WHERE table_schema = 'main' AND data_type LIKE 'DECIMAL%'"
    ).fetchall()
    have = {(t, c): typ.replace(" ", "") for t, c, typ in rows}
    for table, cols in tables.items():
        for col, typ in _decimal_columns(cols).items():
            if have.get((table, col), typ) != typ:
                con.execute(f"ALTER TABLE {table} ALTER COLUMN {col} SET DATA TYPE {typ}")


def tournament_spans(con: duckdb.DuckDBPyConnection) -> None:
    """Fill `tournaments.event_key`, `first_day` and `last_day` in a store made before they existed
    (the loader writes them for every new tournament). Once per older store."""
    have = {r[0] for r in con.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_schema = 'main' AND table_name = 'tournaments'"
    ).fetchall()}  # fmt: skip
    if "event_key" in have:
        return
    import polars as pl  # only for this one-off migration of an old store

    for col, typ in (("event_key", "VARCHAR"), ("first_day", "DATE"), ("last_day", "DATE")):
        con.execute(f"ALTER TABLE tournaments ADD COLUMN {col} {typ}")
    con.execute(
        """
        UPDATE tournaments SET first_day = COALESCE(t.start_date, g.d0, t.end_date),
                               last_day = COALESCE(t.end_date, g.d1, t.start_date)
        FROM tournaments t
        LEFT JOIN (SELECT tournament_id, min(game_date) AS d0, max(game_date) AS d1 FROM games
                   WHERE game_date IS NOT NULL AND date_precision = 'day' GROUP BY 1) g USING (tournament_id)
        WHERE tournaments.tournament_id = t.tournament_id
        """
    )
    rows = con.execute("SELECT tournament_id, name FROM tournaments").fetchall()
    if rows:
        keys = pl.DataFrame(
            {"tournament_id": [r[0] for r in rows], "event_key": [event_key(r[1]) for r in rows]},
            schema={"tournament_id": pl.Int32, "event_key": pl.Utf8},
        )
        with registered(con, "_event_keys", keys):
            con.execute(
                "UPDATE tournaments SET event_key = k.event_key FROM _event_keys k"
                " WHERE tournaments.tournament_id = k.tournament_id"
            )


def add_columns(con: duckdb.DuckDBPyConnection, tables: dict[str, str]) -> None:
    """Add to a store made by an older version the columns `tables` (`schema.TABLES`) has since gained, NULL in
    its rows (each column's comment says what NULL means there)."""
    rows = con.execute(
        "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'main'"
    ).fetchall()
    have = set(rows)
    for table, cols in tables.items():
        for col, typ in _columns(cols):
            if (table, col) not in have:
                con.execute(f"ALTER TABLE {table} ADD COLUMN {col} {typ}")
