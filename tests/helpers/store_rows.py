"""Reading a test's store: one query on a read-only connection, closed at once."""

from __future__ import annotations

from pathlib import Path

import duckdb


def db_rows(db: Path, sql: str, params: list | None = None) -> list[tuple]:
    """The rows of `sql` on the store `db`, opened read-only (a writer may open it next)."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql, params or []).fetchall()
    finally:
        con.close()


def store_tables(db: Path) -> dict[str, list[tuple]]:
    """Every row of every table of the store `db`, by content (ids included), sorted; columns
    of clock time (when a file was ingested, a merge decided, a run started) left out."""
    con = duckdb.connect(str(db), read_only=True)
    try:
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
    finally:
        con.close()
