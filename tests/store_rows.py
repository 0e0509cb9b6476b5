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
