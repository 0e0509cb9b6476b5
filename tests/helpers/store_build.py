"""A store made from given rows, through the store's own schema (`ensure_schema`) and write API
(`elopipe.store.write.insert`), as the library writes them: a test says which rows it needs, by
column name, and nothing else.

    db = build_store(tmp_path, players=[{"player_id": 1, "name": "Alpha, Ann", "name_key": "alpha ann"}],
                     games=[{"game_id": 1, "tournament_id": 1, ...}])
    add_rows(con, rating_lists=[{"system": "fide", "list_date": dt.date(2024, 2, 1), ...}])

Each table's rows are one list of dicts (a column a row leaves out is NULL, or the schema's
default); the tables are written in the order given, each in one statement.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from elopipe.store import write
from tests.helpers.schema_store import schema_connect

Row = Mapping[str, Any]


def rows_frame(rows: Sequence[Row]) -> pl.DataFrame:
    """`rows` as one frame: every column any row names, NULL where a row leaves it out."""
    columns = list(dict.fromkeys(c for r in rows for c in r))
    return pl.DataFrame([{c: r.get(c) for c in columns} for r in rows], infer_schema_length=None)


def add_rows(con: duckdb.DuckDBPyConnection, **tables: Sequence[Row]) -> None:
    """Insert each table's rows (`table=[{column: value}, ...]`) into the store open on `con`."""
    for table, rows in tables.items():
        if rows:
            write.insert(con, table, rows_frame(rows))


def build_store(directory: Path, name: str = "store.duckdb", **tables: Sequence[Row]) -> Path:
    """A new store file `directory/name` with the schema and the given rows (`add_rows`); its path."""
    db = directory / name
    con = schema_connect(db)
    try:
        add_rows(con, **tables)
    finally:
        con.close()
    return db
