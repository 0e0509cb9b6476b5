"""Run one SQL query on the store, read-only, and format the result (`elopipe sql`).

The database is opened with `elopipe.store.open_reader` (DuckDB `read_only=True`), so a
query never changes the store and works while another process reads it. If DuckDB
refuses to open the file (another process holds its write lock) `StoreBusyError` says so.
"""

from __future__ import annotations

import csv
import datetime as dt
import decimal
import io
import json
import os
from typing import Any

import duckdb

from elopipe.store import open_reader

FORMATS = ("table", "csv", "json")


class QueryError(RuntimeError):
    """DuckDB rejected the query (syntax, unknown table, or a write on a read-only store)."""


def run_query(db: str | os.PathLike[str], query: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Column names and rows of `query` on `db` opened read-only.

    Raises FileNotFoundError (no database), elopipe.store.StoreBusyError (DuckDB refused
    to open it), QueryError (DuckDB rejected the query, with its message).
    """
    con = open_reader(db)
    try:
        try:
            cur = con.execute(query)
        except duckdb.Error as exc:
            msg = str(exc)
            if "read-only" in msg.lower() or "read only" in msg.lower():
                msg += " (elopipe sql opens the store read-only; use the elopipe commands to write)"
            raise QueryError(msg) from exc
        if cur.description is None:
            return [], []
        cols = [d[0] for d in cur.description]
        return cols, cur.fetchall()
    finally:
        con.close()


def _plain(value: Any) -> Any:
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, dt.date | dt.datetime | dt.time):
        return value.isoformat()
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return value


def to_csv(cols: list[str], rows: list[tuple[Any, ...]]) -> str:
    """CSV text with a header line; NULL is an empty field; decimals keep their digits."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(cols)
    for r in rows:
        w.writerow(["" if v is None else _plain(v) for v in r])
    return buf.getvalue()


def to_json(cols: list[str], rows: list[tuple[Any, ...]]) -> str:
    """A JSON array of objects, one per row; decimals as strings (exact), dates ISO 8601."""
    data = [{c: _plain(v) for c, v in zip(cols, r, strict=True)} for r in rows]
    return json.dumps(data, ensure_ascii=False, indent=1)
