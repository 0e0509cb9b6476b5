"""Frames between DuckDB and Polars: lent to DuckDB's SQL for one statement or a few
(`registered`), and a query's rows read into a Polars frame (`to_polars`).

Both go through the Arrow PyCapsule interface (``__arrow_c_stream__``), not through pyarrow:
DuckDB's ``register`` of a Polars frame and its ``.pl()`` import pyarrow and NumPy, about
0.1 CPU-s of every `elopipe` process that reads or writes the store (issue 27).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from typing import Any

import duckdb
import polars as pl


class _Stream:
    """`frame` seen by DuckDB only as an Arrow stream: a new stream each time a statement scans it
    (a PyCapsule itself can be read once)."""

    def __init__(self, frame: Any) -> None:
        self._frame = frame

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> Any:
        return self._frame.__arrow_c_stream__(requested_schema)


def _streamable(schema: pl.Schema) -> bool:
    """Whether DuckDB reads every column of `schema` from Polars' Arrow stream: not a column of
    Polars' Null type, alone or nested (DuckDB refuses its array, which has nulls but no validity
    buffer); such a frame goes through pyarrow."""

    def plain(dtype: Any) -> bool:
        if isinstance(dtype, pl.Null):
            return False
        if isinstance(dtype, pl.List | pl.Array):
            return plain(dtype.inner)
        if isinstance(dtype, pl.Struct):
            return all(plain(f.dtype) for f in dtype.fields)
        return True

    return all(plain(d) for d in schema.dtypes())


def to_polars(rel: duckdb.DuckDBPyRelation) -> pl.DataFrame:
    """The rows of `rel` as a Polars DataFrame, the dtypes ``rel.pl()`` gives (DuckDB's Arrow
    types), read through the Arrow stream without pyarrow."""
    return pl.DataFrame(rel)


@contextlib.contextmanager
def registered(con: duckdb.DuckDBPyConnection, name: str, frame: Any) -> Iterator[None]:
    """`frame` (a Polars DataFrame, an Arrow table or a relation of `con`) readable in SQL as the
    view `name` for the block, then unregistered. When the block fails, its error is the one raised: unregistering in
    the transaction that error aborted fails too (DuckDB: 'Current transaction is aborted'), and
    that second error would hide the first, a Ctrl-C among them (elopipe.store.connect.is_interrupt)."""
    con.register(name, _Stream(frame) if isinstance(frame, pl.DataFrame) and _streamable(frame.schema) else frame)
    try:
        yield
    except BaseException:
        with contextlib.suppress(duckdb.Error):
            con.unregister(name)
        raise
    con.unregister(name)


def id_frame(ids: Iterable[int], column: str = "player_id") -> pl.DataFrame:
    """`ids` as a one-column frame (Int64) to lend to SQL (`registered`) in place of a list
    parameter: DuckDB converts a Python list element by element (a TRF month's 28k player ids:
    15-20 ms a statement), a frame's column at once."""
    return value_frame(ids, column, pl.Int64)


def value_frame(values: Iterable[object], column: str, dtype: pl.DataType | type[pl.DataType]) -> pl.DataFrame:
    """`values` as a one-column frame of `dtype`, lent to SQL in place of a list parameter for the
    reason `id_frame` gives (name keys, national IDs: pl.String)."""
    return pl.DataFrame({column: list(values)}, schema={column: dtype})
