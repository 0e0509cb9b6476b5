"""Reading a test's store: one query on a read-only connection, closed at once."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import duckdb


@contextlib.contextmanager
def store_reader(db: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """The store `db` opened read-only for the block, closed at its end (a writer may open it
    next). For several queries: each opening reads the store's catalog again (about 20 ms CPU)."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        yield con
    finally:
        con.close()


def db_rows(db: Path, sql: str, params: list | None = None) -> list[tuple]:
    """The rows of `sql` on the store `db`, opened read-only (a writer may open it next)."""
    with store_reader(db) as con:
        return con.execute(sql, params or []).fetchall()


def system_rows(db: Path, tables: tuple[str, ...], system: str, where: str = "") -> dict[str, list[tuple]]:
    """Every row of `system` in each of `tables` (all their columns but `run_id`), sorted, read
    on one connection; `where`: more conditions (`AND ...`)."""
    out = {}
    with store_reader(db) as con:
        for table in tables:
            cols = [r[0] for r in con.execute(f"DESCRIBE {table}").fetchall() if r[0] != "run_id"]
            sql = f"SELECT {', '.join(cols)} FROM {table} WHERE system = ? {where} ORDER BY ALL"
            out[table] = con.execute(sql, [system]).fetchall()
    return out


def store_tables(db: Path) -> dict[str, list[tuple]]:
    """Every row of every table of the store `db`, by content (ids included), sorted; columns
    of clock time (when a file was ingested, a merge decided, a run started) left out."""
    with store_reader(db) as con:
        tables = [r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() ORDER BY 1").fetchall()]
        out = {}
        for table in tables:
            clock = [
                r[0]
                for r in con.execute(
                    "SELECT column_name FROM information_schema.columns WHERE table_name = ? "
                    "AND data_type LIKE 'TIMESTAMP%'",
                    [table],
                ).fetchall()
            ]
            exclude = f" EXCLUDE ({', '.join(clock)})" if clock else ""
            out[table] = sorted(con.execute(f"SELECT *{exclude} FROM {table}").fetchall(), key=repr)
        return out
