"""Frames lent to DuckDB's SQL for one statement or a few (`registered`)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import duckdb


@contextlib.contextmanager
def registered(con: duckdb.DuckDBPyConnection, name: str, frame: Any) -> Iterator[None]:
    """`frame` (a Polars DataFrame or an Arrow table) readable in SQL as the view `name` for the
    block, then unregistered. When the block fails, its error is the one raised: unregistering in
    the transaction that error aborted fails too (DuckDB: 'Current transaction is aborted'), and
    that second error would hide the first, a Ctrl-C among them (elopipe.store.connect.is_interrupt)."""
    con.register(name, frame)
    try:
        yield
    except BaseException:
        with contextlib.suppress(duckdb.Error):
            con.unregister(name)
        raise
    con.unregister(name)
